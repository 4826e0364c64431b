"""A request cache in SQLite: a re-run pays for no call twice; a changed prompt is a new key.

The key hashes the backend, model, messages, parameters and prompt version. A row that
cannot be read (not JSON) is named in a warning and taken for a miss: that request is asked
again and its row replaced.

Durability: answers are written in batches by a writer thread, each batch one transaction
(SQLite's write-ahead log, ``synchronous=NORMAL``): what arrives within 0.02 s of the first
answer waiting (or 256 answers, whichever comes first) is written together. A process killed
half-way loses at most the answers that had arrived since the last write began (0.02 s worth,
plus the write under way), and never half an answer: a transaction is written whole or not
at all. A power cut may lose the last writes too, never
the file. A look-up finds an answer from the moment it is given to :meth:`RequestCache.put`;
:meth:`RequestCache.flush` waits until it is written (the client does at the end of each run,
and a cache opened on the same file in the same process does first).

Runs that share a cache do not pay twice for one request: a run about to send requests claims
their keys (:meth:`RequestCache.claim_many`: the request it sends now and the next ones it
will send, in one transaction; the table ``claims``), and another run that needs one of those
keys meanwhile waits for the answer instead of sending it again. A claim ends with its answer
written (in the same transaction), with :meth:`RequestCache.release`, or when its process is
gone or its time is up.

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
import weakref
from pathlib import Path

from ..log import logger
from ._cache_writes import CacheError, _problem, _Writes

__all__ = ["RequestCache", "CacheError", "request_key", "request_keys", "SCHEMA_VERSION"]

SCHEMA_VERSION = 1
"""The layout of the cache file (SQLite's ``user_version``): the table ``answers(key, answer)``,
and ``claims(key, owner, pid, host, until)`` of the requests in flight (added beside it: a
cache of this version without it gets it when opened)."""

_HOST = socket.gethostname()


def request_key(backend: str, model: str, messages: list[dict], params: dict, prompt_version: str) -> str:
    """The cache key of a request: the SHA-256 of the backend, model, messages, sampling
    parameters and prompt version (canonical JSON)."""
    return request_keys([backend], model, messages, params, prompt_version)[0]


def request_keys(backends: list[str], model: str, messages: list[dict], params: dict, prompt_version: str) -> list[str]:
    """:func:`request_key` of the request for each of ``backends``, the request encoded once
    (the canonical JSON of a list is its items' joined: ``[backend,`` and the rest)."""
    rest = json.dumps(
        [model, messages, params, prompt_version], ensure_ascii=False, sort_keys=True, separators=(",", ":")
    )[1:].encode()
    keys = []
    for backend in backends:
        digest = hashlib.sha256(f"[{json.dumps(backend, ensure_ascii=False)},".encode())
        digest.update(rest)
        keys.append(digest.hexdigest())
    return keys


class RequestCache:
    """A request cache in the SQLite file ``path`` (created with its directory): ``get(key)`` is
    the stored answer or None, ``put(key, answer)`` stores one (written within moments by the
    cache's writer thread, see the module docstring; :meth:`flush` waits for it); ``close()`` when
    done. Safe to share between threads. Raises :class:`CacheError` for a file that cannot serve
    as a cache (see the module docstring); a lock held by another process is waited for at most
    ``busy_seconds``."""

    def __init__(self, path, *, busy_seconds: float = 30.0):
        self.path = Path(path)
        if self.path.is_dir():
            raise CacheError(f"{self.path}: a directory, not a request cache; give a file name for {{cache}}")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CacheError(f"{self.path.parent}: cannot make the directory of the cache ({exc.strerror})") from None
        self._lock = threading.Lock()  # the writing connection: answers, claims
        self._read_lock = threading.Lock()  # the reading connection: look-ups
        self._owner = uuid.uuid4().hex  # this object's claims (another in this process waits on them)
        self._damaged: set[str] = set()  # rows already said to be damaged
        self._writes = _Writes(self.path, self._lock, self._owner)
        for other in list(_OPEN):  # answers another object of this process has not written yet
            if other.path.absolute() == self.path.absolute():
                try:
                    other.flush()
                except CacheError:
                    pass
        _OPEN.add(self)
        try:
            self._db = self._writes.db = sqlite3.connect(self.path, check_same_thread=False, timeout=busy_seconds)
            self._open()
            self._reader = sqlite3.connect(self.path, check_same_thread=False, timeout=busy_seconds)
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
        try:  # the writes and claims go a batch a statement, through SQLite's JSON functions
            db.execute("SELECT value FROM json_each('[1]')").fetchall()
        except sqlite3.OperationalError as exc:
            raise CacheError(
                f"{self.path}: this Python's SQLite {sqlite3.sqlite_version} has no JSON functions ({exc}); "
                "the request cache needs SQLite 3.38 or one built with JSON1"
            ) from None
        check = db.execute("PRAGMA quick_check").fetchone()[0]
        if check != "ok":
            raise CacheError(f"{self.path}: the database is damaged ({check}); move it away or give another {{cache}}")
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")  # WAL: a killed process loses no commit (see the docstring)
        db.execute("BEGIN IMMEDIATE")  # the write lock: read-only and locked files are told now
        db.execute("CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, answer TEXT NOT NULL)")
        db.execute(
            "CREATE TABLE IF NOT EXISTS claims (key TEXT PRIMARY KEY, owner TEXT NOT NULL, pid INTEGER NOT NULL, "
            "host TEXT NOT NULL, until REAL NOT NULL)"
        )
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        db.commit()

    def get(self, key: str) -> dict | None:
        """The answer stored under ``key`` (or about to be), or None (also for a row that is not
        a JSON object: :meth:`damaged` says so)."""
        text = self._writes.pending.get(key)
        if text is None:
            try:
                with self._read_lock:
                    # fetchall: the statement ends, and its read (a checkpoint waits for readers) with it
                    rows = self._reader.execute("SELECT answer FROM answers WHERE key = ?", (key,)).fetchall()
            except sqlite3.Error as exc:
                raise CacheError(f"{self.path}: {_problem(exc)}") from None
            text = rows[0][0] if rows else None
        return self._decoded(key, text) if text is not None else None

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
        return self.claim_many([key], seconds)[key]

    def claim_many(self, keys: list[str], seconds: float) -> dict[str, tuple[dict | None, int | None]]:
        """:meth:`claim` of each of ``keys``, all in one transaction."""
        found = {}
        try:
            with self._lock:
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    found = self._states(list(dict.fromkeys(keys)))
                    mine = [key for key, (answer, holder) in found.items() if answer is None and holder is None]
                    if mine:  # one statement for them all (see _commit)
                        self._db.execute(
                            "INSERT OR REPLACE INTO claims SELECT value, ?, ?, ?, ? FROM json_each(?)",
                            (self._owner, os.getpid(), _HOST, time.time() + seconds, json.dumps(mine)),
                        )
                    self._db.commit()
                except BaseException:
                    self._db.rollback()
                    raise
        except sqlite3.Error as exc:
            raise CacheError(f"{self.path}: cannot claim a request ({_problem(exc)})") from None
        return {
            key: ((self._decoded(key, answer) if answer is not None else None), holder)
            for key, (answer, holder) in found.items()
        }

    def _states(self, keys: list[str]) -> dict[str, tuple[str | None, int | None]]:
        """Each key's stored answer text, and the process of a live claim of another (or None),
        read in two statements."""
        states: dict[str, tuple[str | None, int | None]] = {key: (self._writes.pending.get(key), None) for key in keys}
        asked = json.dumps([key for key, (text, _) in states.items() if text is None])
        of_keys = "WHERE key IN (SELECT value FROM json_each(?))"
        for key, text in self._db.execute(f"SELECT key, answer FROM answers {of_keys}", (asked,)).fetchall():
            states[key] = text, None
        for key, owner, pid, host, until in self._db.execute(
            f"SELECT key, owner, pid, host, until FROM claims {of_keys}", (asked,)
        ).fetchall():
            if states[key][0] is None and owner != self._owner and until >= time.time():
                from ..leftovers import running

                states[key] = None, (pid if host != _HOST or running(pid) else None)
        return states

    def release(self, key: str | None = None) -> None:
        """End this object's claim of ``key`` without an answer (with the next write), or all its
        claims (None: at once, after the answers waiting to be written). A claim that cannot be
        removed (a full disk) is left: it ends with this process."""
        if key is not None:
            try:
                self._writes.enqueue(("release", key, None))
            except CacheError:  # a write failed: the run stops on it (put, flush) anyway
                pass
            return
        try:
            self.flush()
        except CacheError:
            pass
        try:
            with self._lock:
                self._db.execute("DELETE FROM claims WHERE owner = ?", (self._owner,))
                self._db.commit()
        except sqlite3.Error:
            try:
                self._db.rollback()
            except sqlite3.Error:
                pass

    def put(self, key: str, answer: dict) -> None:
        """Store ``answer`` (JSON-serializable) under ``key``, ending the claim of ``key``: found
        by :meth:`get` at once, written with the next write (the module docstring). A write that
        failed (a full disk) raises :class:`CacheError` here, or from :meth:`flush`, with every
        answer written before it kept."""
        self._writes.enqueue(("put", key, json.dumps(answer, ensure_ascii=False)))

    def flush(self) -> None:
        """Wait until every answer given to :meth:`put` is written; :class:`CacheError` if a
        write failed (a full disk)."""
        self._writes.flush()

    def __len__(self) -> int:
        self.flush()
        with self._lock:
            return self._db.execute("SELECT count(*) FROM answers").fetchone()[0]

    def close(self) -> None:
        """Write what waits, end this object's claims and close the database; :class:`CacheError`
        if a write failed."""
        try:
            self.flush()
        finally:
            self.release()
            with self._lock, self._read_lock:
                self._db.close()
                self._reader.close()


_OPEN: weakref.WeakSet[RequestCache] = weakref.WeakSet()  # the caches of this process
