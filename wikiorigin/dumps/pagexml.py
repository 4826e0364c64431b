"""One ``<page>`` element of a pages-articles dump as a :class:`PageText`: its latest revision.

The parsing shared by the streaming reader (:func:`wikiorigin.dumps.pages.iter_pages`) and the
multistream reader (:class:`wikiorigin.dumps.multistream.Multistream`). Only the tags the record
needs are read; the text is unescaped, never parsed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timezone

from ..errors import DumpError
from .xmltext import element, unescape

__all__ = ["PageText", "parse_page", "parse_pages", "find_pages"]

_TITLE = element("title")
_NS = element("ns", rb"-?\d+")
_ID = element("id", rb"\d+")
_REDIRECT = re.compile(rb'<redirect title="([^"]*)"')
_TIMESTAMP = element("timestamp", rb"[^<]+")
_TEXT = re.compile(rb"<text\b[^>]*?(?:/>|>([^<]*)</text>)")
_HEAD = re.compile(rb"<page>\s*<title>[^<]*</title>\s*<ns>-?\d+</ns>\s*<id>(\d+)</id>")


@dataclass(slots=True)
class PageText:
    """A page and its latest revision."""

    page_id: int
    namespace: int
    title: str
    redirect: str | None  # the target title, for a redirect
    revision_id: int
    revision_timestamp: datetime
    text: str


def _unescape(raw: bytes) -> str:
    """Element text: UTF-8 (a bad byte replaced), references as :func:`xmltext.unescape` reads them."""
    return unescape(raw.decode("utf-8", "replace"))


def parse_page(chunk: bytes, where: str) -> PageText:
    """The page in ``chunk`` (from its ``<page>`` to its ``</page>``), with its last revision;
    ``where`` (the file and place) starts the message of a :class:`DumpError`."""
    title, ns, pid = _TITLE.search(chunk), _NS.search(chunk), _ID.search(chunk)
    revision = chunk.rfind(b"<revision>")
    if not (title and ns and pid) or revision < 0:
        raise DumpError(f"{where}: expected <page> with <title>, <ns>, <id> and a <revision>")
    head = chunk[:revision]
    redirect = _REDIRECT.search(head)
    rid, ts, text = (_ID.search(chunk, revision), _TIMESTAMP.search(chunk, revision), _TEXT.search(chunk, revision))
    if not (rid and ts):
        raise DumpError(f"{where}, page {int(pid.group(1))}: a <revision> without <id> or <timestamp>")
    try:
        when = datetime.strptime(ts.group(1).decode(), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
    except ValueError:
        raise DumpError(f"{where}, page {int(pid.group(1))}: malformed <timestamp>") from None
    return PageText(
        page_id=int(pid.group(1)),
        namespace=int(ns.group(1)),
        title=_unescape(title.group(1)),
        redirect=_unescape(redirect.group(1)) if redirect else None,
        revision_id=int(rid.group(1)),
        revision_timestamp=when,
        text=_unescape(text.group(1) or b"") if text else "",
    )


def parse_pages(data: bytes, where: str) -> Iterator[PageText]:
    """The whole ``<page>`` elements in ``data`` (a stream of a multistream dump, say)."""
    start = data.find(b"<page>")
    while start >= 0:
        end = data.find(b"</page>", start)
        if end < 0:
            raise DumpError(f"{where}: a <page> without </page>")
        yield parse_page(data[start:end], where)
        start = data.find(b"<page>", end)


def find_pages(data: bytes, page_ids, where: str) -> dict[int, PageText | None]:
    """Only the pages ``page_ids`` of a stream, in one pass over its page heads (the others'
    text is not decoded): ``{page_id: PageText}``, None for an id the stream does not hold."""
    wanted: dict[int, PageText | None] = dict.fromkeys(page_ids)
    left = set(wanted)
    for head in _HEAD.finditer(data):
        page_id = int(head.group(1))
        if page_id not in left:
            continue
        end = data.find(b"</page>", head.start())
        if end < 0:
            raise DumpError(f"{where}: a <page> without </page>")
        wanted[page_id] = parse_page(data[head.start() : end], where)
        left.discard(page_id)
        if not left:
            break
    return wanted
