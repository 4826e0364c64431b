"""Review decisions in SQLite: append-only, written at once, the current state computed.

Every action is a row of ``decisions`` (sequence number, item key, the item's content hash,
annotator, time in UTC, decision, reason, note, edits as JSON), committed before the page is
told it is saved; the journal is WAL, so several servers (one per annotator) share a database
and a killed server loses nothing. Nothing is updated or deleted: an undo is a row naming the
row it takes back. An annotator's state of an item is their latest row not taken back; it is
*stale* when its content hash is not the item's current one (the dataset changed since).

The ``meta`` table records which dataset a database reviews (file name, kind, and how its
items are keyed: ``id`` or ``content``), so that a database is not used for another dataset by
mistake.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from ..errors import WikioriginError

__all__ = ["DECISIONS", "REASONS", "Decision", "ReviewStore", "open_existing", "status"]

DECISIONS = ("accept", "reject", "skip")
"""What an annotator can decide on an item (an edit is an ``accept`` with edits)."""

REASONS = ("not backed by the article", "two options right", "answer wrong", "not of this culture",
           "question unclear", "duplicate", "other")
"""The fixed reasons a reject offers (free text goes in the note)."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS decisions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    item TEXT NOT NULL,
    content_sha1 TEXT NOT NULL,
    annotator TEXT NOT NULL,
    at TEXT NOT NULL,
    decision TEXT NOT NULL CHECK (decision IN ('accept', 'reject', 'skip', 'undo')),
    reason TEXT,
    note TEXT,
    edits TEXT,
    undoes INTEGER REFERENCES decisions(seq)
);
CREATE INDEX IF NOT EXISTS decisions_item ON decisions(item);
CREATE TRIGGER IF NOT EXISTS decisions_append_only_u BEFORE UPDATE ON decisions
BEGIN SELECT RAISE(ABORT, 'review decisions are append-only'); END;
CREATE TRIGGER IF NOT EXISTS decisions_append_only_d BEFORE DELETE ON decisions
BEGIN SELECT RAISE(ABORT, 'review decisions are append-only'); END;
"""


@dataclass(slots=True)
class Decision:
    """One row of the ``decisions`` table."""

    seq: int
    item: str
    content_sha1: str
    annotator: str
    at: str
    decision: str
    reason: str | None
    note: str | None
    edits: dict | None
    undoes: int | None

    def as_dict(self) -> dict:
        """The decision as JSON-ready fields."""
        return {k: getattr(self, k) for k in self.__slots__}


class ReviewStore:
    """The decisions of one dataset's review, in the SQLite file ``path`` (made if missing).

    ``dataset``, ``kind`` and ``keyed_by`` name the dataset reviewed: a new database records
    them; an existing one of another kind, keyed otherwise, or whose decided items are none of
    ``keys``, is an error.
    """

    def __init__(self, path, dataset: str, kind: str, keys=None, keyed_by: str | None = None):
        self.path = Path(path)
        if self.path.is_dir():
            raise WikioriginError(f"{self.path}: a directory; give a database file (e.g. review.sqlite)")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.con = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
            self.con.execute("PRAGMA journal_mode=WAL")
            self.con.execute("PRAGMA synchronous=FULL")
            self.con.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise WikioriginError(f"{self.path}: not a review database ({exc})") from None
        self._claim(dataset, kind, keys, keyed_by)

    def _claim(self, dataset: str, kind: str, keys, keyed_by: str | None) -> None:
        meta = dict(self.con.execute("SELECT key, value FROM meta"))
        if not meta:
            rows = [("dataset", dataset), ("kind", kind), ("schema", "1")]
            rows += [("keyed_by", keyed_by)] if keyed_by else []
            with self.con:
                self.con.executemany("INSERT INTO meta VALUES (?, ?)", rows)
            return
        if meta.get("kind") != kind:
            raise WikioriginError(f"{self.path}: reviews {meta.get('dataset')} ({meta.get('kind')}), "
                                  f"not a {kind} dataset like {dataset}; give another --db")
        if keyed_by and meta.get("keyed_by", keyed_by) != keyed_by:
            raise WikioriginError(f"{self.path}: reviews {meta.get('dataset')}, whose items are keyed by "
                                  f"{meta['keyed_by']}, not by {keyed_by} like {dataset}'s; give another --db")
        decided = {r[0] for r in self.con.execute("SELECT DISTINCT item FROM decisions")}
        if keys is not None and decided and not decided & set(keys):
            raise WikioriginError(f"{self.path}: reviews {meta.get('dataset')}: none of its {len(decided)} "
                                  f"reviewed items is in {dataset}; give another --db")

    def close(self) -> None:
        """Close the database."""
        self.con.close()

    def meta(self) -> dict:
        """The ``meta`` table: which dataset (file name) and kind this database reviews."""
        return dict(self.con.execute("SELECT key, value FROM meta"))

    def add(self, item: str, content_sha1: str, annotator: str, decision: str, reason: str | None = None,
            note: str | None = None, edits: dict | None = None) -> Decision:
        """Append a decision and commit it (durable when this returns)."""
        if decision not in DECISIONS:
            raise WikioriginError(f"decision {decision!r}: expected one of {', '.join(DECISIONS)}")
        if decision == "reject" and not (reason or note):
            raise WikioriginError("a reject needs a reason or a note")
        return self._insert(item, content_sha1, annotator, decision, reason, note, edits, None)

    def _insert(self, item, sha1, annotator, decision, reason, note, edits, undoes) -> Decision:
        at = datetime.now(timezone.utc).isoformat(timespec="milliseconds")
        text = json.dumps(edits, ensure_ascii=False, sort_keys=True) if edits else None
        with self.con:
            cur = self.con.execute(
                "INSERT INTO decisions (item, content_sha1, annotator, at, decision, reason, note, edits, undoes)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", (item, sha1, annotator, at, decision, reason, note, text, undoes))
        return Decision(cur.lastrowid, item, sha1, annotator, at, decision, reason, note, edits, undoes)

    def undo(self, annotator: str) -> Decision | None:
        """Take back the annotator's latest decision still in force (an ``undo`` row naming
        it); None when there is none."""
        last = self.effective(annotator)
        if not last:
            return None
        target = max(last, key=lambda d: d.seq)
        self._insert(target.item, target.content_sha1, annotator, "undo", None, None, None, target.seq)
        return target

    def history(self, item: str | None = None) -> list[Decision]:
        """Every row (or every row on ``item``: an undo row names the item it undoes), in the
        order written."""
        where, args = ("WHERE item = ? ", (item,)) if item is not None else ("", ())
        rows = self.con.execute("SELECT seq, item, content_sha1, annotator, at, decision, reason, note, "
                                f"edits, undoes FROM decisions {where}ORDER BY seq", args)
        return [Decision(*r[:8], json.loads(r[8]) if r[8] else None, r[9]) for r in rows]

    def effective(self, annotator: str | None = None, item: str | None = None) -> list[Decision]:
        """The decisions in force (on ``item``, when given), oldest first: not undo rows, not
        taken back."""
        rows = self.history(item)
        undone = {d.undoes for d in rows if d.decision == "undo"}
        return [d for d in rows if d.decision != "undo" and d.seq not in undone
                and (annotator is None or d.annotator == annotator)]

    def current(self, item: str | None = None) -> dict[tuple[str, str], Decision]:
        """The state: ``(item, annotator)`` -> their latest decision in force (on ``item``
        only, when given: one indexed query, for the page's item view)."""
        state = {}
        for d in self.effective(item=item):
            state[(d.item, d.annotator)] = d
        return state

    def annotators(self) -> list[str]:
        """Everyone who has written a decision, by name."""
        return [r[0] for r in self.con.execute("SELECT DISTINCT annotator FROM decisions ORDER BY annotator")]


def open_existing(path, dataset: str | None = None, kind: str | None = None, keys=None,
                  keyed_by: str | None = None) -> ReviewStore:
    """An existing review database (stats, export); a missing file is an error, and so is one
    that reviews another dataset than ``dataset`` of ``kind`` with ``keys``, when given."""
    path = Path(path)
    if not path.is_file():
        raise WikioriginError(f"{path}: no such review database (make one with `wikiorigin review serve`)")
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        meta = dict(con.execute("SELECT key, value FROM meta"))
        con.close()
    except sqlite3.DatabaseError as exc:
        raise WikioriginError(f"{path}: not a review database ({exc})") from None
    if kind is None:
        return ReviewStore(path, meta.get("dataset", "?"), meta.get("kind", "?"))
    return ReviewStore(path, dataset or "?", kind, keys, keyed_by)


def status(decision: Decision | None, sha1: str) -> str:
    """An annotator's state of an item from their decision in force: ``pending`` (none, or
    skipped), ``accepted``, ``rejected``, or ``stale`` (made on other content)."""
    if decision is None or decision.decision == "skip":
        return "pending"
    if decision.content_sha1 != sha1:
        return "stale"
    return "accepted" if decision.decision == "accept" else "rejected"
