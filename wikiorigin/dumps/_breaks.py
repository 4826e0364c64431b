"""Structural breaks in a page of an XML dump, found as the compiled core finds them.

A structural break is an element not closed where the next one starts (see
:mod:`wikiorigin.dumps.stubs`). The compiled core (``_scanblock.c``) finds breaks in its one
pass; the pure-Python path (``_pyscan.py``) walks every page here with :func:`page_break`,
so that both report the same break with the same message. Offsets are positions in the buffer given.
"""

from __future__ import annotations

import re

__all__ = ["Malformed", "not_closed", "text_span", "page_break", "revisions_break", "in_range", "page_number"]


class Malformed(Exception):
    """Raised inside the scan; the scanner re-raises it as DumpError with the place."""


_SEEN = re.compile(rb"<(?:[^>\n]{0,29}>|[^>\n]{0,30})")  # 31 bytes at most, as the core quotes it
_WS = b" \t\r\n"
_NUMBER = re.compile(rb"-?[0-9]+")
_INT64 = (1 << 63) - 1
_INT32 = 1 << 31


def in_range(text: bytes, what: str, bits: int = 64) -> None:
    """Raise :class:`Malformed` for a number (``-?[0-9]+``) whose magnitude passes ``bits``
    (64: over 2^63 - 1; 32: outside -2^31..2^31 - 1), as the core's ``parse_int`` refuses it:
    "<what> out of range b'...'"; text that is no number is left to the other checks."""
    if _NUMBER.fullmatch(text) is None:
        return
    value = int(text)
    if (abs(value) > _INT64) if bits == 64 else not -_INT32 <= value < _INT32:
        raise Malformed(f"{what} out of range {text[:40]!r}")


def page_number(text: bytes) -> int | None:
    """A page id as the core reads it: digits, at most 2^63 - 1; else None."""
    return int(text) if text.isdigit() and int(text) <= _INT64 else None


def not_closed(buf: bytes, at: int, end: int, what: str) -> str:
    """The message of a break at ``at``: "<what> not closed where <seen> starts"."""
    seen = _SEEN.match(buf, at, end)
    if seen is None:
        return what
    return f"{what} not closed where {seen.group().decode('utf-8', 'replace')} starts"


def text_span(buf: bytes, tag: bytes, start: int, end: int) -> tuple[int, int] | None:
    """The span of ``<tag>``'s text (up to the next ``<``) after ``start``, as the core reads it."""
    at = buf.find(b"<" + tag + b">", start, end)
    if at < 0:
        return None
    text = at + len(tag) + 2
    stop = buf.find(b"<", text, end)
    return None if stop < 0 else (text, stop)


def is_closed(buf: bytes, at: int, end: int, tag: bytes) -> bool:
    """Whether ``</tag>`` stands whole at ``at``, before ``end``."""
    close = b"</" + tag + b">"
    return buf.startswith(close, at) and at + len(close) <= end


def _head(buf: bytes, page: int, bound: int) -> list[tuple[bytes, int, int, bool]]:
    """The head's fields as the core reads them: ``(tag, text start, text end, closed)`` of
    title, ns and id in order, up to the first missing; none when <title> does not come first."""
    fields: list[tuple[bytes, int, int, bool]] = []
    at = page + 6
    while at < bound and buf[at] in _WS:
        at += 1
    if not buf.startswith(b"<title>", at):  # <title> comes first in a page
        return fields
    for tag in (b"title", b"ns", b"id"):
        span = text_span(buf, tag, at, bound)
        if span is None:
            break
        fields.append((tag, span[0], span[1], is_closed(buf, span[1], bound, tag)))
        at = span[1]
    return fields


def _head_break(buf: bytes, fields: list, bound: int) -> tuple[int | None, tuple[int, str] | None]:
    page_id, brk = None, None
    for tag, start, stop, closed in fields:
        if not closed and brk is None:
            brk = (stop, not_closed(buf, stop, bound, f"<{tag.decode()}>"))
        if tag == b"id" and closed:
            page_id = page_number(buf[start:stop])
    return page_id, brk


def head_break(buf: bytes, page: int, bound: int) -> tuple[int | None, tuple[int, str] | None]:
    """The page id and the first break in the head (title, ns, id) of the page at ``page``;
    the fields after a break are still read, so that the report names the page."""
    return _head_break(buf, _head(buf, page, bound), bound)


def _head_range(buf: bytes, fields: list) -> None:
    """Raise :class:`Malformed` for the ``<id>`` or ``<ns>`` of a sound head out of the range
    the core reads (64 bits, 32 bits), in the core's order: the id first."""
    if len(fields) < 3:
        return
    (_, ns, ns_end, _), (_, start, stop, _) = fields[1], fields[2]
    if stop - start > 9 and buf[start : start + 1] != b"-":  # fewer digits always fit
        in_range(buf[start:stop], "a page <id>")
    if ns_end - ns > 9:
        in_range(buf[ns:ns_end], "a <ns>", bits=32)


def contributor_break(buf: bytes, ts_end: int, end: int) -> tuple[int, str | None]:
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
        c_end, which = first_of(buf, b"</contributor>", b"</revision>", close, end)
        if c_end < 0:
            return close, None
        if which:
            return c_end, "<contributor>"
        span = text_span(buf, b"username", close, c_end)
        if span is None:
            return c_end, None
        stop = span[1]
    return (stop, None) if is_closed(buf, stop, end, b"username") else (stop, "<username>")


def first_of(buf: bytes, a: bytes, b: bytes, start: int, end: int) -> tuple[int, int]:
    """The first of two tags after ``start``: (position or -1, 0 for ``a`` or 1 for ``b``)."""
    i, j = buf.find(a, start, end), buf.find(b, start, end)
    if j >= 0 and (i < 0 or j < i):
        return j, 1
    return i, 0


def _crosses(buf: bytes, start: int, stop: int) -> bool:
    """Whether a revision ends or starts in ``buf[start:stop]``: a timestamp found past it is a
    later revision's, not this one's."""
    return buf.find(b"revision>", start, stop) >= 0


def revisions_break(buf: bytes, r: int, end: int) -> tuple[int, str] | None:
    """The first break among the revisions from ``r`` (a ``<revision>`` or -1) to ``end`` (the
    page's ``</page>``); a revision without its id or timestamp raises :class:`Malformed`."""
    while r >= 0:
        rid = text_span(buf, b"id", r + 10, end)
        ts = text_span(buf, b"timestamp", rid[1], end) if rid else None
        if rid is None or ts is None or rid[0] - r > 64 or ts[0] - rid[1] > 256 or _crosses(buf, rid[1], ts[0]):
            raise Malformed("a <revision> without <id> or <timestamp>")
        for (_, stop), tag in ((rid, b"id"), (ts, b"timestamp")):
            if not is_closed(buf, stop, end, tag):
                return stop, not_closed(buf, stop, end, f"<{tag.decode()}>")
        if rid[1] - rid[0] > 9:  # fewer digits always fit
            in_range(buf[rid[0] : rid[1]], "a revision <id>")
        cursor, unclosed = contributor_break(buf, ts[1], end)
        if unclosed is not None:
            return cursor, not_closed(buf, cursor, end, unclosed)
        r_end, which = first_of(buf, b"</revision>", b"<revision>", cursor, end)
        if r_end < 0 or which:
            at = end if r_end < 0 else r_end
            return at, not_closed(buf, at, end + 7, "<revision>")
        q = r_end + 11
        while q < end and buf[q] in _WS:
            q += 1
        if buf.startswith(b"<revision>", q) and q + 10 <= end:
            r = q
            continue
        r, which = first_of(buf, b"<revision>", b"</revision>", q, end)
        if which:
            return r, "a </revision> without its <revision>"
        title = buf.find(b"<title>", q, r if r >= 0 else end)
        if title >= 0:  # the head of the next page, whose </page> and <page> were lost
            return title, not_closed(buf, title, end, "<page>")
    return None


def page_break(buf: bytes, page: int, end: int, nested: int):
    """``(page id, (offset, message) or None)`` for the page at ``page``: its first structural
    break, as the compiled core finds it. ``end``: its ``</page>``; ``nested``: the position
    of a ``<page>`` before it, or -1."""
    bound = nested if nested >= 0 else end
    fields = _head(buf, page, bound)
    page_id, brk = _head_break(buf, fields, bound)
    if nested >= 0:
        return page_id, (nested, not_closed(buf, nested, end, "<page>"))
    if brk is None:
        _head_range(buf, fields)
    if brk is None and page_id is not None:
        first, which = first_of(buf, b"<revision>", b"</revision>", page, end)
        if which:
            return page_id, (first, "a </revision> without its <revision>")
        brk = revisions_break(buf, first, end)
    return page_id, brk
