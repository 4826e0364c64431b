"""The request cache's writes: :class:`_Writes` holds what waits to be written (answers and
ended claims) and the writer thread that writes it, what arrives within ``_INTERVAL`` of the
first in one transaction (see :mod:`wikiorigin.llm.cache` for what a kill may lose). Moved out of
``cache.py``; the cache owns one and writes through its connection."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path

from ..errors import ParameterError


class CacheError(ParameterError):
    """The request cache cannot be used (unreadable, of another version, not writable, disk full):
    a :class:`~wikiorigin.errors.ParameterError` of the parameter ``cache`` (the
    :class:`RequestCache` an :class:`~wikiorigin.llm.LLMClient` is given)."""

    def __init__(self, message: str):
        super().__init__("cache", message)


__all__ = ["_Writes", "_problem"]

_LINGER = 0.05  # seconds the writer thread waits for more before it ends
_INTERVAL = 0.02  # seconds an answer waits at most for others to be written with it
_MOST = 256  # answers (and releases) written at once without waiting longer


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


class _Writes:
    """What waits to be written (``queue``: puts and releases; ``pending``: the answers by key,
    found by look-ups meanwhile), whether a write is under way, the error of one that failed;
    written to the cache at ``path`` through ``db`` (its connection, set once open) under
    ``lock``, the claims ended being those of ``owner``."""

    def __init__(self, path: Path, lock: threading.Lock, owner: str):
        self.path, self.lock, self.owner = path, lock, owner
        self.db: sqlite3.Connection | None = None
        self.changed = threading.Condition()
        self.queue: list[tuple] = []
        self.pending: dict[str, str] = {}
        self.busy = False
        self.flushing = 0  # flush() calls waiting: the writer does not wait for more
        self.error: str | None = None
        self.thread: threading.Thread | None = None

    def enqueue(self, op: tuple) -> None:
        """``op`` (``("put", key, text)`` or ``("release", key, None)``) to be written; the
        writer thread started when none runs. :class:`CacheError` if a write failed."""
        with self.changed:
            if self.error is not None:
                raise CacheError(self.error)
            self.queue.append(op)
            if op[0] == "put":
                self.pending[op[1]] = op[2]
            if len(self.queue) == 1 or len(self.queue) >= _MOST:  # the writer waits for the first, or is due
                self.changed.notify_all()
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(target=self._writer, name="wikiorigin-cache", daemon=False)
                self.thread.start()

    def flush(self) -> None:
        """Wait until every answer queued is written; :class:`CacheError` if a write failed."""
        with self.changed:
            self.flushing += 1  # the writer writes what waits at once
            self.changed.notify_all()
            try:
                while (self.queue or self.busy) and self.error is None:
                    if self.thread is None or not self.thread.is_alive():  # gone with a fork
                        self.thread = threading.Thread(target=self._writer, name="wikiorigin-cache", daemon=False)
                        self.thread.start()
                    self.changed.wait(0.5)
            finally:
                self.flushing -= 1
            if self.error is not None:
                raise CacheError(self.error)

    def _writer(self) -> None:
        """The writer thread: what arrives within ``_INTERVAL`` of the first answer waiting is
        written in one transaction (at once when ``_MOST`` wait, or :meth:`flush` is called),
        then the next; it ends when nothing more comes for a moment (or a write failed)."""
        while True:
            with self.changed:
                if not self.queue:
                    self.changed.wait(_LINGER)
                if not self.queue or self.error is not None:
                    self.thread = None if self.thread is threading.current_thread() else self.thread
                    self.changed.notify_all()
                    return
                due = time.monotonic() + _INTERVAL
                while len(self.queue) < _MOST and not self.flushing and (left := due - time.monotonic()) > 0:
                    self.changed.wait(left)
                batch, self.queue, self.busy = self.queue, [], True
            error: str | None = f"{self.path}: cannot store an answer (the cache's writer stopped)"
            try:
                error = self._write(batch)
            finally:
                self._written(batch, error)

    def _written(self, batch: list[tuple], error: str | None) -> None:
        with self.changed:
            for op, key, text in batch:
                if op == "put" and self.pending.get(key) is text and error is None:
                    del self.pending[key]
            self.busy, self.error = False, self.error or error
            self.changed.notify_all()

    def _write(self, batch: list[tuple]) -> str | None:
        """``batch`` in one transaction; after a failure, one at a time, so that every answer that
        fits is kept. The error's message, or None."""
        try:
            self._commit(batch)
            return None
        except sqlite3.Error as exc:
            if len(batch) == 1:
                return f"{self.path}: cannot store an answer ({_problem(exc)})"
        for op in batch:
            try:
                self._commit([op])
            except sqlite3.Error as exc:
                return f"{self.path}: cannot store an answer ({_problem(exc)})"
        return None

    def _commit(self, batch: list[tuple]) -> None:
        """``batch`` in one transaction: a statement for its answers and one for each kind of
        claim it ends (the rows as a JSON array), not one a row: each statement lets go of the
        interpreter's lock and waits to take it back from the run's thread."""
        puts = {key: text for op, key, text in batch if op == "put"}  # the last answer of a key
        released = [key for op, key, _ in batch if op != "put"]
        db = self.db
        if db is None:
            raise sqlite3.OperationalError("the cache is not open")
        with self.lock:
            try:
                if puts:
                    rows = json.dumps(list(puts.items()), ensure_ascii=False)
                    db.execute(
                        "INSERT OR REPLACE INTO answers SELECT json_extract(value, '$[0]'), "
                        "json_extract(value, '$[1]') FROM json_each(?)",
                        (rows,),
                    )
                    db.execute(
                        "DELETE FROM claims WHERE key IN (SELECT value FROM json_each(?))", (json.dumps(list(puts)),)
                    )
                if released:
                    db.execute(
                        "DELETE FROM claims WHERE owner = ? AND key IN (SELECT value FROM json_each(?))",
                        (self.owner, json.dumps(released)),
                    )
                db.commit()
            except sqlite3.Error:
                try:
                    db.rollback()
                except sqlite3.Error:
                    pass
                raise
