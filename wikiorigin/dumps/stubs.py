"""Page-creation scan of stub-meta-history, pages-meta-history and File Export XML.

One pass, one record per page: its id, namespace, title, redirect flag, number of revisions
and its creation on this wiki. **Creation** is the earliest timestamp among the revisions made
on this wiki. Revisions imported from another wiki keep their old timestamps and carry a
contributor name with ``>`` (``en>Foo``, ``imported>Foo``): they are counted, and the earliest
timestamp of all revisions is kept too, but they do not set the creation time. Revisions come
in id order, not time order; ties on the timestamp go to the first revision in the file.

This is the hot path. The decompressed stream is cut into blocks at ``</page>``; each block is
split into pages with ``bytes.split`` and all revisions of a page are pulled out with one
C-level ``findall``. Revision text (full-history files) is never parsed: the regex skips it.
Dumps escape ``<`` inside text, so these byte patterns cannot match inside a text.
A page larger than a block (a long full history) is summarized piece by piece: summaries
of consecutive pieces combine with :func:`merge`, so memory stays flat.

:func:`scan_pages` is the fast engine; :func:`scan_pages_mwxml` computes the same records with
mwxml, as an oracle for tests and a fallback (``--engine mwxml``).
"""

from __future__ import annotations

import html
import re
import warnings
from xml.etree import ElementTree
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from operator import itemgetter

from ..errors import DumpError
from .compression import DumpStream, open_dump
from .xmlhead import SiteInfo, read_header

__all__ = ["PageCreation", "ScanStats", "StubScanner", "scan_pages", "scan_pages_mwxml"]

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
_REV_USER = re.compile(rb"<username>([^<]*)</username>")
_TS_FORMAT = re.compile(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\Z")
_TS = itemgetter(1)


@dataclass(slots=True)
class PageCreation:
    """One page and when it was created. Timestamps are ISO-8601 strings (``...Z``)."""

    page_id: int
    namespace: int
    title: str
    is_redirect: bool
    created_at: str | None
    first_revision_at: str | None
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

    def __add__(self, other: "ScanStats") -> "ScanStats":
        return ScanStats(
            self.pages + other.pages,
            self.revisions + other.revisions,
            self.imported_revisions + other.imported_revisions,
            self.bytes + other.bytes,
            self.torn_pages + other.torn_pages,
            self.notes + other.notes,
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


def _revisions_slow(piece: bytes, where: str) -> list[tuple[bytes, bytes, bytes]]:
    """Revision by revision, for the rare revision the one-pass pattern does not match."""
    revs = []
    for part in piece.split(b"<revision>")[1:]:
        rid, ts = _REV_ID.search(part), _REV_TS.search(part)
        if rid is None or ts is None:
            raise DumpError(f"{where}: a <revision> without <id> or <timestamp>")
        contributor = part.split(b"</contributor>", 1)[0]
        user = _REV_USER.search(contributor)
        revs.append((rid.group(1), ts.group(1), user.group(1) if user else b""))
    return revs


def summarize(piece: bytes, where: str = "page") -> Summary:
    """Count and date the revisions in a piece of one page (no per-revision objects)."""
    revs = _REV.findall(piece)
    n = piece.count(b"<revision>")
    if len(revs) != n:
        revs = _revisions_slow(piece, where)
    if not revs:
        return EMPTY
    first_all = min(revs, key=_TS)
    users = b"\n".join([r[2] for r in revs])
    if b">" not in users and b"&gt;" not in users:
        return (n, 0, first_all[:2], first_all[:2])
    local = [r for r in revs if not _is_imported(r[2])]
    first_local = min(local, key=_TS)[:2] if local else None
    return (n, n - len(local), first_all[:2], first_local)


def _iso(ts: bytes | None, where: str) -> str | None:
    if ts is None:
        return None
    if not _TS_FORMAT.match(ts):
        raise DumpError(f"{where}: malformed <timestamp> {ts[:40]!r}")
    return ts.decode("ascii")


def _record(head: re.Match, s: Summary, where: str) -> PageCreation:
    title = head.group(1)
    title = title.decode("utf-8") if b"&" not in title else html.unescape(title.decode("utf-8"))
    local = s[3]
    return PageCreation(
        page_id=int(head.group(3)),
        namespace=int(head.group(2)),
        title=title,
        is_redirect=head.group(4) is not None,
        created_at=_iso(local[1], where) if local else None,
        first_revision_at=_iso(s[2][1], where) if s[2] else None,
        created_revision_id=int(local[0]) if local else None,
        revisions=s[0],
        imported_revisions=s[1],
    )


class StubScanner:
    """A single-pass iterator of :class:`PageCreation` over one XML dump file.

    ``namespaces`` limits the pages yielded (``None``: all). After iteration ``stats`` holds the
    counters, and ``torn`` describes a torn last page if there was one (it is reported with a
    warning and not yielded; every page before it is).
    """

    def __init__(self, stream: DumpStream, namespaces: Iterable[int] | None = None):
        self.stream = stream
        self.namespaces = None if namespaces is None else frozenset(namespaces)
        self.stats = ScanStats()
        self.torn: str | None = None
        self.siteinfo: SiteInfo | None = None

    def _where(self, offset: int, head: re.Match | None = None) -> str:
        page = f", page id {int(head.group(3))}" if head else ""
        return f"{self.stream.path}: near decompressed byte {offset}{page}"

    def __iter__(self) -> Iterator[PageCreation]:
        self.siteinfo, buf = read_header(self.stream.read, self.stream.path)
        base = self.stream.pos - len(buf)  # decompressed offset of buf[0]
        open_head, open_sum = None, EMPTY  # a page larger than a block, in progress
        while True:
            chunk = self.stream.read(BLOCK)
            buf = buf + chunk if buf else chunk
            end = buf.rfind(b"</page>")
            if end >= 0:
                block, buf = buf[: end + 7], buf[end + 7 :]
                yield from self._block(block, base, open_head, open_sum)
                base += len(block)
                open_head, open_sum = None, EMPTY
            elif len(buf) > MAX_PENDING:
                cut = buf.rfind(b"</revision>")
                if cut > 0:
                    piece, buf = buf[:cut], buf[cut:]
                    if open_head is None:
                        open_head = _HEAD.search(piece)
                        if open_head is None:
                            raise DumpError(f"{self._where(base)}: expected <page> with <title>, <ns>, <id>")
                    open_sum = merge(open_sum, summarize(piece, self._where(base, open_head)))
                    base += len(piece)
            if not chunk:
                break
        self._finish(buf, base, open_head)

    def _block(self, block: bytes, base: int, open_head, open_sum) -> Iterator[PageCreation]:
        wanted, stats = self.namespaces, self.stats
        offset = base
        for part in block.split(b"</page>")[:-1]:
            if open_head is not None:
                head, s = open_head, merge(open_sum, summarize(part, self._where(offset, open_head)))
                open_head = None
            else:
                head = _HEAD.search(part)
                if head is None:
                    raise DumpError(
                        f"{self._where(offset)}: expected <page> with <title>, <ns>, <id>"
                    )
                if wanted is not None and int(head.group(2)) not in wanted:
                    offset += len(part) + 7
                    continue
                s = summarize(part, self._where(offset, head))
            stats.pages += 1
            stats.revisions += s[0]
            stats.imported_revisions += s[1]
            yield _record(head, s, self._where(offset, head))
            offset += len(part) + 7
        stats.bytes = offset

    def _finish(self, rest: bytes, base: int, open_head) -> None:
        self.stats.bytes = base + len(rest)
        tail = rest.strip()
        if open_head is None and (not tail or tail == b"</mediawiki>"):
            return
        head = open_head or _HEAD.search(rest)
        if open_head is None and b"<page>" not in rest:
            what = "the end of the file without </mediawiki>"
            if b"</mediawiki>" not in rest and tail:
                what = f"unexpected bytes {tail[:40]!r}"
            self.torn = f"{self._where(base)}: {what}"
        else:
            title = head.group(1).decode("utf-8", "replace") if head else "?"
            self.torn = f"{self._where(base, head)} ({title!r}): torn last page, not counted"
            self.stats.torn_pages += 1
        self.stats.notes.append(self.torn)
        warnings.warn(self.torn, stacklevel=3)


def scan_pages(
    path, namespaces: Iterable[int] | None = None, threads: int = 1
) -> StubScanner:
    """Scan one dump file with the fast engine. Iterate the result for the records."""
    return StubScanner(open_dump(path, threads=threads), namespaces)


def scan_pages_mwxml(
    path, namespaces: Iterable[int] | None = None, threads: int = 1
) -> Iterator[PageCreation]:
    """The same records as :func:`scan_pages`, computed with mwxml (slow; the oracle)."""
    try:
        import mwxml
    except ImportError as exc:  # pragma: no cover - mwxml is a core dependency
        raise ImportError("the mwxml engine needs mwxml: pip install mwxml") from exc
    stream = open_dump(path, threads=threads)
    read_header(open_dump(path).read, path)  # same refusals as the fast engine
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


def _mwxml_record(page, wanted) -> PageCreation | None:
    if wanted is not None and page.namespace not in wanted:
        for _ in page:
            pass
        return None
    n = n_imported = 0
    first_all = first_local = None
    for rev in page:
        n += 1
        ts = rev.timestamp.long_format()
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
        created_at=first_local[1] if first_local else None,
        first_revision_at=first_all[1] if first_all else None,
        created_revision_id=first_local[0] if first_local else None,
        revisions=n,
        imported_revisions=n_imported,
    )
