"""The pure-Python path of the page-creation scan: the same rows as the compiled core.

Used where ``_scanblock.c`` is not built, and for the pieces of a page larger than a block
(:func:`summarize`) on both paths. Per page: one ``find`` of ``</page>`` and of the next
``<page>``, an anchored match of the head, one C-level ``findall`` of the timestamps, a walk
for structural breaks as the core walks it (:func:`wikiorigin.dumps._breaks.page_break`) and
one ``find`` of ``&gt;`` (the cheap sign of a possible import); no copies, nothing per
revision. Files made with ``--uploads`` (``<upload>`` elements carry timestamps) are not
Wikimedia's public dumps; use ``--engine mwxml`` for them.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from operator import itemgetter
from typing import NamedTuple

import pyarrow as pa

from ..errors import DumpError
from ..schemas import PAGE_COLUMNS, TIMESTAMP
from ._breaks import Malformed, head_break, in_range, page_break, page_number, text_span
from .creation import EMPTY, Earliest, Summary, is_imported
from .xmltext import element, unescape

__all__ = ["HEAD", "Head", "Places", "Columns", "summarize", "summarize_at", "python_columns"]

HEAD = re.compile(rb"<page>\s*<title>([^<]*)</title>\s*<ns>(-?\d+)</ns>\s*<id>(\d+)</id>\s*(<redirect\b)?")
_REV = re.compile(
    rb"<revision>\s*<id>(\d+)</id>\s*(?:<parentid>\d*</parentid>\s*)?"
    rb"<timestamp>([^<]+)</timestamp>\s*"
    rb"<contributor(?:[^>]*/>|>\s*(?:<username>([^<]*)</username>|<username\s*/>|<ip>))"
)
_REV_ID = element("id", rb"\d+")
_REV_USER = element("username")
# Two timestamp patterns, on purpose. _TIMESTAMP wants the element closed: in the check of a
# page, a <timestamp> that runs into the next tag is then not counted, the counts disagree and
# the page is walked (a structural break, as the core reports it). _TS_TEXT takes the text up to
# the next tag, closed or not: summarize() counts it and _ms refuses it, never drops it silently.
_TIMESTAMP = element("timestamp", rb"[^<]+")
_TS_TEXT = re.compile(rb"<timestamp>([^<]+)<")
_TS_FORMAT = re.compile(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\Z")
_TS = itemgetter(1)


class Head(NamedTuple):
    """The head of a page as the dump writes it (bytes): title, namespace, id, and the
    ``<redirect`` tag (empty when the page is no redirect)."""

    title: bytes
    namespace: bytes
    page_id: bytes
    redirect: bytes | None


class Places(NamedTuple):
    """How the scan names a place and reports a page left out: ``where(offset, page_id)``
    and ``broken(offset, page_id, message)``, offsets in the decompressed file."""

    where: Callable[..., str]
    broken: Callable[..., None]


def _revisions_slow(buf: bytes, start: int, end: int) -> list[tuple[bytes, bytes, bytes]]:
    """Revision by revision, for pages the one-pass patterns do not cover."""
    revs = []
    for part in buf[start:end].split(b"<revision>")[1:]:
        rid, ts = _REV_ID.search(part), _TIMESTAMP.search(part)
        if rid is None or ts is None:
            raise Malformed("a <revision> without <id> or <timestamp>")
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
    first_all = Earliest(*min(revs, key=_TS)[:2])
    local = [r for r in revs if not is_imported(r[2])]
    first_local = Earliest(*min(local, key=_TS)[:2]) if local else None
    return Summary(n, n - len(local), first_all, first_local)


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
    stamps = _TS_TEXT.findall(buf, start, end)
    if not stamps:
        return _detailed(buf, start, end) if buf.find(b"<revision>", start, end) >= 0 else EMPTY
    first = min(stamps)
    at = buf.find(b"<timestamp>" + first, start, end)
    rev = buf.rfind(b"<revision>", start, at)
    rid = _REV_ID.search(buf, rev, at) if rev >= 0 else None
    if rid is None:
        raise Malformed("a <timestamp> outside a <revision> with an <id>")
    earliest = Earliest(rid.group(1), first)
    return Summary(len(stamps), 0, earliest, earliest)


def summarize_at(buf: bytes, start: int, end: int, base: int, page_id, where) -> Summary:
    """:func:`summarize`, its errors as :class:`DumpError` naming the place."""
    try:
        return summarize(buf, start, end)
    except Malformed as exc:
        raise DumpError(f"{where(base + start, page_id)}: {exc}") from None


def _title(raw: bytes) -> str:
    """Decode a title as the C core does: UTF-8, then the references MediaWiki writes."""
    try:
        return unescape(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise Malformed("a <title> that is not UTF-8") from None


def _ms(ts: bytes | None) -> int | None:
    """Milliseconds since the epoch of ``YYYY-MM-DDTHH:MM:SSZ``."""
    if ts is None:
        return None
    if len(ts) != 20 or not _TS_FORMAT.match(ts):
        raise Malformed(f"malformed <timestamp> {ts[:40]!r}")
    try:
        when = datetime.strptime(ts.decode("ascii"), "%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        raise Malformed(f"malformed <timestamp> {ts[:40]!r}") from None
    return calendar.timegm(when.timetuple()) * 1000


def _in_range(head: Head, local: Earliest | None) -> None:
    in_range(head.page_id, "a page <id>")
    in_range(head.namespace, "a <ns>", bits=32)
    if local:
        in_range(local.revision_id, "a revision <id>")


@dataclass(slots=True)
class Columns:
    """Rows of page creations gathered column by column, as Arrow takes them."""

    titles: list = field(default_factory=list)
    namespaces: list = field(default_factory=list)
    page_ids: list = field(default_factory=list)
    redirects: list = field(default_factory=list)
    revisions: list = field(default_factory=list)
    imported: list = field(default_factory=list)
    all_ms: list = field(default_factory=list)
    local_ms: list = field(default_factory=list)
    local_rids: list = field(default_factory=list)

    def add(self, head: Head, s: Summary) -> None:
        """Append one page; raises :class:`Malformed` for a title or a timestamp it refuses
        (nothing is appended then)."""
        title, all_ms = _title(head.title), _ms(s.first_all.timestamp if s.first_all else None)
        local = s.first_local
        if len(head.page_id) > 9 or len(head.namespace) > 9 or (local and len(local.revision_id) > 9):
            _in_range(head, local)  # what the columns hold: the core's rule
        if local is s.first_all:  # no imported revision: one date, read once
            local_ms = all_ms
        else:
            local_ms = _ms(local.timestamp) if local else None
        self.titles.append(title)
        self.namespaces.append(int(head.namespace))
        self.page_ids.append(int(head.page_id))
        self.redirects.append(bool(head.redirect))
        self.revisions.append(s.revisions)
        self.imported.append(s.imported)
        self.all_ms.append(all_ms)
        self.local_ms.append(local_ms)
        self.local_rids.append(int(local.revision_id) if local else None)

    def add_at(self, head: Head, s: Summary, offset: int, where) -> None:
        """:meth:`add`, its errors as :class:`DumpError` naming the page at ``offset``."""
        try:
            self.add(head, s)
        except Malformed as exc:
            raise DumpError(f"{where(offset, head.page_id)}: {exc}") from None

    def batch(self) -> pa.RecordBatch:
        """The rows as a record batch in :data:`~wikiorigin.schemas.PAGE_COLUMNS`."""
        return pa.RecordBatch.from_arrays(
            [
                pa.array(self.page_ids, pa.int64()),
                pa.array(self.namespaces, pa.int32()),
                pa.array(self.titles, pa.string()),
                pa.array(self.redirects, pa.bool_()),
                pa.array(self.local_ms, TIMESTAMP),
                pa.array(self.all_ms, TIMESTAMP),
                pa.array(self.local_rids, pa.int64()),
                pa.array(self.revisions, pa.int32()),
                pa.array(self.imported, pa.int32()),
            ],
            schema=PAGE_COLUMNS,
        )


def expect_head(buf: bytes, start: int, end: int, base: int, where) -> re.Match[bytes]:
    """The head of the first page in ``buf[start:end]``; a :class:`DumpError` without one."""
    at = buf.find(b"<page>", start, end)
    head = HEAD.match(buf, at, end) if at >= 0 else None
    if head is None:
        raise DumpError(f"{where(base + start)}: expected <page> with <title>, <ns>, <id>")
    return head


def walk(buf: bytes, page: int, end: int, nested: int, base: int, places: Places) -> bool:
    """Walk a page as the core does: report a structural break (True) or raise."""
    try:
        page_id, brk = page_break(buf, page, end, nested)
    except Malformed as exc:  # named with the page's id where its head gives one, as the core names it
        page_id, _ = head_break(buf, page, nested if nested >= 0 else end)
        raise DumpError(f"{places.where(base + page, page_id)}: {exc}") from None
    if brk is not None:
        places.broken(base + brk[0], page_id, brk[1])
    return brk is not None


def _page(buf: bytes, page: int, end: int, nested: int, base: int, places: Places) -> tuple[Head, Summary] | None:
    """``(Head, Summary)`` of the page from ``page`` to its ``</page>`` at ``end``, or None
    when it is left out for a structural break (reported). ``nested``: a ``<page>`` inside."""
    find = buf.find
    match = HEAD.match(buf, page)
    stamps = _TIMESTAMP.findall(buf, page, end)
    # Every page is walked as the core walks it: no cheaper sign keeps this path equal to the
    # core on damaged input (a lost ">" or a lost "<username>" leaves every count of tags as it
    # was; the earlier tag-count check was true for every sound page anyway).
    if walk(buf, page, end, nested, base, places):
        return None
    head = Head._make((match or expect_head(buf, page, end, base, places.where)).groups())
    if not stamps or find(b"&gt;", page, end) >= 0:
        return head, summarize_at(buf, page, end, base, head.page_id, places.where)
    earliest = min(stamps)
    at = find(b"<timestamp>" + earliest, page, end)
    rid = _REV_ID.search(buf, buf.rfind(b"<revision>", page, at), at)
    if rid is None:
        if walk(buf, page, end, -1, base, places):  # its <id> not closed
            return None
        return head, summarize_at(buf, page, end, base, head.page_id, places.where)  # raises with the place
    first = Earliest(rid.group(1), earliest)
    return head, Summary(len(stamps), 0, first, first)


def python_columns(
    buf: bytes, start: int, stop: int, base: int, places: Places, cols: Columns | None = None
) -> Columns:
    """The rows of the whole pages in ``buf[start:stop]`` (``base``: the decompressed offset
    of ``buf[0]``), the same as the compiled core's; broken pages reported through ``places``.
    Added to ``cols`` when given: on an error, the rows of the pages before it are there."""
    find = buf.find
    cols = Columns() if cols is None else cols
    pos, page = start, find(b"<page>", start, stop)
    while pos < stop:
        end = find(b"</page>", pos, stop)
        if end >= 0 and (page < 0 or end < page):  # a page whose <page> was lost
            rid = text_span(buf, b"id", pos, end)
            page_id = page_number(buf[rid[0] : rid[1]]) if rid else None
            places.broken(base + end, page_id, "a </page> without its <page>")
            pos = end + 7
            continue
        if page < 0:
            break
        following = find(b"<page>", page + 6, stop)  # the next page, or one inside this
        nested = following if 0 <= following < end else -1
        row = _page(buf, page, end, nested, base, places)
        if row is not None:
            cols.add_at(*row, base + page, places.where)
        pos = end + 7 if row is not None or nested < 0 else nested
        page = following
    return cols
