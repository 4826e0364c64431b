"""Scan the parts of one wiki's dump into a ``pages`` Parquet file.

The input kind is told by content: XML exports (stub, full history, File Export, pages-articles)
go to the page-creation scan (``engine="fast"`` or ``"mwxml"``); MediaWiki history TSV files to
:mod:`~wikiorigin.dumps.history`. The output follows the ``pages`` schema; it is written
atomically, and if a part turns out damaged, the pages scanned before the damage are kept in
``<out>.partial.parquet`` and the error names the file and the place. When the damage shows
only in a gzip member's closing CRC check, those pages may hold a wrong byte: they are kept in
``<out>.unverified.partial.parquet`` instead, and the error says so.
"""

from __future__ import annotations

import errno
import os
import time
from array import array
from collections.abc import Iterable
from pathlib import Path

import pyarrow as pa

from ..errors import DumpError, WikioriginError
from ..files import ParquetSink, provenance
from ..progress import Progress
from ..schemas import PAGE_COLUMNS, PAGES
from .compression import ChecksumError, open_dump
from .creation import PageCreation, ScanStats
from .scanner import StubScanner

__all__ = ["ENGINES", "scan_to_parquet", "input_kind", "partial_path"]

ENGINES = ("fast", "mwxml")
"""The scan engines: ``fast`` (the byte scanner, C when compiled) and ``mwxml`` (the
reference reader: slower, the oracle in the tests)."""


DICTIONARY = ["wiki", "namespace", "is_redirect", "revisions", "imported_revisions"]
"""The columns of a pages file that are dictionary-encoded: those with few values. Ids, titles
and times are nearly all unique: their dictionaries would take a fifth of a scan's time (hash
tables grown page by page) and save nothing."""

GROUP_ROWS = 1 << 17
"""Rows of a pages file's row group (131,072, about DuckDB's own 122,880, which the join reads
a group per thread): the rows waiting for their group are what the scan holds, so its peak
memory stops growing once a wiki has more pages than that (with a million-row group it grew
1.67x from 0.5 to 2.5 GB of stub XML, 126 to 211 MB, the whole file pending)."""


def input_kind(path) -> str:
    """``"xml"`` or ``"history"`` (MediaWiki history TSV), from the decompressed first bytes."""
    with open_dump(path) as stream:
        head = stream.read(4096)
    text = head.lstrip()
    if text.startswith(b"<?xml") or text.startswith(b"<mediawiki"):
        return "xml"
    if head.count(b"\t") >= 60:
        return "history"
    raise DumpError(
        f"{path}: neither a MediaWiki XML export nor a MediaWiki history TSV dump (starts with {head[:40]!r})"
    )


def _check_link(path: Path) -> None:
    """A symbolic link that loops or leads nowhere is told as such (a one-line
    :class:`~wikiorigin.errors.DumpError`), not as a missing file."""
    if not path.is_symlink():
        return
    try:
        path.stat()
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise DumpError(
                f"{path}: a symbolic link that leads back to itself (a symlink loop); give the dump file it should name"
            ) from None
        raise DumpError(f"{path}: a symbolic link to {os.readlink(path)}, which does not exist") from None


def partial_path(out, unverified: bool = False) -> Path:
    """Where the pages scanned before damage are kept: ``OUT.partial.parquet``, or
    ``OUT.unverified.partial.parquet`` when the damage showed only in a closing checksum."""
    out = Path(out)
    kind = ".unverified.partial.parquet" if unverified else ".partial.parquet"
    return out.with_name(out.name.removesuffix(".parquet") + kind)


def _records_batches(records: Iterable[PageCreation], stats: ScanStats, size: int = 20_000):
    """Record batches of ``size`` rows; on damage, the rows read before it still come out."""
    rows = []
    try:
        for r in records:
            stats.pages += 1
            stats.revisions += r.revisions
            stats.imported_revisions += r.imported_revisions
            rows.append({f: getattr(r, f) for f in PAGE_COLUMNS.names})
            if len(rows) == size:
                yield pa.RecordBatch.from_pylist(rows, schema=PAGE_COLUMNS)
                rows = []
    except DumpError:
        if rows:
            yield pa.RecordBatch.from_pylist(rows, schema=PAGE_COLUMNS)
        raise
    if rows:
        yield pa.RecordBatch.from_pylist(rows, schema=PAGE_COLUMNS)


def _xml_batches(path, engine, namespaces, threads, stats: ScanStats, dbname, scan_threads):
    if engine == "mwxml":
        from .oracle import scan_pages_mwxml

        part = ScanStats()
        yield from _records_batches(scan_pages_mwxml(path, namespaces, threads, part), part)
        _add(stats, part)
        return
    scanner = StubScanner(open_dump(path, threads=threads), namespaces, scan_threads)
    for batch in scanner.batches():
        found = scanner.siteinfo.dbname if scanner.siteinfo is not None else None
        if dbname and found and found != dbname:
            raise DumpError(f"{path}: this dump is of {found}, not of {dbname} (--wiki)")
        yield batch
    _add(stats, scanner.stats)


def _add(total: ScanStats, part: ScanStats) -> None:
    summed = total + part
    for name in ScanStats.__slots__:
        setattr(total, name, getattr(summed, name))


def scan_batches(paths, *, engine="fast", namespaces=None, threads=1, stats=None, dbname=None, scan_threads=2):
    """``pages`` record batches (without ``wiki``) from the parts of one wiki's dump."""
    if engine not in ENGINES:
        raise ValueError(f"scan_batches: engine must be one of {ENGINES}, not {engine!r}")
    stats = stats if stats is not None else ScanStats()
    history = []
    for path in paths:
        if input_kind(path) == "history":
            history.append(path)
        else:
            yield from _xml_batches(path, engine, namespaces, threads, stats, dbname, scan_threads)
    if history:
        from .history import history_batches  # pyarrow.compute: imported only for TSV input

        for batch in history_batches(history, namespaces):
            stats.pages += batch.num_rows
            yield batch
        stats.bytes += sum(Path(p).stat().st_size for p in history)


def _repeated(value: str, n: int) -> pa.Array:
    """A string array of ``n`` times ``value``, made from its buffers: ``pa.array`` on a list
    imports pandas, which would add 0.4 s to every ``wikiorigin scan``."""
    data = value.encode()
    offsets = array("i", range(0, len(data) * n + 1, len(data))) if data else array("i", [0] * (n + 1))
    return pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(data * n)])


def _write_scan(batches, wiki: str, sink: ParquetSink, bar: Progress, out) -> None:
    """Write the scanned ``batches`` into ``sink`` (the wiki's column added). A dump that breaks
    part way keeps the pages scanned before it (``OUT.partial.parquet``; ``.unverified`` when its
    checksum failed) and its error says where they are."""
    try:
        with sink:
            try:
                for batch in batches:
                    wikis = _repeated(wiki, batch.num_rows)
                    sink.write(pa.RecordBatch.from_arrays([wikis, *batch.columns], schema=PAGES))
                    bar.update(batch.num_rows)
            except ChecksumError:
                sink.keep_partial = partial_path(out, unverified=True)
                raise
    except ChecksumError as exc:
        if not sink.rows:
            raise
        raise ChecksumError(
            f"{exc}; the {sink.rows:,} pages scanned before it are kept in "
            f"{sink.keep_partial}, unverified: any of them may hold a wrong value; scan "
            f"another copy of the dump (or download it again) to trust them"
        ) from exc
    except DumpError as exc:
        if not sink.rows:
            raise
        raise DumpError(f"{exc}; the {sink.rows:,} pages scanned before it are kept in {partial_path(out)}") from exc


def scan_to_parquet(
    paths: Iterable,
    wiki: str,
    out,
    *,
    engine: str = "fast",
    namespaces: Iterable[int] | None = None,
    threads: int = 1,
    meta: dict | None = None,
    scan_threads: int = 2,
) -> ScanStats:
    """Scan ``paths`` (the parts of ``wiki``'s dump) into the ``pages`` file ``out``.

    ``meta``: more provenance fields for the file's metadata."""
    paths = [Path(p) for p in paths]
    for n, path in enumerate(paths):
        _check_link(path)
        twice = next((p for p in paths[:n] if p.resolve() == path.resolve()), None)
        if twice is not None:  # its pages would be counted twice
            raise WikioriginError(f"{path}: given twice (as {twice}); give each part of the dump once")
    namespaces = None if namespaces is None else sorted(set(namespaces))
    stats = ScanStats()
    meta = provenance(
        stage="scan",
        wiki=wiki,
        engine=engine,
        namespaces=namespaces,
        inputs=[{"file": p.name, "bytes": p.stat().st_size if p.exists() else None} for p in paths],
        **(meta or {}),
    )
    started = time.perf_counter()
    sink = ParquetSink(
        out, PAGES, meta, keep_partial=partial_path(out), dictionary=DICTIONARY, row_group_rows=GROUP_ROWS
    )
    batches = scan_batches(
        paths,
        engine=engine,
        namespaces=namespaces,
        threads=threads,
        stats=stats,
        dbname=wiki,
        scan_threads=scan_threads,
    )
    with Progress(f"scan {wiki}", unit="page") as bar:
        _write_scan(batches, wiki, sink, bar, out)
    stats.seconds = time.perf_counter() - started
    return stats
