"""Rows of MySQL/MariaDB table dumps (``page_props.sql.gz``, ``redirect``, ``langlinks``, ...).

Wikimedia's table dumps are ``mysqldump`` output: a header (since 2025 MariaDB's
``/*M!999999\\- enable the sandbox mode */`` first line), ``CREATE TABLE`` with the column order,
then extended ``INSERT INTO `t` VALUES (...),(...);`` statements, one per line, each up to about
a megabyte. Strings use MySQL escapes (``\\'``, ``\\\\``, ``\\n``, ``\\0``, ...). Binary columns
may also come as ``_binary '...'`` (an introducer, as MySQL 8's mysqldump writes them) or as
``0x...`` (``mysqldump --hex-blob``); both are read as the bytes they stand for.

:class:`SqlDump` streams statements (never the whole file) and parses rows generically;
:func:`qids_table` takes the fast road for ``page_props``: one C-level ``findall`` per statement
picks only the ``wikibase_item`` rows, and a count of the word ``wikibase_item`` in the statement
checks that none was passed over (a row in a form it cannot read is counted and noted with its
byte offset, never dropped silently).
"""

from __future__ import annotations

import binascii
import bisect
import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc

from ..errors import DumpError
from ..files import provenance, write_table
from ..schemas import QIDS
from .compression import open_dump

__all__ = ["SqlDump", "SqlStats", "unescape", "qids_table", "qids_to_parquet"]

_CREATE = re.compile(rb"CREATE TABLE `([^`]+)` \((.*?)\n\)", re.S)
_COLUMN = re.compile(rb"^\s+`([^`]+)`", re.M)
_INSERT = re.compile(rb"INSERT INTO `([^`]+)` VALUES ")
_ROW = re.compile(rb"\(((?:'(?:[^'\\]|\\.)*'|[^'()])*)\)", re.S)
_FIELD = re.compile(rb"(?:_binary ?)?'((?:[^'\\]|\\.)*)'|0[xX]([0-9A-Fa-f]+)|([^,']+)", re.S)
_ESCAPE = re.compile(rb"\\(.)", re.S)
_ESCAPES = {b"0": b"\0", b"b": b"\b", b"n": b"\n", b"r": b"\r", b"t": b"\t", b"Z": b"\x1a"}
# page_props rows with a QID: the plain form (fast), and every form mysqldump writes.
_QID_ROW = re.compile(rb"\((\d+),'wikibase_item','((?:[^'\\]|\\.)*)'")
_HEX_ITEM = b"wikibase_item".hex().upper().encode()  # 77696B69626173655F6974656D
_ITEM_TOKENS = (b"wikibase_item", _HEX_ITEM, _HEX_ITEM.lower())  # the property name, as written
_QID_ROW_ANY = re.compile(
    rb"\((\d+),(?:(?:_binary ?)?'wikibase_item'|0[xX](?i:" + _HEX_ITEM + rb")),"
    rb"(?:(?:_binary ?)?'((?:[^'\\]|\\.)*)'|0[xX]([0-9A-Fa-f]*))"
)
_PROPNAME_AT = re.compile(rb"[^,'()]*,\s*(?:_binary\s*)?(?:'|0[xX])?")  # from "(" to the 2nd field
_QID = re.compile(r"Q[1-9][0-9]*\Z")
_INT64_MAX = (1 << 63) - 1
MAX_NOTES = 1000  # notes kept; the counts go on


def unescape(raw: bytes) -> bytes:
    """Undo MySQL string escapes (``\\%`` and ``\\_`` keep their backslash, as MySQL does)."""
    if b"\\" not in raw:
        return raw
    return _ESCAPE.sub(
        lambda m: _ESCAPES.get(m.group(1), m.group(0) if m.group(1) in b"%_" else m.group(1)),
        raw,
    )


def _value(quoted: bytes, hexed: bytes, bare: bytes):
    if hexed:
        return _unhex(hexed)
    if quoted or not bare:
        return unescape(quoted)
    bare = bare.strip()
    if bare == b"NULL":
        return None
    try:
        return int(bare)
    except ValueError:
        return float(bare)


def _unhex(hexed: bytes) -> bytes:
    return binascii.unhexlify(hexed if len(hexed) % 2 == 0 else b"0" + hexed)


def _row_value(m: re.Match) -> bytes:
    """The value of a ``wikibase_item`` row matched by ``_QID_ROW_ANY``: quoted as written
    (escapes kept), or hex decoded."""
    return _unhex(m[3]) if m[3] else m[2]


@dataclass(slots=True)
class SqlStats:
    """What a read saw. ``bad_values``: ``wikibase_item`` values that are not a QID;
    ``unreadable``: ``wikibase_item`` rows in a form that could not be read. Each is noted
    (file, byte offset, excerpt) in ``notes``, the first :data:`MAX_NOTES` of them."""

    statements: int = 0
    rows: int = 0
    bytes: int = 0
    bad_values: int = 0
    unreadable: int = 0
    notes: list[str] = field(default_factory=list)

    def note(self, text: str) -> None:
        """Keep ``text`` as a note, up to the first ``MAX_NOTES``."""
        if len(self.notes) < MAX_NOTES:
            self.notes.append(text)


class SqlDump:
    """One table dump, read statement by statement.

    ``table`` names the table the file must hold (``None``: any). ``columns`` is known once the
    ``CREATE TABLE`` has been read. Iterating :meth:`statements` yields the raw ``VALUES`` part
    of each ``INSERT``; :meth:`rows` parses them into tuples of ``bytes``/``int``/``float``/``None``.
    """

    def __init__(self, path, table: str | None = None):
        self.path = path
        self.table = table
        self.columns: list[str] = []
        self.stats = SqlStats()
        self._create: bytes | None = None  # a CREATE TABLE statement being read, line by line
        self._locked = False  # inside LOCK TABLES ... UNLOCK TABLES: a file ending there is cut

    def statements(self) -> Iterator[bytes]:
        """The ``VALUES`` part of each ``INSERT`` into the table, in file order (see
        :meth:`statements_at`)."""
        for _, values in self.statements_at():
            yield values

    def statements_at(self) -> Iterator[tuple[int, bytes]]:
        """``(byte offset, VALUES part)`` of each ``INSERT`` (offsets in the uncompressed text)."""
        with open_dump(self.path) as stream:
            buf, offset, seen_table = b"", 0, False
            while True:
                chunk = stream.read(1 << 22)
                buf += chunk
                lines = buf.split(b"\n")
                buf = lines.pop() if chunk else b""
                for line in lines:
                    found = self._line(line, offset)
                    if found is not None:
                        seen_table = True
                        yield offset + found[0], found[1]
                    offset += len(line) + 1
                if not chunk:
                    break
            if buf.strip():
                self._line(buf, offset)
            if not seen_table and not self.columns:
                raise DumpError(f"{self.path}: not a MySQL table dump: no CREATE TABLE or INSERT INTO found")
            if self._locked:
                raise DumpError(f"{self.path}: byte {offset}: the file ends before UNLOCK TABLES: cut short")
            self.stats.bytes = offset

    def _check_table(self, name: bytes, offset: int) -> None:
        found = name.decode("utf-8", "replace")
        if self.table is not None and found != self.table:
            raise DumpError(
                f"{self.path}: byte {offset}: expected a dump of table `{self.table}`, found table `{found}`"
            )

    def _line(self, line: bytes, offset: int) -> tuple[int, bytes] | None:
        """``(where the values start in the line, the values)`` of an INSERT line."""
        if line.startswith(b"INSERT INTO"):
            m = _INSERT.match(line)
            if m is None:
                raise DumpError(f"{self.path}: byte {offset}: malformed INSERT statement")
            self._check_table(m.group(1), offset)
            if not line.rstrip().endswith(b");"):
                raise DumpError(
                    f"{self.path}: byte {offset}: INSERT statement cut short "
                    f"(expected it to end with ');', found {line[-20:]!r})"
                )
            self.stats.statements += 1
            return m.end(), line[m.end() : line.rstrip().rfind(b";")]
        if line.startswith((b"LOCK TABLES", b"UNLOCK TABLES")):
            self._locked = line.startswith(b"LOCK")
        elif line.startswith(b"CREATE TABLE"):
            self._create = line
        elif self._create is not None:
            self._create += b"\n" + line
            if line.startswith(b")"):
                m = _CREATE.search(self._create)
                if m is None:
                    raise DumpError(f"{self.path}: byte {offset}: malformed CREATE TABLE")
                self._check_table(m.group(1), offset)
                self.columns = [c.decode() for c in _COLUMN.findall(m.group(2))]
                self._create = None
        return None

    def rows(self) -> Iterator[tuple]:
        """Every row, as a tuple of Python values in the table's column order."""
        for values in self.statements():
            for row in _ROW.findall(values):
                self.stats.rows += 1
                yield tuple(_value(q, h, b) for q, h, b in _FIELD.findall(row))


def qids_table(path, wiki: str, stats: SqlStats | None = None) -> pa.Table:
    """The ``qids`` table (wiki, page_id, qid) of one wiki's ``page_props`` dump.

    Rows come a statement at a time as Arrow columns; values may be plain strings, ``_binary
    '...'`` or ``0x...``. A ``wikibase_item`` value that is not a QID, or a ``wikibase_item`` row
    in a form that cannot be read, is left out, counted (``stats.bad_values``,
    ``stats.unreadable``) and noted with its byte offset in ``stats.notes``; without ``stats``,
    one warning says how many were left out. A page id beyond int64 or a value that is not
    UTF-8 is a :class:`DumpError` naming the byte offset.
    """
    dump = SqlDump(path, table="page_props")
    if stats is not None:
        dump.stats = stats
    chunks = []
    for at, values in dump.statements_at():
        if dump.columns[:3] not in ([], ["pp_page", "pp_propname", "pp_value"]):
            raise DumpError(f"{path}: unexpected page_props columns {dump.columns}")
        found = _qid_rows(values, at, dump)
        if found:
            chunks.append(_qid_chunk(found, values, at, dump))
    table = pa.concat_tables(chunks) if chunks else QIDS.empty_table().drop_columns(["wiki"])
    dump.stats.rows += table.num_rows
    left_out = dump.stats.bad_values + dump.stats.unreadable
    if stats is None and left_out:
        warnings.warn(
            f"{path}: {dump.stats.bad_values} wikibase_item values not a QID and "
            f"{dump.stats.unreadable} rows unreadable, left out; the first: "
            f"{dump.stats.notes[0]}",
            stacklevel=2,
        )
    wikis = pa.repeat(pa.scalar(wiki, pa.string()), table.num_rows)
    return pa.table([wikis, table["page_id"], table["qid"]], schema=QIDS)


def qids_to_parquet(page_props, wiki: str, out, *, meta: dict | None = None) -> SqlStats:
    """Read one wiki's ``page_props`` dump into the ``qids`` file ``out`` (wiki, page_id, qid).

    ``meta``: more provenance fields for the file's metadata. Returns what the read saw: ``rows``
    written, values left out and their notes (see :func:`qids_table`); raises
    :class:`DumpError` as it does."""
    stats = SqlStats()
    table = qids_table(page_props, wiki, stats)
    write_table(table, out, QIDS, provenance(stage="qids", wiki=wiki, **(meta or {})))
    return stats


def _qid_rows(values: bytes, at: int, dump: SqlDump) -> list[tuple[bytes, bytes]]:
    """``(page id, value)`` of the ``wikibase_item`` rows of one statement (values as written,
    hex decoded). A statement's form is told by its first bytes (mysqldump writes every row of
    a dump in one form). Plain statements take one ``findall``; a statement in another form, or
    one in which the word ``wikibase_item`` occurs more often than rows were found, is read with
    the general pattern and each occurrence outside a row read is checked
    (:func:`_note_unreadable`)."""
    head = values[:256]
    if b"_binary" not in head and b"0x" not in head and b"0X" not in head:
        found = _QID_ROW.findall(values)
        occurrences = values.count(b"wikibase_item")
        if len(found) == occurrences:
            return found
    else:
        occurrences = sum(values.count(token) for token in _ITEM_TOKENS)
    matches = list(_QID_ROW_ANY.finditer(values))
    if len(matches) < occurrences:
        _note_unreadable(values, at, matches, dump)
    return [(m[1], _row_value(m)) for m in matches]


def _note_unreadable(values: bytes, at: int, matches: list[re.Match], dump: SqlDump) -> None:
    """Count and note each ``wikibase_item`` that stands where a row's property name does
    (the second field after a ``(``) but is not part of a row that was read."""
    spans = {(m.start(), m.end()) for m in matches}
    starts = sorted(spans)
    for token in _ITEM_TOKENS:
        p = values.find(token)
        while p >= 0:
            i = bisect.bisect_right(starts, (p, 1 << 62)) - 1
            inside = i >= 0 and p < starts[i][1]
            row = values.rfind(b"(", 0, p)
            if not inside and row >= 0 and _PROPNAME_AT.fullmatch(values, row + 1, p):
                dump.stats.unreadable += 1
                end = values.find(b")", p)
                excerpt = values[row : min(end + 1 if end >= 0 else len(values), row + 80)]
                dump.stats.note(
                    f"{dump.path}: byte {at + row}: a wikibase_item row that cannot "
                    f"be read: {excerpt.decode('utf-8', 'replace')!r}"
                )
            p = values.find(token, p + len(token))


def _qid_chunk(found: list[tuple[bytes, bytes]], values: bytes, at: int, dump: SqlDump) -> pa.Table:
    """``(page_id, qid)`` Arrow columns of one statement's rows; the values that are not QIDs
    are noted and left out."""
    pages, raw = zip(*found)
    try:
        ids = pa.array(pages, pa.binary()).cast(pa.string()).cast(pa.int64())
    except pa.ArrowInvalid:
        pos, page = next((pos, page) for pos, page, _ in _positions(values) if int(page) > _INT64_MAX)
        raise DumpError(
            f"{dump.path}: byte {at + pos}: page id {page.decode()} of a wikibase_item "
            f"row is beyond int64 ({_INT64_MAX})"
        ) from None
    try:
        qids = pa.array(raw, pa.binary()).cast(pa.string())
    except pa.ArrowInvalid:
        pos, page, value = next(r for r in _positions(values) if not _utf8(r[2]))
        raise DumpError(
            f"{dump.path}: byte {at + pos}: page {page.decode()}: the wikibase_item value is not UTF-8: {value[:40]!r}"
        ) from None
    ok = pc.match_substring_regex(qids, r"^Q[1-9][0-9]*$")
    if not pc.all(ok).as_py():
        for pos, page, value in _positions(values):
            text = unescape(value).decode("utf-8", "replace")
            if _QID.match(text) is None:
                dump.stats.bad_values += 1
                dump.stats.note(f"{dump.path}: byte {at + pos}: page {page.decode()}: not a QID: {text[:40]!r}")
        return pa.table({"page_id": ids, "qid": qids}).filter(ok)
    return pa.table({"page_id": ids, "qid": qids})


def _positions(values: bytes) -> Iterator[tuple[int, bytes, bytes]]:
    """``(offset, page id, value)`` of each ``wikibase_item`` row (the slow road, for messages)."""
    for m in _QID_ROW_ANY.finditer(values):
        yield m.start(), m[1], _row_value(m)


def _utf8(value: bytes) -> bool:
    try:
        value.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
