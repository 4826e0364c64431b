"""A real ``wikiorigin review serve`` in a subprocess on a free loopback port, for the tests."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import urllib.error
import urllib.request


class Server:
    """``wikiorigin review serve DATASET --db DB --port 0 ...`` started; ``url`` is what it
    printed. ``kill()`` sends SIGKILL (nothing is flushed or closed by the server)."""

    def __init__(self, dataset, db, *args: str, annotator: str = "alice", host: str = "127.0.0.1"):
        cmd = [
            sys.executable,
            "-m",
            "wikiorigin.cli",
            "review",
            "serve",
            str(dataset),
            "--db",
            str(db),
            "--port",
            "0",
            "--host",
            host,
            "--annotator",
            annotator,
            *args,
        ]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.append(self.proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(60)
        found = re.search(r"open (http://\S+)", lines[0] if lines else "")
        if not found:
            self.kill()
            raise RuntimeError(f"the server did not start: {lines} {self.proc.stderr.read()}")
        self.url = found[1]
        self.base = self.url.split("?")[0]

    def kill(self) -> None:
        """SIGKILL the server and wait for it."""
        self.proc.kill()
        self.proc.wait(10)
        for stream in (self.proc.stdout, self.proc.stderr):
            stream.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.proc.poll() is None:
            self.kill()


def request(url: str, data: dict | None = None, headers: dict | None = None, method: str | None = None):
    """(status, headers, body) of an HTTP request; a JSON body when ``data`` is given."""
    body = None if data is None else json.dumps(data).encode()
    req = urllib.request.Request(url, data=body, headers=headers or {}, method=method)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.headers, r.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers, exc.read().decode()


def chromium(window: str = "1400,860"):
    """Debian's chromium, headless, driven by Selenium through /usr/bin/chromedriver (Selenium
    Manager never asked to download anything)."""
    import os

    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    os.environ["SE_OFFLINE"] = "true"  # Selenium Manager: no downloads, ever
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        f"--window-size={window}",
        "--disable-gpu",
        "--lang=ja",
        "--hide-scrollbars",
    ):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(executable_path="/usr/bin/chromedriver"), options=options)
    driver.implicitly_wait(0)
    return driver
