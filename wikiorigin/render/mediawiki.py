"""Pages rendered by MediaWiki itself: the wiki's own templates and Lua modules expanded.

:class:`MediaWiki` finds an installed MediaWiki (Debian's ``mediawiki`` package, or the tree
``WIKIORIGIN_MEDIAWIKI`` names) with ``php``; :func:`prepare_store` sets up a store for one
dump (SQLite, :data:`EXTENSIONS` enabled) with the dump's templates, modules and interface
messages (:data:`STORE_NAMESPACES`) imported once, and reuses it while the dump is unchanged.
:class:`Renderer` renders pages on several PHP processes kept alive between pages
(``render.php``: one JSON request a line), so MediaWiki's start (about 0.2 s) is paid once
per process, not per page.
"""

from __future__ import annotations

import atexit
import json
import os
import queue
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from ..errors import WikioriginError

__all__ = ["INSTALL", "EXTENSIONS", "STORE_NAMESPACES", "MediaWiki", "MissingEngine", "Renderer", "find_mediawiki"]

INSTALL = "apt-get install mediawiki php-cli php-sqlite3 php-luasandbox (Debian/Ubuntu)"
"""How to install the engine, as the one-line error for a missing one says."""
EXTENSIONS = ("ParserFunctions", "Scribunto", "Cite", "Poem")
"""MediaWiki extensions a store enables (bundled with Debian's package)."""
STORE_NAMESPACES = (8, 10, 828)
"""Namespaces a store imports from the dump: interface messages, templates, Lua modules."""
_SCRIPT = Path(__file__).with_name("render.php")
_VERSION = re.compile(r"define\(\s*'MW_VERSION',\s*'([^']+)'")


class MissingEngine(WikioriginError):
    """The text source asked for needs an engine this machine lacks (the message says how to install it)."""


@dataclass(frozen=True, slots=True)
class MediaWiki:
    """An installed MediaWiki: its tree ``home``, the ``php`` binary and the ``version``."""

    home: Path
    php: str
    version: str


def find_mediawiki() -> MediaWiki | None:
    """The installed MediaWiki (``WIKIORIGIN_MEDIAWIKI``, else ``/usr/share/mediawiki``) with
    ``php`` and the SQLite driver, or None when there is none."""
    home = Path(os.environ.get("WIKIORIGIN_MEDIAWIKI") or "/usr/share/mediawiki")
    php = shutil.which("php")
    defines = home / "includes" / "Defines.php"
    if php is None or not defines.is_file() or not (home / "maintenance" / "install.php").is_file():
        return None
    found = _VERSION.search(defines.read_text(encoding="utf-8", errors="replace"))
    return MediaWiki(home, php, found.group(1) if found else "unknown")


def require_mediawiki() -> MediaWiki:
    """:func:`find_mediawiki`, or :class:`MissingEngine` saying how to install it."""
    found = find_mediawiki()
    if found is None:
        raise MissingEngine(f"MediaWiki is not installed (php and /usr/share/mediawiki): {INSTALL}")
    return found


class _Process:
    """One ``render.php`` process: requests and answers, one JSON line each."""

    def __init__(self, engine: MediaWiki, store: Path):
        env = dict(os.environ, MW_INSTALL_PATH=str(engine.home))
        self.proc = subprocess.Popen(
            [engine.php, str(_SCRIPT), "--conf", str(store / "LocalSettings.php")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None  # both are pipes
        self._stdin, self._stdout = self.proc.stdin, self.proc.stdout
        hello = self._answer()
        self.version, self.template = hello.get("version"), hello.get("template") or "Template"

    def _answer(self) -> dict:
        while True:
            line = self._stdout.readline()
            if not line:
                raise OSError("render.php stopped")
            if line.startswith(b"{"):  # anything else is MediaWiki talking
                return json.loads(line)

    def render(self, title: str, text: str, timestamp: str | None = None) -> dict:
        request = json.dumps({"title": title, "text": text, "timestamp": timestamp}, ensure_ascii=False) + "\n"
        self._stdin.write(request.encode("utf-8"))
        self._stdin.flush()
        return self._answer()

    def close(self) -> None:
        if self.proc.poll() is None:
            self._stdin.close()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class Renderer:
    """Pages of one store rendered on ``processes`` PHP processes (started on first use, kept
    until :meth:`close`): :meth:`render` gives each page's HTML and categories."""

    def __init__(self, engine: MediaWiki, store, processes: int | None = None):
        self.engine, self.store = engine, Path(store)
        self.processes = processes or os.cpu_count() or 1
        self._idle: queue.Queue = queue.Queue()
        self._all: list[_Process] = []
        self._pool: ThreadPoolExecutor | None = None
        self.template = "Template"  # the store's name of the template namespace, as its processes say

    def _start(self) -> _Process:
        proc = _Process(self.engine, self.store)
        self.template = proc.template
        return proc

    def _one(self, title: str, text: str, timestamp: str | None = None) -> dict:
        try:
            proc = self._idle.get_nowait()
        except queue.Empty:
            proc = self._start()
            self._all.append(proc)
        try:
            answer = proc.render(title, text, timestamp)
        except (OSError, ValueError) as exc:  # the process died on this page: a new one next time
            self._all.remove(proc)
            proc.close()
            return {"error": f"render.php: {exc}"}
        self._idle.put(proc)
        return answer

    def render(self, pages: list[tuple]) -> list[dict]:
        """``{"html", "categories", "templates"}`` (or ``{"error"}``) of each ``(title, wikitext)``
        or ``(title, wikitext, timestamp)``, in order; the timestamp (ISO 8601) is the time the
        page is rendered at (``{{CURRENTYEAR}}``), so that a page renders the same on every run."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.processes)
        return list(self._pool.map(lambda p: self._one(*p), pages))

    def close(self) -> None:
        """End the PHP processes."""
        for proc in self._all:
            proc.close()
        self._all.clear()
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None


_RENDERERS: dict[tuple, Renderer] = {}  # one per store and process: workers keep theirs


def renderer(engine: MediaWiki, store, processes: int | None = None) -> Renderer:
    """This process's :class:`Renderer` of ``store`` (made once, closed at exit)."""
    key = (engine, str(store), processes, os.getpid())
    if key not in _RENDERERS:
        if not _RENDERERS:
            atexit.register(_close_all)
        _RENDERERS[key] = Renderer(engine, store, processes)
    return _RENDERERS[key]


def _close_all() -> None:
    for r in _RENDERERS.values():
        r.close()
    _RENDERERS.clear()
