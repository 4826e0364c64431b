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

from ..errors import ParameterError, WikioriginError

__all__ = [
    "DECISIONS",
    "REASONS",
    "FORMER_REASONS",
    "reason_name",
    "Decision",
    "ReviewStore",
    "NotSaved",
    "open_existing",
    "status",
    "edits_key",
]

DECISIONS = ("accept", "reject", "skip")
"""What an annotator can decide on an item (an edit is an ``accept`` with edits)."""

REASONS = (
    "not verifiable from the article",
    "two options right",
    "answer wrong",
    "not of this culture",
    "question unclear",
    "duplicate",
    "not backed by an expert source",
    "inappropriate",
    "other",
)
"""The fixed reasons a reject offers (free text goes in the note), keys 1 to 9 on the page: the
YokaiEval paper's four (not verifiable from the article, not backed by an expert source,
inappropriate, duplicate) and ours. A database keeps each reason's text as chosen, so a reason
no longer offered still shows and counts (:data:`FORMER_REASONS` for those renamed)."""

FORMER_REASONS = {"not backed by the article": "not verifiable from the article"}
"""Reasons offered before under another text -> the reason they count as now
(:func:`reason_name`); the decision itself keeps the text it was made with."""

SCHEMA_VERSION = "1"
"""The version of the database's tables, recorded in its ``meta``; another is refused."""

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


class NotSaved(WikioriginError):
    """A decision the database could not take (a full disk, a read-only or locked file):
    nothing of it was written, what was saved before is intact, and the same decision can be
    made again once the cause is gone."""


def _full(exc: sqlite3.DatabaseError) -> bool:
    """Whether SQLite failed for want of disk space (SQLITE_FULL; its text before Python 3.11)."""
    return getattr(exc, "sqlite_errorcode", None) == 13 or "disk is full" in str(exc)  # 13: SQLITE_FULL


def reason_name(reason: str | None) -> str | None:
    """The reason a stored reason counts as: its current text if it was renamed
    (:data:`FORMER_REASONS`), else the text as stored (also one no longer offered)."""
    return FORMER_REASONS.get(reason, reason) if reason is not None else None


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
    ``keys``, is an error. ``kind=None`` (read-only only, for stats): whatever it reviews.
    """

    def __init__(
        self, path, dataset: str, kind: str | None, keys=None, keyed_by: str | None = None, readonly: bool = False
    ):
        if kind is None and not readonly:
            raise ValueError("ReviewStore: a database opened for writing needs the dataset's kind")
        self.path = Path(path)
        self._state: dict | None = None  # current(), kept up to date with the rows after _seen
        self._seen = 0
        if self.path.is_dir():
            raise WikioriginError(f"{self.path}: a directory; give a database file (e.g. review.sqlite)")
        try:
            self.con = self._connect(readonly)
            self._check_tables()
            if not readonly:
                self.con.execute("PRAGMA journal_mode=WAL")
                self.con.execute("PRAGMA synchronous=FULL")
                self.con.executescript(_SCHEMA)
            self._claim(dataset, kind, keys, keyed_by, readonly)
        except sqlite3.DatabaseError as exc:
            if _full(exc):
                raise NotSaved(
                    f"{self.path}: the disk is full: the review database cannot be made or opened "
                    "for writing there; free some space"
                ) from None
            raise ParameterError("db", f"{self.path}: not a review database ({exc})") from None

    def _connect(self, readonly: bool) -> sqlite3.Connection:
        """Read-write (the file made if missing), or read-only for stats and export: also in a
        directory where SQLite cannot make its WAL side files (then as an immutable file)."""
        if not readonly:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            return sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
        for mode in ("mode=ro", "immutable=1"):
            con = sqlite3.connect(f"file:{self.path}?{mode}", uri=True, timeout=30, check_same_thread=False)
            try:
                con.execute("SELECT count(*) FROM sqlite_master").fetchone()
                return con
            except sqlite3.OperationalError:
                con.close()
        raise WikioriginError(
            f"{self.path}: cannot be opened for reading (its directory may be read-only "
            "while the database is in WAL mode: copy it with its -wal file elsewhere)"
        )

    def _check_tables(self) -> None:
        """A file with tables must hold ours: a database of another program is left untouched."""
        tables = {r[0] for r in self.con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        tables.discard("sqlite_sequence")
        if tables and not {"meta", "decisions"} <= tables:
            raise ParameterError(
                "db",
                f"{self.path}: not a review database (it holds the tables "
                f"{', '.join(sorted(tables))}); give another {{db}}",
            )

    def _claim(self, dataset: str, kind: str | None, keys, keyed_by: str | None, readonly: bool = False) -> None:
        meta = self.meta()
        if meta and meta.get("schema") != SCHEMA_VERSION:
            raise WikioriginError(
                f"{self.path}: review schema {meta.get('schema')!r}, not {SCHEMA_VERSION!r}: "
                "made by another version of wikiorigin; use that version"
            )
        if not meta and readonly:
            raise ParameterError("db", f"{self.path}: not a review database (no record of the dataset it reviews)")
        if not meta:
            rows = [("dataset", dataset), ("kind", kind), ("schema", SCHEMA_VERSION)]
            rows += [("keyed_by", keyed_by)] if keyed_by else []
            with self.con:
                self.con.executemany("INSERT INTO meta VALUES (?, ?)", rows)
            return
        if kind is None:  # read-only, whatever it reviews (stats)
            return
        if meta.get("kind") != kind:
            raise ParameterError(
                "db",
                f"{self.path}: reviews {meta.get('dataset')} ({meta.get('kind')}), "
                f"not a {kind} dataset like {dataset}; give another {{db}}",
            )
        if keyed_by and meta.get("keyed_by", keyed_by) != keyed_by:
            raise ParameterError(
                "db",
                f"{self.path}: reviews {meta.get('dataset')}, whose items are keyed by "
                f"{meta['keyed_by']}, not by {keyed_by} like {dataset}'s; give another {{db}}",
            )
        decided = {r[0] for r in self.con.execute("SELECT DISTINCT item FROM decisions")}
        if keys is not None and decided and not decided & set(keys):
            raise ParameterError(
                "db",
                f"{self.path}: reviews {meta.get('dataset')}: none of its {len(decided)} "
                f"reviewed items is in {dataset}; give another {{db}}",
            )

    def close(self) -> None:
        """Close the database."""
        self.con.close()

    def meta(self) -> dict:
        """The ``meta`` table: which dataset (file name) and kind this database reviews."""
        return dict(self.con.execute("SELECT key, value FROM meta"))

    def add(
        self,
        item: str,
        content_sha1: str,
        annotator: str,
        decision: str,
        reason: str | None = None,
        note: str | None = None,
        edits: dict | None = None,
    ) -> Decision:
        """Append a decision and commit it (durable when this returns)."""
        if decision not in DECISIONS:
            raise WikioriginError(f"decision {decision!r}: expected one of {', '.join(DECISIONS)}")
        if decision == "reject" and not (reason or note):
            raise WikioriginError("a reject needs a reason or a note")
        return self._insert(item, content_sha1, annotator, decision, reason, note, edits, None)

    def _insert(self, item, sha1, annotator, decision, reason, note, edits, undoes) -> Decision:
        at = datetime.now(timezone.utc).isoformat(timespec="milliseconds")
        text = edits_key(edits) if edits else None
        try:
            with self.con:
                cur = self.con.execute(
                    "INSERT INTO decisions (item, content_sha1, annotator, at, decision, reason, note, edits, undoes)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (item, sha1, annotator, at, decision, reason, note, text, undoes),
                )
        except sqlite3.DatabaseError as exc:  # rolled back: nothing of this row was written
            if _full(exc):
                raise NotSaved(
                    f"{self.path}: the disk is full: this {decision} was not saved (the decisions "
                    "before it are); free some space, then decide again"
                ) from None
            raise NotSaved(f"{self.path}: this {decision} was not saved ({exc}); the decisions before it are") from None
        return Decision(int(cur.lastrowid or 0), item, sha1, annotator, at, decision, reason, note, edits, undoes)

    def undo(self, annotator: str) -> Decision | None:
        """Take back the annotator's latest decision still in force (an ``undo`` row naming
        it); None when there is none."""
        last = self.effective(annotator)
        if not last:
            return None
        target = max(last, key=lambda d: d.seq)
        self._insert(target.item, target.content_sha1, annotator, "undo", None, None, None, target.seq)
        return target

    def history(self, item: str | None = None, after: int = 0) -> list[Decision]:
        """Every row (or every row on ``item``: an undo row names the item it undoes; only the
        rows after sequence number ``after``, when given), in the order written."""
        args: list[object] = [after]
        where = "WHERE seq > ?"
        if item is not None:
            where, args = where + " AND item = ?", [*args, item]
        rows = self.con.execute(
            "SELECT seq, item, content_sha1, annotator, at, decision, reason, note, "
            f"edits, undoes FROM decisions {where} ORDER BY seq",
            args,
        )
        return [Decision(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], self._edits(r[0], r[8]), r[9]) for r in rows]

    def _edits(self, seq: int, text: str | None) -> dict | None:
        """A row's edits (a JSON object), or a one-line error naming the database and the row."""
        if not text:
            return None
        try:
            edits = json.loads(text)
        except json.JSONDecodeError:
            edits = None
        if not isinstance(edits, dict):
            raise WikioriginError(f"{self.path}: decision {seq}: its edits are not a JSON object ({text[:60]!r})")
        return edits

    def effective(self, annotator: str | None = None, item: str | None = None) -> list[Decision]:
        """The decisions in force (on ``item``, when given), oldest first: not undo rows, not
        taken back."""
        rows = self.history(item)
        undone = {d.undoes for d in rows if d.decision == "undo"}
        return [
            d
            for d in rows
            if d.decision != "undo" and d.seq not in undone and (annotator is None or d.annotator == annotator)
        ]

    def current(self, item: str | None = None) -> dict[tuple[str, str], Decision]:
        """The state: ``(item, annotator)`` -> their latest decision in force (on ``item``
        only, when given: one indexed query, for the page's item view). The whole state is
        kept between calls and brought up to date with the rows added since (by any server
        sharing the database: rows are append-only and numbered in order); an undo among them
        has it read again whole."""
        if item is not None:
            return self._read_current(item)
        new = None if self._state is None else self.history(after=self._seen)
        if new is None or any(d.decision == "undo" for d in new):
            # the number first: a row added while the state is read is applied again next time, harmlessly
            self._seen = self.con.execute("SELECT coalesce(max(seq), 0) FROM decisions").fetchone()[0]
            self._state = self._read_current(None)
        else:  # a new row is the latest of its annotator on its item, and in force
            assert self._state is not None  # read above when there was none
            self._state.update(((d.item, d.annotator), d) for d in new)
            self._seen = max((d.seq for d in new), default=self._seen)
        return dict(self._state)

    def _read_current(self, item: str | None) -> dict[tuple[str, str], Decision]:
        return {(d.item, d.annotator): d for d in self.effective(item=item)}

    def annotators(self) -> list[str]:
        """Everyone who has written a decision, by name."""
        return [r[0] for r in self.con.execute("SELECT DISTINCT annotator FROM decisions ORDER BY annotator")]


def open_existing(
    path, dataset: str | None = None, kind: str | None = None, keys=None, keyed_by: str | None = None
) -> ReviewStore:
    """An existing review database (stats, export); a missing file is an error, and so is one
    that reviews another dataset than ``dataset`` of ``kind`` with ``keys``, when given."""
    path = Path(path)
    if path.is_dir():
        raise WikioriginError(f"{path}: a directory, not a review database")
    if not path.is_file():
        raise WikioriginError(f"{path}: no such review database (make one with `wikiorigin review serve`)")
    return ReviewStore(path, dataset or "?", kind, keys, keyed_by, readonly=True)


def status(decision: Decision | None, sha1: str) -> str:
    """An annotator's state of an item from their decision in force: ``pending`` (none, or
    skipped), ``accepted``, ``rejected``, or ``stale`` (made on other content)."""
    if decision is None or decision.decision == "skip":
        return "pending"
    if decision.content_sha1 != sha1:
        return "stale"
    return "accepted" if decision.decision == "accept" else "rejected"


def edits_key(edits: dict | None) -> str:
    """An accept's edits as canonical JSON (``"null"``: none, the item as it is): accepts with
    the same key accept the same version of an item (export's versions, stats' conflicts)."""
    return json.dumps(edits or None, ensure_ascii=False, sort_keys=True)
