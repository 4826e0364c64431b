"""The reader of page creations from one XML dump file: blocks, the compiled core, big pages.

:class:`StubScanner` reads the decompressed stream in blocks; the pages that lie whole in a
block are scanned where they lie, by the compiled core (``_scanblock.c``, built by
``setup.py``: every page and revision walked without the GIL, page and revision ends found 16
or 32 bytes at a time, on two threads, into Arrow-ready buffers) or, without a C compiler, by the pure-Python path (``_pyscan.py``),
which gives the same rows. A page larger than a block (a long full history) is summarized piece
by piece (:func:`~wikiorigin.dumps.creation.merge`), so memory stays flat. A page with a
structural break is reported and left out; a torn last page likewise. See
:mod:`wikiorigin.dumps.stubs` for the rules.
"""

from __future__ import annotations

import warnings
from array import array
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import pyarrow as pa

from ..errors import DumpError
from ..schemas import PAGE_COLUMNS, TIMESTAMP
from ._breaks import Malformed, not_closed, page_number, revisions_break
from ._pyscan import HEAD, Columns, Head, Places, expect_head, python_columns, summarize_at
from .compression import DumpStream
from .creation import EMPTY, PageCreation, ScanStats, Summary, merge
from .xmlhead import SiteInfo, read_header

__all__ = ["StubScanner", "BLOCK", "MAX_PENDING", "NOTE_LIMIT"]

try:  # the compiled core (setup.py builds it when a C compiler is there)
    from . import _scanblock as CORE
except ImportError:  # pragma: no cover - depends on the build
    CORE = None

BLOCK = 1 << 22
"""Bytes read from the decompressed stream per call."""
MAX_PENDING = 1 << 25
"""A page piece larger than this is summarized before its end arrives."""
NOTE_LIMIT = 20
"""Broken pages reported one by one (a warning each); the others are counted. Kept small, unlike
``sql.MAX_NOTES``, because each of these notes is also a warning on stderr."""


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


def _total(column: pa.Array) -> int:
    """The sum of an int32 column without nulls, read from its buffer (pyarrow.compute takes
    a tenth of a second to import, more than it would take here)."""
    if not len(column):
        return 0
    values = memoryview(column.buffers()[1]).cast("i")
    return sum(values[column.offset : column.offset + len(column)])


def _int32s(values: list[int]) -> pa.Array:
    """An int32 array made from its buffer: ``pa.array`` on a list imports pandas."""
    return pa.Array.from_buffers(pa.int32(), len(values), [None, pa.py_buffer(array("i", values))])


@dataclass(slots=True)
class _BigPage:
    """A page larger than a block, summarized piece by piece: its head, the summary so far
    and its first structural break ``(offset, message)``."""

    head: Head
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

    def __init__(self, stream: DumpStream, namespaces: Iterable[int] | None = None, scan_threads: int = 2):
        self.stream = stream
        self.scan_threads = scan_threads
        self._pool: ThreadPoolExecutor | None = None
        self.namespaces = None if namespaces is None else sorted(set(namespaces))
        self.stats = ScanStats()
        self.torn: str | None = None
        self.siteinfo: SiteInfo | None = None
        self._places = Places(self._where, self._broken)

    def __iter__(self) -> Iterator[PageCreation]:
        for batch in self.batches():
            for row in batch.to_pylist():
                yield PageCreation(**row)

    def _where(self, offset: int, page_id: bytes | int | None = None) -> str:
        if isinstance(page_id, bytes):  # as the dump writes it: named when the core can read it
            page_id = page_number(page_id)
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
        only the page that straddles two chunks is joined from its two halves.

        With the scan threads, a block's pages are scanned while the block before it is turned
        into its record batch and written: the block waits in ``pending`` (whatever it holds,
        and any error, reaches the caller before anything read after it)."""
        self.siteinfo, leftover = read_header(self.stream.read, self.stream.path)
        rest, base = b"", self.stream.pos - len(leftover)  # base: decompressed offset of rest[0]
        big = None  # a page larger than a block, in progress
        pending = None  # (segments, big, started core scans) of the block read last
        chunks = self._chunks(leftover)
        while True:
            try:
                chunk = next(chunks, None)
            except BaseException:  # a damaged stream: the block before the damage comes first
                if pending is not None:
                    yield from self._block(*pending)
                raise
            if chunk is None:
                break
            first = chunk.find(b"</page>")
            if first < 0:
                if pending is not None:
                    yield from self._block(*pending)
                    pending = None
                rest += chunk
                if len(rest) > MAX_PENDING and (cut := rest.rfind(b"</revision>")) > 0:
                    big, rest, base = self._big_piece(big, rest, cut + 11, base)
                continue
            joined = rest + chunk[: first + 7]
            chunk_base = base + len(rest)
            last = chunk.rfind(b"</page>") + 7
            segments = [(joined, 0, len(joined), base), (chunk, first + 7, last, chunk_base)]
            started = self._start(segments, self._pool) if big is None and self._pool is not None else None
            if pending is not None:
                yield from self._block(*pending)
            pending = (segments, big, started)
            big = None
            rest, base = chunk[last:], chunk_base + last
        if pending is not None:
            yield from self._block(*pending)
        self._finish(rest, base, big and big.head)

    def _start(self, segments, pool: ThreadPoolExecutor) -> list:
        """The core scans of ``segments`` started on the scan threads: for each segment, its
        ``((start, stop), future)`` parts in file order."""
        started = []
        for buf, start, stop, _ in segments:
            parts = self._parts(buf, start, stop) if start < stop else []
            started.append([(r, pool.submit(CORE.scan_block, buf, *r)) for r in parts])
        return started

    def _big_piece(self, big, rest: bytes, cut: int, base: int):
        """Summarize ``rest[:cut]``, whole revisions of a page larger than a block, into
        ``big`` (a :class:`_BigPage`, made at its first piece). Returns the page in progress
        (None when a ``<page>`` starts inside it: its end was lost), the rest and its base."""
        start = 0
        if big is None:
            head = expect_head(rest, 0, cut, base, self._where)
            big, start = _BigPage(Head._make(head.groups(b""))), head.start() + 6
        nested = rest.find(b"<page>", start, cut)
        if nested >= 0:
            self._broken(base + nested, big.head.page_id, not_closed(rest, nested, len(rest), "<page>"))
            return None, rest[nested:], base + nested
        self._add_piece(big, rest, start, cut, base)
        return big, rest[cut:], base + cut

    def _add_piece(self, big, buf: bytes, start: int, end: int, base: int) -> None:
        """Add the revisions in ``buf[start:end]`` to ``big``, or note its first break."""
        if big.broken is not None:
            return
        if buf.count(b"<revision>", start, end) != buf.count(b"</revision>", start, end):
            try:
                brk = revisions_break(buf, buf.find(b"<revision>", start, end), end)
            except Malformed as exc:
                raise DumpError(f"{self._where(base + start, big.head.page_id)}: {exc}") from None
            at, message = brk or (start, "<revision> and </revision> do not pair up")
            big.broken = (base + at, message)
            return
        big.summary = merge(big.summary, summarize_at(buf, start, end, base, big.head.page_id, self._where))

    def _close_big(self, big, buf: bytes, start: int, stop: int, base: int, batches: list) -> int:
        """Finish the page larger than a block at the first ``</page>`` of ``buf[start:stop]``:
        its row, or its report when it is broken. Returns where the next page starts."""
        end = buf.find(b"</page>", start, stop)
        nested = buf.find(b"<page>", start, end)
        if nested >= 0 and big.broken is None:
            big.broken = (base + nested, not_closed(buf, nested, stop, "<page>"))
        if big.broken is None:
            self._add_piece(big, buf, start, end, base)
        if big.broken is not None:
            self._broken(big.broken[0], big.head.page_id, big.broken[1])
            return nested if nested >= 0 else end + 7
        cols = Columns()
        cols.add_at(big.head, big.summary, base + start, self._where)
        batches.append(cols.batch())
        return end + 7

    def _chunks(self, leftover: bytes) -> Iterator[bytes]:
        if leftover:
            yield leftover
        while chunk := self.stream.read(BLOCK):
            yield chunk

    def _block(self, segments, big, started=None) -> Iterator[pa.RecordBatch]:
        """One record batch for the pages in ``segments``: ``(buf, start, stop, base)`` with
        ``buf[start:stop]`` ending with ``</page>`` and ``base`` the offset of ``buf[0]``.
        The first segment may begin with the end of a page larger than a block. ``started``:
        the segments' core scans already under way (:meth:`_start`)."""
        batches: list[pa.RecordBatch] = []
        try:
            for i, (buf, start, stop, base) in enumerate(segments):
                if big is not None:
                    start, big = self._close_big(big, buf, start, stop, base, batches), None
                if start < stop:
                    if started is not None:
                        for (a, _), future in started[i]:
                            self._core_batch(future.result(), a, base, batches)
                    elif CORE is not None:
                        for (a, _), result in self._core_scan(buf, start, stop):
                            self._core_batch(result, a, base, batches)
                    else:
                        cols = Columns()
                        try:
                            python_columns(buf, start, stop, base, self._places, cols)
                        finally:  # the pages before an error are kept, as the core keeps them
                            batches.append(cols.batch())
                self.stats.bytes = base + stop
        finally:  # on an error, the pages before it still reach the caller
            batches = [b for b in batches if b.num_rows]
            if batches:
                yield self._finish_batch(pa.concat_batches(batches))

    def _parts(self, buf, start: int, stop: int) -> list[tuple[int, int]]:
        """``buf[start:stop]`` cut at a ``</page>`` near its middle when the scan threads are
        there and it is large: the parts scanned in parallel."""
        if self._pool is not None and stop - start > 1 << 20:
            middle = buf.find(b"</page>", (start + stop) // 2, stop) + 7
            if start < middle < stop:
                return [(start, middle), (middle, stop)]
        return [(start, stop)]

    def _core_scan(self, buf, start: int, stop: int):
        """Scan ``buf[start:stop]`` with the C core, in parallel parts (it releases the GIL).

        Returns ``((start, stop), result)`` pairs in file order."""
        ranges, pool = self._parts(buf, start, stop), self._pool
        if len(ranges) == 1 or pool is None:
            return [(ranges[0], CORE.scan_block(buf, start, stop))]
        results = pool.map(lambda r: CORE.scan_block(buf, *r), ranges)
        return list(zip(ranges, results))

    def _core_batch(self, result, start: int, base: int, out: list) -> None:
        """Arrow arrays over the C core's buffers: no Python object per page."""
        n, *cols, broken, error = result
        for offset, page_id, message in broken:
            self._broken(base + offset, page_id if page_id >= 0 else None, message)
        titles, offsets, ns, ids, redirect, revs, imported = map(pa.py_buffer, cols[:7])
        all_ms, all_rid, all_valid, local_ms, local_rid, local_valid = map(pa.py_buffer, cols[7:])
        title_array = pa.Array.from_buffers(pa.string(), n, [None, offsets, titles])
        out.append(
            pa.RecordBatch.from_arrays(
                [
                    pa.Array.from_buffers(pa.int64(), n, [None, ids]),
                    pa.Array.from_buffers(pa.int32(), n, [None, ns]),
                    title_array,
                    pa.Array.from_buffers(pa.bool_(), n, [None, redirect]),
                    pa.Array.from_buffers(TIMESTAMP, n, [local_valid, local_ms]),
                    pa.Array.from_buffers(TIMESTAMP, n, [all_valid, all_ms]),
                    pa.Array.from_buffers(pa.int64(), n, [local_valid, local_rid]),
                    pa.Array.from_buffers(pa.int32(), n, [None, revs]),
                    pa.Array.from_buffers(pa.int32(), n, [None, imported]),
                ],
                schema=PAGE_COLUMNS,
            )
        )
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

    def _finish_batch(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """Apply the namespace filter and count what is kept."""
        if self.namespaces is not None:
            import pyarrow.compute as pc

            batch = batch.filter(pc.is_in(batch["namespace"], _int32s(self.namespaces)))
        stats = self.stats
        stats.pages += batch.num_rows
        stats.revisions += _total(batch["revisions"])
        stats.imported_revisions += _total(batch["imported_revisions"])
        return batch

    def _finish(self, rest: bytes, base: int, open_head) -> None:
        self.stats.bytes = base + len(rest)
        tail = rest.strip()
        if open_head is None and tail == b"</mediawiki>":
            return
        found = HEAD.search(rest)
        head = open_head or (Head._make(found.groups()) if found else None)
        if open_head is None and b"<page>" not in rest:
            what = "the end of the file without </mediawiki>"
            if b"</mediawiki>" not in rest and tail:
                what = f"unexpected bytes {tail[:40]!r}"
            self.torn = f"{self._where(base)}: {what}"
        else:
            title = head.title.decode("utf-8", "replace") if head else "?"
            page_id = head.page_id if head else None
            self.torn = f"{self._where(base, page_id)} ({title!r}): torn last page, not counted"
            self.stats.torn_pages += 1
        self.stats.notes.append(self.torn)
        self.stats.cut.append(self.torn)
        warnings.warn(self.torn, stacklevel=3)
