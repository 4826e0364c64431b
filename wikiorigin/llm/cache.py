"""A request cache in SQLite: a re-run pays for no call twice; a changed prompt is a new key.

The key hashes the backend, model, messages, parameters and prompt version. Answers are
written as soon as they arrive (one transaction each), so a build killed half-way loses
nothing it paid for.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from pathlib import Path

__all__ = ["RequestCache", "request_key"]


def request_key(backend: str, model: str, messages: list[dict], params: dict, prompt_version: str) -> str:
    """The cache key of a request: the SHA-256 of the backend, model, messages, sampling
    parameters and prompt version (canonical JSON)."""
    blob = json.dumps([backend, model, messages, params, prompt_version], ensure_ascii=False,
                      sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


class RequestCache:
    """A request cache in the SQLite file ``path`` (created with its directory): ``get(key)`` is
    the stored answer or None, ``put(key, answer)`` stores one at once; ``close()`` when done.
    Safe to share between threads."""

    def __init__(self, path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, answer TEXT NOT NULL)")
        self._db.commit()

    def get(self, key: str) -> dict | None:
        """The answer stored under ``key``, or None."""
        with self._lock:
            row = self._db.execute("SELECT answer FROM answers WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, answer: dict) -> None:
        """Store ``answer`` (JSON-serializable) under ``key`` and commit at once."""
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO answers VALUES (?, ?)",
                             (key, json.dumps(answer, ensure_ascii=False)))
            self._db.commit()

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT count(*) FROM answers").fetchone()[0]

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._db.close()
