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

:func:`scan_pages` is the fast engine; :func:`scan_pages_mwxml` computes the same records with
mwxml, as an oracle for tests and a fallback (``--engine mwxml``).
"""

from __future__ import annotations

import calendar
import re
import warnings
from concurrent.futures import ThreadPoolExecutor
from xml.etree import ElementTree
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
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def __add__(self, other: "ScanStats") -> "ScanStats":
        return ScanStats(
            self.pages + other.pages,
            self.revisions + other.revisions,
            self.imported_revisions + other.imported_revisions,
            self.bytes + other.bytes,
            self.torn_pages + other.torn_pages,
            self.notes + other.notes,
            self.seconds + other.seconds,
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


class StubScanner:
    """A single-pass reader of page creations from one XML dump file.

    ``batches()`` yields Arrow record batches in :data:`~wikiorigin.schemas.PAGE_COLUMNS`
    (the fast way); iterating the scanner yields :class:`PageCreation` records. Both share one
    pass over the file. ``namespaces`` limits the pages (``None``: all). Afterwards ``stats``
    holds the counters and ``torn`` describes a torn last page if there was one: it is reported
    with a warning and not counted, and every page before it is. ``scan_threads`` threads
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
        open_head, open_sum = None, EMPTY  # a page larger than a block, in progress
        for chunk in self._chunks(leftover):
            first = chunk.find(b"</page>")
            if first < 0:
                rest += chunk
                if len(rest) > MAX_PENDING and (cut := rest.rfind(b"</revision>")) > 0:
                    if open_head is None:
                        open_head = self._head(rest, 0, cut, base).groups(b"")
                    open_sum = merge(open_sum, self._summarize(rest, 0, cut, base, open_head[2]))
                    rest, base = rest[cut:], base + cut
                continue
            joined = rest + chunk[: first + 7]
            chunk_base = base + len(rest)
            last = chunk.rfind(b"</page>") + 7
            segments = [(joined, 0, len(joined), base), (chunk, first + 7, last, chunk_base)]
            yield from self._block(segments, open_head, open_sum)
            open_head, open_sum = None, EMPTY
            rest, base = chunk[last:], chunk_base + last
        self._finish(rest, base, open_head)

    def _chunks(self, leftover: bytes) -> Iterator[bytes]:
        if leftover:
            yield leftover
        while chunk := self.stream.read(BLOCK):
            yield chunk

    def _head(self, buf: bytes, start: int, end: int, base: int) -> re.Match:
        head = _HEAD.search(buf, start, end)
        if head is None:
            raise DumpError(f"{self._where(base + start)}: expected <page> with <title>, <ns>, <id>")
        return head

    def _summarize(self, buf, start, end, base, page_id) -> Summary:
        try:
            return summarize(buf, start, end)
        except _Malformed as exc:
            raise DumpError(f"{self._where(base + start, page_id)}: {exc}") from None

    def _block(self, segments, open_head, open_sum) -> Iterator[pa.RecordBatch]:
        """One record batch for the pages in ``segments``: ``(buf, start, stop, base)`` with
        ``buf[start:stop]`` ending with ``</page>`` and ``base`` the offset of ``buf[0]``.
        The first segment may begin with the end of a page larger than a block."""
        batches = []
        try:
            for buf, start, stop, base in segments:
                if open_head is not None:
                    end = buf.find(b"</page>", start, stop)
                    s = merge(open_sum, self._summarize(buf, start, end, base, open_head[2]))
                    cols: list[list] = [[] for _ in range(10)]
                    self._add_row(cols, open_head, s, base + start)
                    batches.append(self._lists_batch(cols))
                    open_head, start = None, end + 7
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
        n, *cols, error = result
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
        """The pure-Python path, the same columns as the C core: page heads from one
        ``findall``; per page one ``find`` of ``</page>``, one C-level ``findall`` of the
        timestamps and one ``find`` of ``&gt;`` (the cheap sign of a possible import); no
        copies, nothing per revision. Files made with ``--uploads`` (``<upload>`` elements
        carry timestamps) are not Wikimedia's public dumps; use ``--engine mwxml`` for them.
        """
        find, stamps_of = buf.find, _TS_ONLY.findall
        heads = _HEAD.findall(buf, start, stop)
        cols: list[list] = [[] for _ in range(10)]
        first, i = start, 0
        while start < stop:
            end = find(b"</page>", start, stop)
            if i >= len(heads) or not heads[i][2]:
                break
            stamps = stamps_of(buf, start, end)
            if not stamps or find(b"&gt;", start, end) >= 0:
                s = self._summarize(buf, start, end, base, heads[i][2])
            else:
                earliest = min(stamps)
                at = find(b"<timestamp>" + earliest, start, end)
                rid = _REV_ID.search(buf, buf.rfind(b"<revision>", start, at), at)
                if rid is None:
                    self._summarize(buf, start, end, base, heads[i][2])  # raises with the place
                pair = (rid.group(1), earliest)
                s = (len(stamps), 0, pair, pair)
            self._add_row(cols, heads[i], s, base + start)
            start, i = end + 7, i + 1
        if i != len(heads) or start < stop:  # a page without a well-formed head: find it
            start = first
            while start < stop:
                end = find(b"</page>", start, stop)
                self._head(buf, start, end, base)
                start = end + 7
        return cols

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
    ``stats.bytes`` gets the decompressed bytes read, when ``stats`` is given."""
    with open_dump(path) as head:
        read_header(head.read, path)  # the same refusals as the fast engine
    with open_dump(path, threads=threads) as stream:
        yield from _mwxml_records(stream, path, namespaces)
        if stats is not None:
            stats.bytes += stream.pos


def _mwxml_records(stream, path, namespaces) -> Iterator[PageCreation]:
    import mwxml

    wanted = None if namespaces is None else frozenset(namespaces)
    pages = iter(mwxml.Dump.from_file(stream))
    while True:
        try:
            page = next(pages, None)
            if page is None:
                return
            record = _mwxml_record(page, wanted)
        except ElementTree.ParseError as exc:
            note = f"{path}: XML ends early ({exc}): torn last page, not counted"
            warnings.warn(note, stacklevel=2)
            return
        if record is not None:
            yield record


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
