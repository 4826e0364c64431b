"""Page-creation scan of stub-meta-history, pages-meta-history and File Export XML.

One pass, one record per page: its id, namespace, title, redirect flag, number of revisions
and its creation on this wiki. **Creation** is the earliest timestamp among the revisions made
on this wiki. Revisions imported from another wiki keep their old timestamps and carry a
contributor name with ``>`` (``en>Foo``, ``imported>Foo``): they are counted, and the earliest
timestamp of all revisions is kept too, but they do not set the creation time (the rule, and
the four places that apply it, in :mod:`~wikiorigin.dumps.creation`). Revisions come
in id order, not time order; ties on the timestamp go to the first revision in the file.

This is the hot path (:mod:`~wikiorigin.dumps.scanner`). The decompressed stream comes in
chunks; the pages that lie whole in a chunk are scanned where they lie. The compiled core
(``_scanblock.c``, built by ``setup.py``) walks every page and revision of a block without the
GIL and on two threads (page and revision ends found 16 or 32 bytes at a time with SSE2 or
AVX2, the tags between byte by byte), and returns Arrow-ready buffers: nothing is made per page
or revision in Python. Without a C compiler the pure-Python path gives the same rows: per page
one C-level ``findall`` of the timestamps, and a per-revision path only for pages holding
``&gt;``. Revision text (full-history files) is never parsed: dumps escape ``<`` inside text,
so tag patterns cannot match there. A page larger than a block (a long full history) is
summarized piece by piece; summaries of consecutive pieces combine with
:func:`~wikiorigin.dumps.creation.merge`, so memory stays flat.

Splitting at ``</page>`` trusts the markup, so the scan checks it on the way: a **structural
break** (an element not closed where the next one starts: a ``<page>`` inside a page, a
``<title>`` between revisions, a ``<revision>`` inside a revision, a ``</page>`` or
``</revision>`` without its opening tag, a ``<contributor>`` not closed in its revision, a
``<title>``, ``<ns>``, ``<id>``, ``<timestamp>`` or ``<username>`` running into the next tag)
would otherwise give a page the revisions of the next one, or keep markup in a title. Such a
page is left out, like a torn one: warned with its id and byte offset, counted in
``stats.broken_pages``, and the next page is read as usual. In the compiled core this costs
one more compare at each ``<`` it already stops at.

:func:`scan_pages` is the fast engine; :func:`scan_pages_mwxml` computes the same records with
mwxml, as an oracle for tests and a fallback (``--engine mwxml``). It stops at malformed XML
with an error naming the line, page and byte offset; only a file ending inside a page is a
torn end.

Modules, one concept each: :mod:`~wikiorigin.dumps.creation` (the records and the rule of
an imported revision), :mod:`~wikiorigin.dumps.scanner` (blocks, the compiled core, pages
larger than a block), ``_pyscan.py`` (the pure-Python path), ``_breaks.py`` (structural
breaks as the core finds them), :mod:`~wikiorigin.dumps.oracle` (mwxml). This module is where
callers import them from.
"""

from __future__ import annotations

from collections.abc import Iterable

from .compression import open_dump
from .creation import PageCreation, ScanStats
from .oracle import scan_pages_mwxml
from .scanner import StubScanner

__all__ = ["PageCreation", "ScanStats", "StubScanner", "scan_pages", "scan_pages_mwxml"]


def scan_pages(path, namespaces: Iterable[int] | None = None, threads: int = 1, scan_threads: int = 2) -> StubScanner:
    """Scan one dump file with the fast engine. Iterate the result for the records.

    ``threads``: bzip2 decoder threads; ``scan_threads``: threads of the compiled scan."""
    return StubScanner(open_dump(path, threads=threads), namespaces, scan_threads)
