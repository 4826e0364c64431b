"""A request cache in SQLite: a re-run pays for no call twice; a changed prompt is a new key.

The key hashes the backend, model, messages, parameters and prompt version. Answers are
written as soon as they arrive (one transaction each), so a build killed half-way loses
nothing it paid for. A row that cannot be read (not JSON) is named in a warning and taken for
a miss: that request is asked again and its row replaced.

Runs that share a cache do not pay twice for one request: a run about to send a request
claims its key (:meth:`RequestCache.claim`, the table ``claims``), and another run that needs
the same key meanwhile waits for the answer instead of sending it again. A claim ends with the
answer stored, with :meth:`RequestCache.release`, or when its process is gone or its time is up.

The file is checked when it is opened, before any call is paid for: a file that is not a
SQLite database (truncated, garbage, a directory), one that fails SQLite's quick check, one of
another schema version, or one that cannot be written (read-only, locked by another process
past ``busy_seconds``) is a one-line :class:`CacheError` naming the file. A write that fails
later (a full disk) is a :class:`CacheError` too: the run stops there, and every answer
stored before it is kept.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import sqlite3
import threading
import time
import uuid
from pathlib import Path

from ..errors import ParameterError
from ..log import logger

__all__ = ["RequestCache", "CacheError", "request_key", "SCHEMA_VERSION"]

SCHEMA_VERSION = 1
"""The layout of the cache file (SQLite's ``user_version``): the table ``answers(key, answer)``,
and ``claims(key, owner, pid, host, until)`` of the requests in flight (added beside it: a
cache of this version without it gets it when opened)."""

_HOST = socket.gethostname()


class CacheError(ParameterError):
    """The request cache cannot be used (unreadable, of another version, not writable, disk full):
    a :class:`~wikiorigin.errors.ParameterError` of the parameter ``cache`` (the
    :class:`RequestCache` an :class:`~wikiorigin.llm.LLMClient` is given)."""

    def __init__(self, message: str):
        super().__init__("cache", message)


def request_key(backend: str, model: str, messages: list[dict], params: dict, prompt_version: str) -> str:
    """The cache key of a request: the SHA-256 of the backend, model, messages, sampling
    parameters and prompt version (canonical JSON)."""
    blob = json.dumps(
        [backend, model, messages, params, prompt_version], ensure_ascii=False, sort_keys=True, separators=(",", ":")
    )
    return hashlib.sha256(blob.encode()).hexdigest()


def _problem(exc: sqlite3.Error) -> str:
    """SQLite's reason in words a user acts on."""
    text = str(exc)
    if "locked" in text or "busy" in text:
        return f"{text}: another process is writing it; wait for it, or give another {{cache}}"
    if "full" in text:
        return f"{text}: free some space (every answer stored so far is kept)"
    if "readonly" in text or "read-only" in text:
        return f"{text}: give a {{cache}} you can write"
    if "not a database" in text or "malformed" in text or "unable to open" in text:
        return f"{text}: not a usable request cache; move it away or give another {{cache}}"
    return text


class RequestCache:
    """A request cache in the SQLite file ``path`` (created with its directory): ``get(key)`` is
    the stored answer or None, ``put(key, answer)`` stores one at once; ``close()`` when done.
    Safe to share between threads. Raises :class:`CacheError` for a file that cannot serve as a
    cache (see the module docstring); a lock held by another process is waited for at most
    ``busy_seconds``."""

    def __init__(self, path, *, busy_seconds: float = 30.0):
        self.path = Path(path)
        if self.path.is_dir():
            raise CacheError(f"{self.path}: a directory, not a request cache; give a file name for {{cache}}")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CacheError(f"{self.path.parent}: cannot make the directory of the cache ({exc.strerror})") from None
        self._lock = threading.Lock()
        self._owner = uuid.uuid4().hex  # this object's claims (another in this process waits on them)
        self._damaged: set[str] = set()  # rows already said to be damaged
        try:
            self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=busy_seconds)
            self._open()
        except sqlite3.Error as exc:
            raise CacheError(f"{self.path}: {_problem(exc)}") from None

    def _open(self) -> None:
        """Check the file and make the table: readable, whole, of this version, writable."""
        db = self._db
        version = db.execute("PRAGMA user_version").fetchone()[0]
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if tables and "answers" not in tables or version not in (0, SCHEMA_VERSION):
            raise CacheError(
                f"{self.path}: not a request cache of this version (schema version {version}, "
                f"tables {', '.join(sorted(tables)) or 'none'}; this one is {SCHEMA_VERSION}): "
                "give another {cache}"
            )
        if tables:
            columns = [r[1] for r in db.execute("PRAGMA table_info(answers)")]
            if columns != ["key", "answer"]:
                raise CacheError(
                    f"{self.path}: its answers table has the columns {columns}, not [key, answer]: "
                    "a cache of another version; give another {cache}"
                )
        check = db.execute("PRAGMA quick_check").fetchone()[0]
        if check != "ok":
            raise CacheError(f"{self.path}: the database is damaged ({check}); move it away or give another {{cache}}")
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("BEGIN IMMEDIATE")  # the write lock: read-only and locked files are told now
        db.execute("CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, answer TEXT NOT NULL)")
        db.execute(
            "CREATE TABLE IF NOT EXISTS claims (key TEXT PRIMARY KEY, owner TEXT NOT NULL, pid INTEGER NOT NULL, "
            "host TEXT NOT NULL, until REAL NOT NULL)"
        )
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        db.commit()

    def get(self, key: str) -> dict | None:
        """The answer stored under ``key``, or None (also for a row that is not a JSON object:
        :meth:`damaged` says so)."""
        try:
            with self._lock:
                row = self._db.execute("SELECT answer FROM answers WHERE key = ?", (key,)).fetchone()
        except sqlite3.Error as exc:
            raise CacheError(f"{self.path}: {_problem(exc)}") from None
        return self._decoded(key, row[0]) if row else None

    def _decoded(self, key: str, text) -> dict | None:
        try:
            answer = json.loads(text)
        except (TypeError, ValueError):
            answer = None
        if isinstance(answer, dict):
            return answer
        self.damaged(key, "not a JSON object")
        return None

    def damaged(self, key: str, problem: str) -> None:
        """Warn that the row ``key`` cannot be used (``problem``): its request is asked again,
        and the row replaced by the new answer. Said once a row."""
        if key in self._damaged:
            return
        self._damaged.add(key)
        logger.warning(f"{self.path}: the cached answer {key} is damaged ({problem}): asked again, and replaced")

    def claim(self, key: str, seconds: float) -> tuple[dict | None, int | None]:
        """``(answer, None)`` when ``key`` is answered already; ``(None, pid)`` while the
        process ``pid`` has claimed it (another run sends it now: ask again later); else
        ``(None, None)``: claimed now by this cache object for ``seconds``, to be ended by
        :meth:`put` or :meth:`release`. A claim whose process is gone (on this host) or whose
        time is up is taken over."""
        try:
            with self._lock:
                answer, holder = self._state(key)
                if answer is None and holder is None:
                    self._db.execute("BEGIN IMMEDIATE")
                    try:
                        answer, holder = self._state(key)  # as it is now, under the write lock
                        if answer is None and holder is None:
                            self._db.execute(
                                "INSERT OR REPLACE INTO claims VALUES (?, ?, ?, ?, ?)",
                                (key, self._owner, os.getpid(), _HOST, time.time() + seconds),
                            )
                        self._db.commit()
                    except BaseException:
                        self._db.rollback()
                        raise
        except sqlite3.Error as exc:
            raise CacheError(f"{self.path}: cannot claim a request ({_problem(exc)})") from None
        return (self._decoded(key, answer) if answer is not None else None), holder

    def _state(self, key: str) -> tuple[str | None, int | None]:
        """The stored answer's text, and the process of a live claim of another (or None)."""
        row = self._db.execute("SELECT answer FROM answers WHERE key = ?", (key,)).fetchone()
        if row is not None:
            return row[0], None
        held = self._db.execute("SELECT owner, pid, host, until FROM claims WHERE key = ?", (key,)).fetchone()
        if held is None or held[0] == self._owner or held[3] < time.time():
            return None, None
        from ..leftovers import running

        return None, (held[1] if held[2] != _HOST or running(held[1]) else None)

    def release(self, key: str | None = None) -> None:
        """End this object's claim of ``key`` (all its claims: None) without an answer. A claim
        that cannot be removed (a full disk) is left: it ends with this process."""
        where, values = ("owner = ?", (self._owner,)) if key is None else ("key = ? AND owner = ?", (key, self._owner))
        try:
            with self._lock:
                self._db.execute(f"DELETE FROM claims WHERE {where}", values)
                self._db.commit()
        except sqlite3.Error:
            try:
                self._db.rollback()
            except sqlite3.Error:
                pass

    def put(self, key: str, answer: dict) -> None:
        """Store ``answer`` (JSON-serializable) under ``key`` and commit at once, ending the
        claim of ``key``; a write that fails (a full disk) raises :class:`CacheError` with what
        was stored before kept."""
        try:
            with self._lock:
                self._db.execute(
                    "INSERT OR REPLACE INTO answers VALUES (?, ?)", (key, json.dumps(answer, ensure_ascii=False))
                )
                self._db.execute("DELETE FROM claims WHERE key = ?", (key,))
                self._db.commit()
        except sqlite3.Error as exc:
            try:
                self._db.rollback()
            except sqlite3.Error:
                pass
            raise CacheError(f"{self.path}: cannot store an answer ({_problem(exc)})") from None

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT count(*) FROM answers").fetchone()[0]

    def close(self) -> None:
        """End this object's claims and close the database."""
        self.release()
        with self._lock:
            self._db.close()
