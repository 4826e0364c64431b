"""The mwxml oracle of the page-creation scan: the same records, computed with mwxml.

:func:`scan_pages_mwxml` is slow (about 3,000 pages a second) and serves as the oracle of the
tests and as a fallback (``--engine mwxml``). It stops at malformed XML with an error naming the
line, the page and its decompressed byte offset; only a file ending inside a page is a torn end.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone
from xml.etree import ElementTree
from xml.parsers.expat import errors as expat_errors

from ..errors import DumpError
from .compression import open_dump
from .creation import PageCreation, ScanStats
from .xmlhead import read_header
from .xmltext import element

__all__ = ["scan_pages_mwxml"]

_BLOCK = 1 << 22  # bytes read per call when looking for the place of an error


def scan_pages_mwxml(
    path,
    namespaces: Iterable[int] | None = None,
    threads: int = 1,
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
    expat_errors.codes[m]
    for m in (
        expat_errors.XML_ERROR_NO_ELEMENTS,
        expat_errors.XML_ERROR_UNCLOSED_TOKEN,
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
            stats.cut.append(note)
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


def _find_page(
    path, page_id: int | None = None, after: int | None = None, line: int | None = None
) -> tuple[int, int | None] | None:
    """``(decompressed offset, page id)`` of the page with id ``page_id``, else of the last
    page starting on or before line ``line``, else of the page after the page ``after`` (the
    first page when None). Reads the file once more (only on an error), in blocks."""
    found: tuple[int, int | None] | None = None
    previous = None
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
_FIRST_ID = element("id", rb"\d+")


def _page_heads(path, keep: int = 1 << 12) -> Iterator[tuple[int, int, int | None]]:
    """``(decompressed offset, line, page id)`` of each ``<page>``; the id is the first
    ``<id>`` after it (a damaged title does not hide it), None when there is none."""
    with open_dump(path) as stream:
        buf, base, line = b"", 0, 1  # buf[0] lies at decompressed offset base, on line `line`
        while True:
            chunk = stream.read(_BLOCK)
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
        if ">" in user:  # the imported-revision rule (see creation.py)
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
