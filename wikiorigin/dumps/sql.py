"""Rows of MySQL/MariaDB table dumps (``page_props.sql.gz``, ``redirect``, ``langlinks``, ...).

Wikimedia's table dumps are ``mysqldump`` output: a header (since 2025 MariaDB's
``/*M!999999\\- enable the sandbox mode */`` first line), ``CREATE TABLE`` with the column order,
then extended ``INSERT INTO `t` VALUES (...),(...);`` statements, one per line, each up to about
a megabyte. Strings use MySQL escapes (``\\'``, ``\\\\``, ``\\n``, ``\\0``, ...).

:class:`SqlDump` streams statements (never the whole file) and parses rows generically;
:func:`qids_table` takes the fast road for ``page_props``: one C-level ``findall`` per statement
picks only the ``wikibase_item`` rows.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc

from ..errors import DumpError
from ..schemas import QIDS
from .compression import open_dump

__all__ = ["SqlDump", "SqlStats", "unescape", "qids_table"]

_CREATE = re.compile(rb"CREATE TABLE `([^`]+)` \((.*?)\n\)", re.S)
_COLUMN = re.compile(rb"^\s+`([^`]+)`", re.M)
_INSERT = re.compile(rb"INSERT INTO `([^`]+)` VALUES ")
_ROW = re.compile(rb"\(((?:'(?:[^'\\]|\\.)*'|[^'()])*)\)", re.S)
_FIELD = re.compile(rb"'((?:[^'\\]|\\.)*)'|([^,']+)", re.S)
_ESCAPE = re.compile(rb"\\(.)", re.S)
_ESCAPES = {b"0": b"\0", b"b": b"\b", b"n": b"\n", b"r": b"\r", b"t": b"\t", b"Z": b"\x1a"}
_QID_ROW = re.compile(rb"\((\d+),'wikibase_item','((?:[^'\\]|\\.)*)'")
_QID = re.compile(r"Q[1-9][0-9]*\Z")


def unescape(raw: bytes) -> bytes:
    """Undo MySQL string escapes (``\\%`` and ``\\_`` keep their backslash, as MySQL does)."""
    if b"\\" not in raw:
        return raw
    return _ESCAPE.sub(
        lambda m: _ESCAPES.get(m.group(1), m.group(0) if m.group(1) in b"%_" else m.group(1)),
        raw,
    )


def _value(quoted: bytes, bare: bytes):
    if quoted or not bare:
        return unescape(quoted)
    bare = bare.strip()
    if bare == b"NULL":
        return None
    try:
        return int(bare)
    except ValueError:
        return float(bare)


@dataclass(slots=True)
class SqlStats:
    statements: int = 0
    rows: int = 0
    bytes: int = 0
    notes: list[str] = field(default_factory=list)


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

    def statements(self) -> Iterator[bytes]:
        with open_dump(self.path) as stream:
            buf, offset, seen_table = b"", 0, False
            while True:
                chunk = stream.read(1 << 22)
                buf += chunk
                lines = buf.split(b"\n")
                buf = lines.pop() if chunk else b""
                for line in lines:
                    values = self._line(line, offset)
                    offset += len(line) + 1
                    if values is not None:
                        seen_table = True
                        yield values
                if not chunk:
                    break
            if buf.strip():
                self._line(buf, offset)
            if not seen_table and not self.columns:
                raise DumpError(
                    f"{self.path}: not a MySQL table dump: no CREATE TABLE or INSERT INTO found"
                )
            self.stats.bytes = offset

    def _check_table(self, name: bytes, offset: int) -> None:
        found = name.decode("utf-8", "replace")
        if self.table is not None and found != self.table:
            raise DumpError(
                f"{self.path}: byte {offset}: expected a dump of table `{self.table}`, "
                f"found table `{found}`"
            )

    def _line(self, line: bytes, offset: int) -> bytes | None:
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
            return line[m.end() : line.rstrip().rfind(b";")]
        if line.startswith(b"CREATE TABLE"):
            self._create = line
        elif getattr(self, "_create", None) is not None:
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
                yield tuple(_value(q, b) for q, b in _FIELD.findall(row))


def qids_table(path, wiki: str, stats: SqlStats | None = None) -> pa.Table:
    """The ``qids`` table (wiki, page_id, qid) of one wiki's ``page_props`` dump.

    Rows come a statement at a time as Arrow columns. A ``wikibase_item`` value that is not a
    QID is left out and noted in ``stats.notes`` (pass a :class:`SqlStats` to see them).
    """
    dump = SqlDump(path, table="page_props")
    if stats is not None:
        dump.stats = stats
    chunks = []
    for values in dump.statements():
        if dump.columns[:3] not in ([], ["pp_page", "pp_propname", "pp_value"]):
            raise DumpError(f"{path}: unexpected page_props columns {dump.columns}")
        found = _QID_ROW.findall(values)
        if not found:
            continue
        pages, raw = zip(*found)
        qids = pa.array(raw, pa.binary()).cast(pa.string())
        ok = pc.match_substring_regex(qids, r"^Q[1-9][0-9]*$")
        if not pc.all(ok).as_py():
            for page, value in zip(pages, raw):
                text = unescape(value).decode("utf-8", "replace")
                if _QID.match(text) is None:
                    dump.stats.notes.append(f"{path}: page {int(page)}: not a QID: {text[:40]!r}")
        ids = pa.array(pages, pa.binary()).cast(pa.string()).cast(pa.int64())
        chunks.append(pa.table({"page_id": ids, "qid": qids}).filter(ok))
    table = pa.concat_tables(chunks) if chunks else QIDS.empty_table().drop_columns(["wiki"])
    dump.stats.rows += table.num_rows
    wikis = pa.array([wiki] * table.num_rows, pa.string())
    return pa.table([wikis, table["page_id"], table["qid"]], schema=QIDS)
