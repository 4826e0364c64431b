"""Draw docs/review.png: the review page on released YokaiEval rows, in Debian's chromium.

Serves the rows with the articles rebuilt from the release (scripts/released_articles.py),
opens the page headless, moves to the question ``--item`` (1-based) and saves a screenshot.
Needs chromium, chromium-driver and a font with Japanese glyphs (fonts-ipafont-gothic or
fonts-noto-cjk): without one the page's Japanese shows as boxes.

    python scripts/review_screenshot.py --out docs/review.png
"""

from __future__ import annotations

import argparse
import lzma
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "yokaieval"


def _japanese_font() -> bool:
    try:
        listed = subprocess.run(["fc-list", ":lang=ja"], capture_output=True, text=True, timeout=30).stdout
    except OSError:
        return False
    return bool(listed.strip())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "review.png")
    parser.add_argument("--item", type=int, default=3, help="the question shown (1-based)")
    args = parser.parse_args(argv)
    if not _japanese_font():
        print("no font with Japanese glyphs: apt-get install fonts-ipafont-gothic (or fonts-noto-cjk)", file=sys.stderr)
        return 2
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    work = Path(tempfile.mkdtemp())
    questions = work / "YokaiEval-first40.json"
    questions.write_bytes(lzma.open(DATA / "YokaiEval-first40.json.xz").read())
    articles = work / "articles.parquet"
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "released_articles.py"),
            str(questions),
            str(DATA / "responses-calm2-7b-chat.json.xz"),
            "--out",
            str(articles),
        ],
        check=True,
    )
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "wikiorigin.cli",
            "review",
            "serve",
            str(questions),
            "--articles",
            str(articles),
            "--db",
            str(work / "review.sqlite"),
            "--annotator",
            "alice",
            "--port",
            "0",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        found = re.search(r"open (http://\S+)", server.stdout.readline())
        if not found:
            raise SystemExit("the review server did not start")
        os.environ["SE_OFFLINE"] = "true"  # Selenium Manager downloads nothing
        options = webdriver.ChromeOptions()
        options.binary_location = "/usr/bin/chromium"
        for flag in (
            "--headless=new",
            "--no-sandbox",
            "--disable-dev-shm-usage",
            "--window-size=1400,860",
            "--disable-gpu",
            "--lang=ja",
            "--hide-scrollbars",
        ):
            options.add_argument(flag)
        driver = webdriver.Chrome(service=Service(executable_path="/usr/bin/chromedriver"), options=options)
        try:
            driver.get(found[1])

            def renders() -> int:
                return int(driver.find_element(By.TAG_NAME, "body").get_attribute("data-renders") or 0)

            WebDriverWait(driver, 20).until(lambda d: renders() > 0)
            for _ in range(args.item - 1):
                before = renders()
                ActionChains(driver).send_keys("j").perform()
                WebDriverWait(driver, 20).until(lambda d, b=before: renders() > b)
            time.sleep(0.5)  # fonts settle
            args.out.parent.mkdir(parents=True, exist_ok=True)
            driver.save_screenshot(str(args.out))
        finally:
            driver.quit()
    finally:
        server.terminate()
        server.wait(10)
    print(f"-> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
