"""Page-creation scan of stub-meta-history, pages-meta-history and File Export XML.

One pass, one record per page: its id, namespace, title, redirect flag, number of revisions
and its creation on this wiki. **Creation** is the earliest timestamp among the revisions made
on this wiki. Revisions imported from another wiki keep their old timestamps and carry a
contributor name with ``>`` (``en>Foo``, ``imported>Foo``): they are counted, and the earliest
timestamp of all revisions is kept too, but they do not set the creation time. Revisions come
in id order, not time order; ties on the timestamp go to the first revision in the file.

This is the hot path. The decompressed stream comes in chunks; the pages that lie whole in a
chunk are scanned where they lie. The compiled core (``_scanblock.c``, built by ``setup.py``)
walks every page and revision of a block with ``memchr``, without the GIL and on two threads,
and returns Arrow-ready buffers: nothing is made per page or revision in Python. Without a C
compiler the pure-Python path gives the same rows: per page one C-level ``findall`` of the
timestamps, and a per-revision path only for pages holding ``&gt;``. Revision text
(full-history files) is never parsed: dumps escape ``<`` inside text, so tag patterns cannot
match there. A page larger than a block (a long full history) is summarized piece by piece;
summaries of consecutive pieces combine with :func:`merge`, so memory stays flat.

Splitting at ``</page>`` trusts the markup, so the scan checks it on the way: a **structural
break** (an element not closed where the next one starts: a ``<page>`` inside a page, a
``<title>`` between revisions, a ``<revision>`` inside a revision, a ``</page>`` or
``</revision>`` without its opening tag, a ``<contributor>`` not closed in its revision, a
``<title>``, ``<ns>``, ``<id>``, ``<timestamp>`` or ``<username>`` running into the next tag)
would otherwise give a page the revisions of the next one, or keep markup in a title. Such a
page is left out, like a torn one: warned with its id and byte offset, counted in
``stats.broken_pages``, and the next page is read as usual. In the compiled core this costs
one more compare at each ``<`` it already stops at.

:func:`scan_pages` is the fast engine; :func:`scan_pages_mwxml` computes the same records with
mwxml, as an oracle for tests and a fallback (``--engine mwxml``). It stops at malformed XML
with an error naming the line, page and byte offset; only a file ending inside a page is a
torn end.
"""

from __future__ import annotations

import calendar
import re
import warnings
from concurrent.futures import ThreadPoolExecutor
from xml.etree import ElementTree
from xml.parsers.expat import errors as expat_errors
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from operator import itemgetter

import pyarrow as pa
import pyarrow.compute as pc

from ..errors import DumpError
from ..schemas import PAGE_COLUMNS, TIMESTAMP
from .compression import DumpStream, open_dump
from .xmlhead import SiteInfo, read_header

__all__ = ["PageCreation", "ScanStats", "StubScanner", "scan_pages", "scan_pages_mwxml"]

try:  # the compiled core (setup.py builds it when a C compiler is there)
    from . import _scanblock as CORE
except ImportError:  # pragma: no cover - depends on the build
    CORE = None

BLOCK = 1 << 22  # bytes read per call
MAX_PENDING = 1 << 25  # a page piece larger than this is summarized before its end arrives
NOTE_LIMIT = 20  # broken pages reported one by one; the others are counted

_HEAD = re.compile(
    rb"<page>\s*<title>([^<]*)</title>\s*<ns>(-?\d+)</ns>\s*<id>(\d+)</id>\s*(<redirect\b)?"
)
_REV = re.compile(
    rb"<revision>\s*<id>(\d+)</id>\s*(?:<parentid>\d*</parentid>\s*)?"
    rb"<timestamp>([^<]+)</timestamp>\s*"
    rb"<contributor(?:[^>]*/>|>\s*(?:<username>([^<]*)</username>|<username\s*/>|<ip>))"
)
_REV_ID = re.compile(rb"<id>(\d+)</id>")
_REV_TS = re.compile(rb"<timestamp>([^<]+)</timestamp>")
_TS_ONLY = re.compile(rb"<timestamp>([^<]+)<")
_REV_USER = re.compile(rb"<username>([^<]*)</username>")
_TS_FORMAT = re.compile(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\Z")
_TS = itemgetter(1)


@dataclass(slots=True)
class PageCreation:
    """One page and when it was created (times are UTC ``datetime``s)."""

    page_id: int
    namespace: int
    title: str
    is_redirect: bool
    created_at: datetime | None
    first_revision_at: datetime | None
    created_revision_id: int | None
    revisions: int
    imported_revisions: int


@dataclass(slots=True)
class ScanStats:
    """Counters of one scan; stats of the parts of a dump add with ``+``."""

    pages: int = 0
    revisions: int = 0
    imported_revisions: int = 0
    bytes: int = 0
    torn_pages: int = 0
    broken_pages: int = 0  # left out for a structural break (see StubScanner)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def __add__(self, other: "ScanStats") -> "ScanStats":
        return ScanStats(
            pages=self.pages + other.pages,
            revisions=self.revisions + other.revisions,
            imported_revisions=self.imported_revisions + other.imported_revisions,
            bytes=self.bytes + other.bytes,
            torn_pages=self.torn_pages + other.torn_pages,
            broken_pages=self.broken_pages + other.broken_pages,
            notes=self.notes + other.notes,
            seconds=self.seconds + other.seconds,
        )


# A summary of some revisions of one page:
# (revisions, imported, earliest of all as (id, ts), earliest local as (id, ts)).
Summary = tuple[int, int, "tuple[bytes, bytes] | None", "tuple[bytes, bytes] | None"]
EMPTY: Summary = (0, 0, None, None)


def _is_imported(user: bytes) -> bool:
    return b">" in user or b"&gt;" in user


def _first(a, b):
    """The earlier of two (id, ts) pairs; on a tie the one met first in the file (``a``)."""
    if a is None:
        return b
    if b is None or a[1] <= b[1]:
        return a
    return b


def merge(a: Summary, b: Summary) -> Summary:
    """Combine the summaries of two consecutive pieces of one page."""
    return (a[0] + b[0], a[1] + b[1], _first(a[2], b[2]), _first(a[3], b[3]))


class _Malformed(Exception):
    """Raised inside the scan; the scanner re-raises it as DumpError with the place."""


def _revisions_slow(buf: bytes, start: int, end: int) -> list[tuple[bytes, bytes, bytes]]:
    """Revision by revision, for pages the one-pass patterns do not cover."""
    revs = []
    for part in buf[start:end].split(b"<revision>")[1:]:
        rid, ts = _REV_ID.search(part), _REV_TS.search(part)
        if rid is None or ts is None:
            raise _Malformed("a <revision> without <id> or <timestamp>")
        contributor = part.split(b"</contributor>", 1)[0]
        user = _REV_USER.search(contributor)
        revs.append((rid.group(1), ts.group(1), user.group(1) if user else b""))
    return revs


def _detailed(buf: bytes, start: int, end: int) -> Summary:
    """Per-revision contributors: for pages that may hold imported revisions."""
    revs = _REV.findall(buf, start, end)
    n = buf.count(b"<revision>", start, end)
    if len(revs) != n:
        revs = _revisions_slow(buf, start, end)
    if not revs:
        return EMPTY
    first_all = min(revs, key=_TS)[:2]
    local = [r for r in revs if not _is_imported(r[2])]
    first_local = min(local, key=_TS)[:2] if local else None
    return (n, n - len(local), first_all, first_local)


def summarize(buf: bytes, start: int = 0, end: int | None = None) -> Summary:
    """Count and date the revisions in ``buf[start:end]``, a piece of one page.

    The common case (no ``&gt;`` in the piece, so no imported revision) costs one C-level
    ``findall`` of the timestamps; the revision id is read only at the earliest one.
    MediaWiki writes ``>`` in a contributor name as ``&gt;``; a piece holding ``&gt;``
    anywhere (comments too) takes the per-revision path.
    """
    if end is None:
        end = len(buf)
    if buf.find(b"&gt;", start, end) >= 0:
        return _detailed(buf, start, end)
    stamps = _TS_ONLY.findall(buf, start, end)
    if not stamps:
        return _detailed(buf, start, end) if buf.find(b"<revision>", start, end) >= 0 else EMPTY
    first = min(stamps)
    at = buf.find(b"<timestamp>" + first, start, end)
    rev = buf.rfind(b"<revision>", start, at)
    rid = _REV_ID.search(buf, rev, at) if rev >= 0 else None
    if rid is None:
        raise _Malformed("a <timestamp> outside a <revision> with an <id>")
    pair = (rid.group(1), first)
    return (len(stamps), 0, pair, pair)


# Structural breaks: an element not closed where the next one starts. The compiled core finds
# them in its one pass; the Python path looks for cheap signs (a second <page>, unpaired
# <revision> tags, a head or a timestamp the strict patterns do not match) and then walks the
# page as the core does, so both report the same break.
_SEEN = re.compile(rb"<[^>\n]{0,30}>?")
_WS = b" \t\r\n"


def _not_closed(buf: bytes, at: int, end: int, what: str) -> str:
    """The message of a break at ``at``: "<what> not closed where <seen> starts"."""
    seen = _SEEN.match(buf, at, end)
    if seen is None:
        return what
    return f"{what} not closed where {seen.group().decode('utf-8', 'replace')} starts"


def _text(buf: bytes, tag: bytes, start: int, end: int) -> tuple[int, int] | None:
    """The span of ``<tag>``'s text (up to the next ``<``) after ``start``, as the core reads it."""
    at = buf.find(b"<" + tag + b">", start, end)
    if at < 0:
        return None
    text = at + len(tag) + 2
    stop = buf.find(b"<", text, end)
    return None if stop < 0 else (text, stop)


def _closed(buf: bytes, at: int, end: int, tag: bytes) -> bool:
    close = b"</" + tag + b">"
    return buf.startswith(close, at) and at + len(close) <= end


def _head_break(buf: bytes, page: int, bound: int) -> tuple[int | None, tuple[int, str] | None]:
    """The page id and the first break in the head (title, ns, id) of the page at ``page``;
    the fields after a break are still read, so that the report names the page."""
    at, page_id, brk = page + 6, None, None
    while at < bound and buf[at] in _WS:
        at += 1
    if not buf.startswith(b"<title>", at):  # <title> comes first in a page
        return None, None
    for tag in (b"title", b"ns", b"id"):
        span = _text(buf, tag, at, bound)
        if span is None:
            break
        closed = _closed(buf, span[1], bound, tag)
        if not closed and brk is None:
            brk = (span[1], _not_closed(buf, span[1], bound, f"<{tag.decode()}>"))
        at = span[1]
        if tag == b"id" and closed and buf[span[0]:span[1]].isdigit():
            page_id = int(buf[span[0]:span[1]])
    return page_id, brk


def _contributor_break(buf: bytes, ts_end: int, end: int) -> tuple[int, str | None]:
    """``(cursor, None)``, or ``(where, what)`` for a ``<username>`` or ``<contributor>`` not
    closed, as the core reads the contributor after a revision's timestamp."""
    c = buf.find(b"<contributor", ts_end, end)
    if c < 0 or c - ts_end > 64:
        return ts_end, None
    close = buf.find(b">", c, end)
    if close < 0 or buf[close - 1] == 0x2F:  # "/>"
        return max(close, ts_end), None
    u = close + 1
    while u < end and buf[u] in _WS:
        u += 1
    if buf.startswith(b"<username>", u) and end - u > 10:
        stop = buf.find(b"<", u + 10, end)
        if stop < 0:
            return close, None
    else:
        c_end, which = _first_of(buf, b"</contributor>", b"</revision>", close, end)
        if c_end < 0:
            return close, None
        if which:
            return c_end, "<contributor>"
        span = _text(buf, b"username", close, c_end)
        if span is None:
            return c_end, None
        stop = span[1]
    return (stop, None) if _closed(buf, stop, end, b"username") else (stop, "<username>")


def _first_of(buf: bytes, a: bytes, b: bytes, start: int, end: int) -> tuple[int, int]:
    """The first of two tags after ``start``: (position or -1, 0 for ``a`` or 1 for ``b``)."""
    i, j = buf.find(a, start, end), buf.find(b, start, end)
    if j >= 0 and (i < 0 or j < i):
        return j, 1
    return i, 0


def _revisions_break(buf: bytes, r: int, end: int) -> tuple[int, str] | None:
    """The first break among the revisions from ``r`` (a ``<revision>`` or -1) to ``end`` (the
    page's ``</page>``); a revision without its id or timestamp raises :class:`_Malformed`."""
    while r >= 0:
        rid = _text(buf, b"id", r + 10, end)
        ts = _text(buf, b"timestamp", rid[1], end) if rid else None
        if rid is None or ts is None or rid[0] - r > 64 or ts[0] - rid[1] > 256:
            raise _Malformed("a <revision> without <id> or <timestamp>")
        for (_, stop), tag in ((rid, b"id"), (ts, b"timestamp")):
            if not _closed(buf, stop, end, tag):
                return stop, _not_closed(buf, stop, end, f"<{tag.decode()}>")
        cursor, unclosed = _contributor_break(buf, ts[1], end)
        if unclosed is not None:
            return cursor, _not_closed(buf, cursor, end, unclosed)
        r_end, which = _first_of(buf, b"</revision>", b"<revision>", cursor, end)
        if r_end < 0 or which:
            at = end if r_end < 0 else r_end
            return at, _not_closed(buf, at, end + 7, "<revision>")
        q = r_end + 11
        while q < end and buf[q] in _WS:
            q += 1
        if buf.startswith(b"<revision>", q) and q + 10 <= end:
            r = q
            continue
        r, which = _first_of(buf, b"<revision>", b"</revision>", q, end)
        if which:
            return r, "a </revision> without its <revision>"
        title = buf.find(b"<title>", q, r if r >= 0 else end)
        if title >= 0:  # the head of the next page, whose </page> and <page> were lost
            return title, _not_closed(buf, title, end, "<page>")
    return None


def _page_break(buf: bytes, page: int, end: int, nested: int):
    """``(page id, (offset, message) or None)`` for the page at ``page``: its first structural
    break, as the compiled core finds it. ``end``: its ``</page>``; ``nested``: the position
    of a ``<page>`` before it, or -1."""
    bound = nested if nested >= 0 else end
    page_id, brk = _head_break(buf, page, bound)
    if nested >= 0:
        return page_id, (nested, _not_closed(buf, nested, end, "<page>"))
    if brk is None and page_id is not None:
        first, which = _first_of(buf, b"<revision>", b"</revision>", page, end)
        if which:
            return page_id, (first, "a </revision> without its <revision>")
        brk = _revisions_break(buf, first, end)
    return page_id, brk


_ENTITY = re.compile(r"&(amp|lt|gt|quot|apos|#[0-9]+|#[xX][0-9a-fA-F]+);")
_NAMED = {"amp": "&", "lt": "<", "gt": ">", "quot": '"', "apos": "'"}


def _entity(m: re.Match) -> str:
    name = m.group(1)
    if name[0] != "#":
        return _NAMED[name]
    code = int(name[2:], 16) if name[1] in "xX" else int(name[1:])
    return chr(code) if 0 < code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else m.group(0)


def _title(raw: bytes) -> str:
    """Decode a title as the C core does: one pass over the references MediaWiki writes."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise _Malformed("a <title> that is not UTF-8") from None
    return _ENTITY.sub(_entity, text) if "&" in text else text


def _ms(ts: bytes | None) -> int | None:
    """Milliseconds since the epoch of ``YYYY-MM-DDTHH:MM:SSZ``."""
    if ts is None:
        return None
    if len(ts) != 20 or not _TS_FORMAT.match(ts):
        raise _Malformed(f"malformed <timestamp> {ts[:40]!r}")
    try:
        when = datetime.strptime(ts.decode("ascii"), "%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        raise _Malformed(f"malformed <timestamp> {ts[:40]!r}") from None
    return calendar.timegm(when.timetuple()) * 1000


def _raw_titles(titles: pa.Array) -> Iterator[str | None]:
    """Each title of a string array built without validation, None where it is not UTF-8."""
    _, offsets, data = titles.buffers()
    data = data.to_pybytes() if data else b""
    offsets = memoryview(offsets).cast("i")
    for i in range(len(titles)):
        try:
            yield data[offsets[i] : offsets[i + 1]].decode("utf-8")
        except UnicodeDecodeError:
            yield None


def _add_row(cols: list[list], head: tuple, s: Summary) -> None:
    """Append one page (a head ``(title, ns, id, redirect)`` of bytes and its summary)."""
    title, ns, page_id, redirect = head
    first_all, first_local = s[2], s[3]
    for column, value in zip(cols, (
        _title(title), int(ns), int(page_id), bool(redirect), s[0], s[1],
        _ms(first_all[1]) if first_all else None, int(first_all[0]) if first_all else None,
        _ms(first_local[1]) if first_local else None, int(first_local[0]) if first_local else None,
    )):
        column.append(value)


@dataclass(slots=True)
class _BigPage:
    """A page larger than a block, summarized piece by piece: its head ``(title, ns, id,
    redirect)``, the summary so far and its first structural break ``(offset, message)``."""

    head: tuple
    summary: Summary = EMPTY
    broken: tuple[int, str] | None = None


class StubScanner:
    """A single-pass reader of page creations from one XML dump file.

    ``batches()`` yields Arrow record batches in :data:`~wikiorigin.schemas.PAGE_COLUMNS`
    (the fast way); iterating the scanner yields :class:`PageCreation` records. Both share one
    pass over the file. ``namespaces`` limits the pages (``None``: all). Afterwards ``stats``
    holds the counters and ``torn`` describes a torn last page if there was one: it is reported
    with a warning and not counted, and every page before it is. A page with a structural
    break is left out the same way, and the scan goes on (``stats.broken_pages``; the first
    :data:`NOTE_LIMIT` are warned about one by one). ``scan_threads`` threads
    run the compiled core on parts of each block (it releases the GIL).
    """

    def __init__(
        self, stream: DumpStream, namespaces: Iterable[int] | None = None, scan_threads: int = 2
    ):
        self.stream = stream
        self.scan_threads = scan_threads
        self._pool: ThreadPoolExecutor | None = None
        self.namespaces = None if namespaces is None else sorted(set(namespaces))
        self.stats = ScanStats()
        self.torn: str | None = None
        self.siteinfo: SiteInfo | None = None

    def __iter__(self) -> Iterator[PageCreation]:
        for batch in self.batches():
            for row in batch.to_pylist():
                yield PageCreation(**row)

    def _where(self, offset: int, page_id: bytes | int | None = None) -> str:
        page = f", page id {int(page_id)}" if page_id is not None else ""
        return f"{self.stream.path}: near decompressed byte {offset}{page}"

    def batches(self) -> Iterator[pa.RecordBatch]:
        """Record batches of page creations (``schemas.PAGE_COLUMNS``), in dump order, read in one
        pass; :attr:`stats` counts what was seen. A single-pass iterator."""
        if CORE is not None and self.scan_threads > 1:
            self._pool = ThreadPoolExecutor(self.scan_threads, thread_name_prefix="wikiorigin-scan")
        try:
            yield from self._scan()
        finally:
            self.stream.close()
            if self._pool is not None:
                self._pool.shutdown()
                self._pool = None

    def _scan(self) -> Iterator[pa.RecordBatch]:
        """Blocks of whole pages, scanned where they lie in each chunk (no copy of the chunk):
        only the page that straddles two chunks is joined from its two halves."""
        self.siteinfo, leftover = read_header(self.stream.read, self.stream.path)
        rest, base = b"", self.stream.pos - len(leftover)  # base: decompressed offset of rest[0]
        big = None  # a page larger than a block, in progress
        for chunk in self._chunks(leftover):
            first = chunk.find(b"</page>")
            if first < 0:
                rest += chunk
                if len(rest) > MAX_PENDING and (cut := rest.rfind(b"</revision>")) > 0:
                    big, rest, base = self._big_piece(big, rest, cut + 11, base)
                continue
            joined = rest + chunk[: first + 7]
            chunk_base = base + len(rest)
            last = chunk.rfind(b"</page>") + 7
            segments = [(joined, 0, len(joined), base), (chunk, first + 7, last, chunk_base)]
            yield from self._block(segments, big)
            big = None
            rest, base = chunk[last:], chunk_base + last
        self._finish(rest, base, big and big.head)

    def _big_piece(self, big, rest: bytes, cut: int, base: int):
        """Summarize ``rest[:cut]``, whole revisions of a page larger than a block, into
        ``big`` (a :class:`_BigPage`, made at its first piece). Returns the page in progress
        (None when a ``<page>`` starts inside it: its end was lost), the rest and its base."""
        start = 0
        if big is None:
            head = self._head(rest, 0, cut, base)
            big, start = _BigPage(head.groups(b"")), head.start() + 6
        nested = rest.find(b"<page>", start, cut)
        if nested >= 0:
            self._broken(base + nested, big.head[2], _not_closed(rest, nested, len(rest), "<page>"))
            return None, rest[nested:], base + nested
        self._add_piece(big, rest, start, cut, base)
        return big, rest[cut:], base + cut

    def _add_piece(self, big, buf: bytes, start: int, end: int, base: int) -> None:
        """Add the revisions in ``buf[start:end]`` to ``big``, or note its first break."""
        if big.broken is not None:
            return
        if buf.count(b"<revision>", start, end) != buf.count(b"</revision>", start, end):
            try:
                brk = _revisions_break(buf, buf.find(b"<revision>", start, end), end)
            except _Malformed as exc:
                raise DumpError(f"{self._where(base + start, big.head[2])}: {exc}") from None
            at, message = brk or (start, "<revision> and </revision> do not pair up")
            big.broken = (base + at, message)
            return
        big.summary = merge(big.summary, self._summarize(buf, start, end, base, big.head[2]))

    def _close_big(self, big, buf: bytes, start: int, stop: int, base: int, batches: list) -> int:
        """Finish the page larger than a block at the first ``</page>`` of ``buf[start:stop]``:
        its row, or its report when it is broken. Returns where the next page starts."""
        end = buf.find(b"</page>", start, stop)
        nested = buf.find(b"<page>", start, end)
        if nested >= 0 and big.broken is None:
            big.broken = (base + nested, _not_closed(buf, nested, stop, "<page>"))
        if big.broken is None:
            self._add_piece(big, buf, start, end, base)
        if big.broken is not None:
            self._broken(big.broken[0], big.head[2], big.broken[1])
            return nested if nested >= 0 else end + 7
        cols: list[list] = [[] for _ in range(10)]
        self._add_row(cols, big.head, big.summary, base + start)
        batches.append(self._lists_batch(cols))
        return end + 7

    def _chunks(self, leftover: bytes) -> Iterator[bytes]:
        if leftover:
            yield leftover
        while chunk := self.stream.read(BLOCK):
            yield chunk

    def _head(self, buf: bytes, start: int, end: int, base: int) -> re.Match:
        at = buf.find(b"<page>", start, end)
        head = _HEAD.match(buf, at, end) if at >= 0 else None
        if head is None:
            raise DumpError(f"{self._where(base + start)}: expected <page> with <title>, <ns>, <id>")
        return head

    def _summarize(self, buf, start, end, base, page_id) -> Summary:
        try:
            return summarize(buf, start, end)
        except _Malformed as exc:
            raise DumpError(f"{self._where(base + start, page_id)}: {exc}") from None

    def _block(self, segments, big) -> Iterator[pa.RecordBatch]:
        """One record batch for the pages in ``segments``: ``(buf, start, stop, base)`` with
        ``buf[start:stop]`` ending with ``</page>`` and ``base`` the offset of ``buf[0]``.
        The first segment may begin with the end of a page larger than a block."""
        batches = []
        try:
            for buf, start, stop, base in segments:
                if big is not None:
                    start, big = self._close_big(big, buf, start, stop, base, batches), None
                if start < stop:
                    if CORE is not None:
                        for (a, b), result in self._core_scan(buf, start, stop):
                            self._core_batch(result, a, base, batches)
                    else:
                        batches.append(self._lists_batch(self._python_columns(buf, start, stop, base)))
                self.stats.bytes = base + stop
        finally:  # on an error, the pages before it still reach the caller
            batches = [b for b in batches if b.num_rows]
            if batches:
                yield self._finish_batch(pa.concat_batches(batches))

    def _core_scan(self, buf, start: int, stop: int):
        """Scan ``buf[start:stop]`` with the C core, in parallel parts (it releases the GIL).

        Returns ``((start, stop), result)`` pairs in file order."""
        ranges = [(start, stop)]
        if self._pool is not None and stop - start > 1 << 20:
            middle = buf.find(b"</page>", (start + stop) // 2, stop) + 7
            if start < middle < stop:
                ranges = [(start, middle), (middle, stop)]
        if len(ranges) == 1:
            return [(ranges[0], CORE.scan_block(buf, start, stop))]
        results = self._pool.map(lambda r: CORE.scan_block(buf, *r), ranges)
        return list(zip(ranges, results))

    def _core_batch(self, result, start: int, base: int, out: list) -> None:
        """Arrow arrays over the C core's buffers: no Python object per page."""
        n, *cols, broken, error = result
        for offset, page_id, message in broken:
            self._broken(base + offset, page_id if page_id >= 0 else None, message)
        titles, offsets, ns, ids, redirect, revs, imported = map(pa.py_buffer, cols[:7])
        all_ms, all_rid, all_valid, local_ms, local_rid, local_valid = map(pa.py_buffer, cols[7:])
        title_array = pa.Array.from_buffers(pa.string(), n, [None, offsets, titles])
        out.append(pa.RecordBatch.from_arrays([
            pa.Array.from_buffers(pa.int64(), n, [None, ids]),
            pa.Array.from_buffers(pa.int32(), n, [None, ns]),
            title_array,
            pa.Array.from_buffers(pa.bool_(), n, [None, redirect]),
            pa.Array.from_buffers(TIMESTAMP, n, [local_valid, local_ms]),
            pa.Array.from_buffers(TIMESTAMP, n, [all_valid, all_ms]),
            pa.Array.from_buffers(pa.int64(), n, [local_valid, local_rid]),
            pa.Array.from_buffers(pa.int32(), n, [None, revs]),
            pa.Array.from_buffers(pa.int32(), n, [None, imported]),
        ], schema=PAGE_COLUMNS))
        try:
            title_array.validate(full=True)
        except pa.ArrowInvalid:
            out.pop()
            bad = next(i for i, t in enumerate(_raw_titles(title_array)) if t is None)
            page_id = pa.Array.from_buffers(pa.int64(), n, [None, ids])[bad].as_py()
            raise DumpError(f"{self._where(base + start, page_id)}: a <title> that is not UTF-8") from None
        if error is not None:
            offset, page_id, message = error
            where = self._where(base + offset, page_id if page_id >= 0 else None)
            raise DumpError(f"{where}: {message}")

    def _python_columns(self, buf: bytes, start: int, stop: int, base: int) -> list[list]:
        """The pure-Python path, the same columns as the C core: per page one ``find`` of
        ``</page>`` and of the next ``<page>``, an anchored match of the head, one C-level
        ``findall`` of the timestamps, ``count``s of ``<``, ``</``, ``/>`` (every tag opened is
        closed) and of ``<revision>`` and ``</revision>`` (one timestamp each), one ``find`` of
        a second ``<title>`` (the head of a page whose bounds were lost) and one ``find`` of ``&gt;`` (the
        cheap sign of a possible import); no copies, nothing per revision. A page whose signs
        disagree is walked as the core walks it (:func:`_page_break`). Files made
        with ``--uploads`` (``<upload>`` elements carry timestamps) are not Wikimedia's public
        dumps; use ``--engine mwxml`` for them.
        """
        find, count, stamps_of = buf.find, buf.count, _REV_TS.findall
        cols: list[list] = [[] for _ in range(10)]
        pos, page = start, find(b"<page>", start, stop)
        while pos < stop:
            end = find(b"</page>", pos, stop)
            if end >= 0 and (page < 0 or end < page):  # a page whose <page> was lost
                rid = _text(buf, b"id", pos, end)
                page_id = buf[rid[0]:rid[1]] if rid and buf[rid[0]:rid[1]].isdigit() else None
                self._broken(base + end, page_id, "a </page> without its <page>")
                pos = end + 7
                continue
            if page < 0:
                break
            following = find(b"<page>", page + 6, stop)  # the next page, or one inside this
            nested = following if 0 <= following < end else -1
            head = _HEAD.match(buf, page)
            stamps = stamps_of(buf, page, end)
            # every tag opened is closed: as many "<" as twice the "</" plus the "/>"
            unbalanced = count(b"<", page, end) != 2 * count(b"</", page, end) + count(b"/>", page, end)
            if (nested >= 0 or head is None or unbalanced
                    or find(b"<title>", head.end(), end) >= 0  # a second page head
                    or count(b"<revision>", page, end) != len(stamps)
                    or count(b"</revision>", page, end) != len(stamps)):
                if self._walk(buf, page, end, nested, base):
                    pos, page = (nested if nested >= 0 else end + 7), following
                    continue
                head = head or self._head(buf, page, end, base)
            if not stamps or find(b"&gt;", page, end) >= 0:
                s = self._summarize(buf, page, end, base, head[3])
            else:
                earliest = min(stamps)
                at = find(b"<timestamp>" + earliest, page, end)
                rid = _REV_ID.search(buf, buf.rfind(b"<revision>", page, at), at)
                if rid is None:
                    if self._walk(buf, page, end, -1, base):  # its <id> not closed
                        pos, page = end + 7, following
                        continue
                    self._summarize(buf, page, end, base, head[3])  # raises with the place
                pair = (rid.group(1), earliest)
                s = (len(stamps), 0, pair, pair)
            self._add_row(cols, head.groups(), s, base + page)
            pos, page = end + 7, following
        return cols

    def _walk(self, buf: bytes, page: int, end: int, nested: int, base: int) -> bool:
        """Walk a page as the core does: report a structural break (True) or raise."""
        try:
            page_id, brk = _page_break(buf, page, end, nested)
        except _Malformed as exc:
            raise DumpError(f"{self._where(base + page)}: {exc}") from None
        if brk is not None:
            self._broken(base + brk[0], page_id, brk[1])
        return brk is not None

    def _broken(self, offset: int, page_id, message: str) -> None:
        """Report a page left out for a structural break: count it, warn about the first ones."""
        self.stats.broken_pages += 1
        if self.stats.broken_pages > NOTE_LIMIT:
            return
        note = f"{self._where(offset, page_id)}: {message}: broken page, not counted"
        if self.stats.broken_pages == NOTE_LIMIT:
            note += " (further broken pages are counted, not shown)"
        self.stats.notes.append(note)
        warnings.warn(note, stacklevel=4)

    def _add_row(self, cols, head, s: Summary, offset: int) -> None:
        try:
            _add_row(cols, head, s)
        except _Malformed as exc:
            raise DumpError(f"{self._where(offset, head[2])}: {exc}") from None

    @staticmethod
    def _lists_batch(cols: list[list]) -> pa.RecordBatch:
        titles, nss, ids, redirects, n, imported, all_ms, all_rid, local_ms, local_rid = cols
        return pa.RecordBatch.from_arrays([
            pa.array(ids, pa.int64()),
            pa.array(nss, pa.int32()),
            pa.array(titles, pa.string()),
            pa.array(redirects, pa.bool_()),
            pa.array(local_ms, TIMESTAMP),
            pa.array(all_ms, TIMESTAMP),
            pa.array(local_rid, pa.int64()),
            pa.array(n, pa.int32()),
            pa.array(imported, pa.int32()),
        ], schema=PAGE_COLUMNS)

    def _finish_batch(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """Apply the namespace filter and count what is kept."""
        if self.namespaces is not None:
            batch = batch.filter(pc.is_in(batch["namespace"], pa.array(self.namespaces, pa.int32())))
        stats = self.stats
        stats.pages += batch.num_rows
        stats.revisions += pc.sum(batch["revisions"]).as_py() or 0
        stats.imported_revisions += pc.sum(batch["imported_revisions"]).as_py() or 0
        return batch

    def _finish(self, rest: bytes, base: int, open_head) -> None:
        self.stats.bytes = base + len(rest)
        tail = rest.strip()
        if open_head is None and (not tail or tail == b"</mediawiki>"):
            return
        found = _HEAD.search(rest)
        head = open_head or (found.groups() if found else None)
        if open_head is None and b"<page>" not in rest:
            what = "the end of the file without </mediawiki>"
            if b"</mediawiki>" not in rest and tail:
                what = f"unexpected bytes {tail[:40]!r}"
            self.torn = f"{self._where(base)}: {what}"
        else:
            title = head[0].decode("utf-8", "replace") if head else "?"
            page_id = head[2] if head else None
            self.torn = f"{self._where(base, page_id)} ({title!r}): torn last page, not counted"
            self.stats.torn_pages += 1
        self.stats.notes.append(self.torn)
        warnings.warn(self.torn, stacklevel=3)


def scan_pages(
    path, namespaces: Iterable[int] | None = None, threads: int = 1, scan_threads: int = 2
) -> StubScanner:
    """Scan one dump file with the fast engine. Iterate the result for the records.

    ``threads``: bzip2 decoder threads; ``scan_threads``: threads of the compiled scan."""
    return StubScanner(open_dump(path, threads=threads), namespaces, scan_threads)


def scan_pages_mwxml(
    path, namespaces: Iterable[int] | None = None, threads: int = 1,
    stats: ScanStats | None = None,
) -> Iterator[PageCreation]:
    """The same records as :func:`scan_pages`, computed with mwxml (slow; the oracle).
    ``stats.bytes`` gets the decompressed bytes read, when ``stats`` is given.

    Only a file that ends inside a page is a torn end (warned, the pages before it kept);
    malformed XML anywhere else raises :class:`DumpError` naming the line, the page and its
    byte offset."""
    with open_dump(path) as head:
        read_header(head.read, path)  # the same refusals as the fast engine
    stats = stats if stats is not None else ScanStats()
    with open_dump(path, threads=threads) as stream:
        yield from _mwxml_records(stream, path, namespaces, stats)
        stats.bytes += stream.pos


# What expat says when the input ends inside the document: a file cut short, not damage
# inside it. Any other error (a mismatched tag, an invalid token) lies in the middle.
_TORN_CODES = frozenset(
    expat_errors.codes[m] for m in (
        expat_errors.XML_ERROR_NO_ELEMENTS, expat_errors.XML_ERROR_UNCLOSED_TOKEN,
        expat_errors.XML_ERROR_PARTIAL_CHAR,
    )
)


def _mwxml_records(stream, path, namespaces, stats: ScanStats) -> Iterator[PageCreation]:
    import mwxml
    from mwxml.errors import MalformedXML

    wanted = None if namespaces is None else frozenset(namespaces)
    pages = iter(mwxml.Dump.from_file(stream))
    last = None  # the id of the last page read whole
    while True:
        page = None
        try:
            page = next(pages, None)
            if page is None:
                return
            record = _mwxml_record(page, wanted)
        except ElementTree.ParseError as exc:
            if exc.code not in _TORN_CODES:
                where = _mwxml_place(path, page, last, exc.position)
                message = str(exc).rsplit(": line ", 1)[0]  # the place comes first
                raise DumpError(f"{where}: malformed XML: {message}") from None
            what = f"page id {page.id} ({page.title!r})" if page is not None else "the end"
            note = f"{path}: XML ends early in {what} ({exc}): torn last page, not counted"
            stats.torn_pages += page is not None
            stats.notes.append(note)
            warnings.warn(note, stacklevel=2)
            return
        except (MalformedXML, ValueError) as exc:
            raise DumpError(f"{_mwxml_place(path, page, last)}: malformed page: {exc}") from None
        last = page.id
        if record is not None:
            yield record


def _mwxml_place(path, page, last: int | None, position: tuple[int, int] | None = None) -> str:
    """Where mwxml met an error: the line (when expat gave one), the page being read, else the
    page holding that line, else the gap after the last page read whole; with the
    decompressed byte offset where that page (or the next one) starts."""
    where = f"{path}: line {position[0]}, column {position[1]}" if position else str(path)
    if page is not None:
        found = _find_page(path, page_id=page.id)
    elif position:
        found = _find_page(path, line=position[0])
    else:
        found = _find_page(path, after=last)
        before = f"before decompressed byte {found[0]} (page id {found[1]})" if found else "at the end"
        after = f"after page id {last}" if last is not None else "before the first page"
        return f"{where}, {after}, {before}"
    return f"{where}, page id {found[1]} (at decompressed byte {found[0]})" if found else where


def _find_page(path, page_id=None, after=None, line=None) -> tuple[int, int] | None:
    """``(decompressed offset, page id)`` of the page with id ``page_id``, else of the last
    page starting on or before line ``line``, else of the page after the page ``after`` (the
    first page when None). Reads the file once more (only on an error), in blocks."""
    found, previous = None, None
    for offset, head_line, head_id in _page_heads(path):
        if page_id is not None:
            if head_id == page_id:
                return offset, head_id
        elif line is not None:
            if head_line > line:
                break
            found = offset, head_id
        elif previous == after:
            return offset, head_id
        previous = head_id
    return found


_PAGE_OPEN = re.compile(rb"<page>")
_FIRST_ID = re.compile(rb"<id>(\d+)</id>")


def _page_heads(path, keep: int = 1 << 12) -> Iterator[tuple[int, int, int | None]]:
    """``(decompressed offset, line, page id)`` of each ``<page>``; the id is the first
    ``<id>`` after it (a damaged title does not hide it), None when there is none."""
    with open_dump(path) as stream:
        buf, base, line = b"", 0, 1  # buf[0] lies at decompressed offset base, on line `line`
        while True:
            chunk = stream.read(BLOCK)
            buf += chunk
            cut = max(len(buf) - keep, 0) if chunk else len(buf)  # heads before cut are whole
            counted = 0
            for m in _PAGE_OPEN.finditer(buf, 0, cut):
                line += buf.count(b"\n", counted, m.start())
                counted = m.start()
                page_id = _FIRST_ID.search(buf, m.end(), m.end() + keep)
                yield base + m.start(), line, int(page_id.group(1)) if page_id else None
            if not chunk:
                return
            line += buf.count(b"\n", counted, cut)
            buf, base = buf[cut:], base + cut


def _datetime(iso: str) -> datetime:
    return datetime.strptime(iso, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)


def _mwxml_record(page, wanted) -> PageCreation | None:
    if wanted is not None and page.namespace not in wanted:
        for _ in page:
            pass
        return None
    n = n_imported = 0
    first_all = first_local = None
    for rev in page:
        n += 1
        ts = rev.timestamp.long_format()  # ISO strings order as times do
        user = rev.user.text if rev.user is not None and rev.user.text else ""
        if first_all is None or ts < first_all[1]:
            first_all = (rev.id, ts)
        if ">" in user:
            n_imported += 1
        elif first_local is None or ts < first_local[1]:
            first_local = (rev.id, ts)
    return PageCreation(
        page_id=page.id,
        namespace=page.namespace,
        title=page.title,
        is_redirect=page.redirect is not None,
        created_at=_datetime(first_local[1]) if first_local else None,
        first_revision_at=_datetime(first_all[1]) if first_all else None,
        created_revision_id=first_local[0] if first_local else None,
        revisions=n,
        imported_revisions=n_imported,
    )
