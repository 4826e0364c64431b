"""Multistream pages-articles dumps and their indexes, as Wikimedia makes them.

:func:`write_multistream_pages` writes ``<page>`` elements a hundred to a bzip2 stream with
the ``offset:page_id:title`` index that :class:`wikiorigin.dumps.multistream.Multistream` reads;
:func:`write_multistream` turns a plain pages-articles export into one.
"""

from __future__ import annotations

import bz2
import html
import re
from collections.abc import Iterable

from ..dumps.compression import open_dump

__all__ = ["write_multistream_pages", "write_multistream"]

_META = re.compile(rb"<title>([^<]*)</title>\s*<ns>-?\d+</ns>\s*<id>(\d+)</id>")
_PAGE = re.compile(rb"  <page>.*?</page>\n", re.S)


def write_multistream_pages(
    head: bytes, pages: Iterable[bytes], dump_out, index_out, pages_per_stream: int = 100, compresslevel: int = 9
) -> int:
    """Write a multistream dump and its index, as Wikimedia makes them: ``head`` (through
    ``</siteinfo>``) in the first bzip2 stream, then ``pages_per_stream`` of ``pages`` (each a
    whole ``<page>`` element, bytes) per stream, then the footer; the index lists
    ``offset:page_id:title`` (bzip2). Returns the number of pages."""
    count, offset = 0, 0
    group: list[bytes] = []
    with open(dump_out, "wb") as out, bz2.open(index_out, "wt", encoding="utf-8") as index:

        def flush():
            nonlocal offset
            for page in group:
                m = _META.search(page)
                if m is None:
                    raise ValueError(f"a page without <title>, <ns>, <id>: {page[:80]!r}")
                index.write(f"{offset}:{int(m.group(2))}:{html.unescape(m.group(1).decode())}\n")
            chunk = bz2.compress(b"".join(group), compresslevel)
            out.write(chunk)
            offset += len(chunk)
            group.clear()

        chunk = bz2.compress(head, compresslevel)
        out.write(chunk)
        offset += len(chunk)
        for page in pages:
            group.append(page)
            count += 1
            if len(group) == pages_per_stream:
                flush()
        if group:
            flush()
        out.write(bz2.compress(b"</mediawiki>\n", compresslevel))
    return count


def write_multistream(
    pages_xml,
    dump_out,
    index_out,
    pages_per_stream: int = 100,
    compresslevel: int = 9,
    extra_pages: Iterable[bytes] = (),
) -> int:
    """Rewrite a pages-articles XML file as a multistream dump and its index (see
    :func:`write_multistream_pages`), ``extra_pages`` after its pages. Streams the source; a
    torn last page in it is left out. Returns the number of pages."""
    with open_dump(pages_xml) as stream:
        buf = b""
        while b"</siteinfo>" not in buf:
            more = stream.read(1 << 16)
            if not more:
                raise ValueError(f"{pages_xml}: no </siteinfo>")
            buf += more
        head_end = buf.index(b"</siteinfo>") + len(b"</siteinfo>\n")

        def pages(buf):
            while True:
                more = stream.read(1 << 22)
                buf += more
                last = 0
                for m in _PAGE.finditer(buf):
                    yield m.group(0)
                    last = m.end()
                buf = buf[last:]
                if not more:
                    break
            yield from extra_pages

        return write_multistream_pages(
            buf[:head_end], pages(buf[head_end:]), dump_out, index_out, pages_per_stream, compresslevel
        )
