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
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "yokaieval"
sys.path.insert(0, str(ROOT))


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
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from tests.review.server import Server, chromium

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
    with Server(questions, work / "review.sqlite", "--articles", str(articles), annotator="alice") as server:
        driver = chromium()
        try:
            driver.get(server.url)

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
    print(f"-> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
