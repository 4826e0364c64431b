"""Wikimedia Enterprise HTML dumps: each article's rendered HTML, no MediaWiki needed.

A dump (``{wiki}-NS0-{date}-ENTERPRISE-HTML.json.tar.gz``) is a gzipped tar of NDJSON files,
one article a line: ``name`` (the title), ``identifier`` (the page id), ``version``
(``identifier``: the revision id), ``url`` and ``article_body`` (``html``; ``wikitext``).
:func:`iter_html_dump` streams its articles; :func:`write_html_dump` writes one in that layout
(from our own rendering); :class:`HtmlDumpIndex` keeps a dump's HTML by title in a SQLite
file (zlib), made once and reused while the dump is unchanged, so that converting processes
fetch a page's HTML by its title without holding the dump.
"""

from __future__ import annotations

import io
import json
import sqlite3
import tarfile
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path

from ..errors import WikioriginError

__all__ = ["HtmlDumpIndex", "iter_html_dump", "write_html_dump"]


def iter_html_dump(path) -> Iterator[dict]:
    """Each article of an Enterprise HTML dump (its JSON object), in the dump's order."""
    path = Path(path)
    try:
        with tarfile.open(path, "r:gz") as tar:
            for member in tar:
                if not member.isfile() or (file := tar.extractfile(member)) is None:
                    continue
                with file as f:
                    for number, line in enumerate(f, 1):
                        if line.strip():
                            yield _article(line, f"{path}: {member.name}: line {number}")
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise WikioriginError(f"{path}: not a readable HTML dump (.json.tar.gz): {exc}") from None


def _article(line: bytes, where: str) -> dict:
    try:
        article = json.loads(line)
        article["article_body"]["html"]
        article["name"]
    except (ValueError, KeyError, TypeError) as exc:
        raise WikioriginError(f"{where}: not an article of an HTML dump ({exc!r})") from None
    return article


def write_html_dump(path, articles: Iterable[dict], member: str = "articles_0.ndjson") -> int:
    """Write ``articles`` (JSON objects in the Enterprise layout) as an HTML dump; their number."""
    data = b"".join(json.dumps(a, ensure_ascii=False).encode("utf-8") + b"\n" for a in articles)
    with tarfile.open(path, "w:gz") as tar:
        info = tarfile.TarInfo(member)
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return data.count(b"\n")


class HtmlDumpIndex:
    """The HTML of an Enterprise dump's articles by title, in the SQLite file ``db`` (made from
    ``dump`` by :meth:`build` when missing or made from another file)."""

    def __init__(self, dump, db):
        self.dump, self.db = Path(dump), Path(db)
        self._conn: sqlite3.Connection | None = None

    def _stamp(self) -> str:
        stat = self.dump.stat()
        return f"{self.dump.name}:{stat.st_size}:{int(stat.st_mtime)}"

    def build(self) -> int:
        """Index the dump (or reuse the index made from it); the number of articles."""
        if self.db.exists():
            with sqlite3.connect(self.db) as conn:
                row = conn.execute("SELECT value FROM meta WHERE key = 'stamp'").fetchone()
                if row and row[0] == self._stamp():
                    return conn.execute("SELECT count(*) FROM html").fetchone()[0]
            self.db.unlink()
        partial = self.db.with_name(self.db.name + ".partial")
        partial.unlink(missing_ok=True)
        with sqlite3.connect(partial) as conn:
            conn.execute("CREATE TABLE html (title TEXT PRIMARY KEY, body BLOB)")
            conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
            rows = ((a["name"], zlib.compress(a["article_body"]["html"].encode())) for a in iter_html_dump(self.dump))
            conn.executemany("INSERT OR REPLACE INTO html VALUES (?, ?)", rows)
            conn.execute("INSERT INTO meta VALUES ('stamp', ?)", (self._stamp(),))
            count = conn.execute("SELECT count(*) FROM html").fetchone()[0]
        conn.close()
        partial.rename(self.db)
        return count

    def get(self, title: str) -> str | None:
        """The HTML of article ``title``, or None when the dump has none."""
        if self._conn is None:
            self._conn = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True, check_same_thread=False)
        row = self._conn.execute("SELECT body FROM html WHERE title = ?", (title,)).fetchone()
        return zlib.decompress(row[0]).decode() if row else None

    def __getstate__(self):
        return {"dump": self.dump, "db": self.db}

    def __setstate__(self, state):
        self.dump, self.db, self._conn = state["dump"], state["db"], None
