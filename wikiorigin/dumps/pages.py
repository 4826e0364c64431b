"""Pages with their text from pages-articles dumps: streaming, and random access by title or id.

:func:`iter_pages` streams any pages-articles / pages-meta-current dump (export 0.10 or 0.11):
one :class:`PageText` per page with its latest revision's text, id and timestamp. A torn last
page is reported with a warning; the pages before it are yielded.

The other names live in a module each and are imported from here: the parsing of one page
(:mod:`~wikiorigin.dumps.pagexml`: :class:`PageText`, :func:`parse_pages`), random access to a
multistream dump through its index (:mod:`~wikiorigin.dumps.multistream`: :class:`Multistream`,
:class:`MultistreamIndex`) and MediaWiki's title normalization
(:mod:`~wikiorigin.dumps.titles`: :class:`TitleNormalizer`).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Iterator

from .compression import open_dump
from .multistream import Multistream, MultistreamIndex
from .pagexml import PageText, parse_pages
from .titles import TitleNormalizer
from .xmlhead import read_header
from .xmltext import element

__all__ = ["PageText", "iter_pages", "parse_pages", "Multistream", "MultistreamIndex", "TitleNormalizer"]

_TITLE = element("title")


def iter_pages(path, namespaces: Iterable[int] | None = None, threads: int = 1) -> Iterator[PageText]:
    """Every page of a pages-articles dump, with its latest revision (single pass)."""
    wanted = None if namespaces is None else frozenset(namespaces)
    with open_dump(path, threads=threads) as stream:
        _, buf = read_header(stream.read, path)
        base = stream.pos - len(buf)
        while True:
            chunk = stream.read(1 << 22)
            buf += chunk
            end = buf.rfind(b"</page>")
            if end >= 0:
                for page in parse_pages(buf[: end + 7], f"{path}: near byte {base}"):
                    if wanted is None or page.namespace in wanted:
                        yield page
                buf, base = buf[end + 7 :], base + end + 7
            if not chunk:
                break
        if b"<page>" in buf:
            title = _TITLE.search(buf)
            name = title.group(1).decode("utf-8", "replace") if title else "?"
            warnings.warn(f"{path}: near byte {base}: torn last page {name!r}, not read", stacklevel=2)
