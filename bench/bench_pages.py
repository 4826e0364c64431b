"""Multistream random access: 1,000 pages by title from a synthetic dump of >= 1 GB of XML,
against a full sequential scan of the same dump, in one run (anchor: >= 50x).

Size: WIKIORIGIN_BENCH_PAGES_MB (default 1000; --quick: 10). The speed-up of random access is about the
number of streams in the dump over the number of streams the wanted pages touch.
"""

from __future__ import annotations

import random
import sys
import time

from common import OUT, cached, size
from wikiorigin.dumps.pages import Multistream, iter_pages
from wikiorigin.testing import write_articles_xml, write_multistream

SIZE = size(1_000_000_000, 10_000_000, "WIKIORIGIN_BENCH_PAGES_MB", 1_000_000)


WANTED = min(1000, SIZE // 20_000)  # titles asked (a 10 MB dump holds some 2,000 pages)


def main() -> None:
    print("bench_pages: multistream random access")
    xml = cached(f"articles-{SIZE}.xml", lambda p: write_articles_xml(open(p, "wb"), SIZE))
    index = OUT / f"articles-{SIZE}-index.txt.bz2"
    dump = cached(
        f"articles-{SIZE}-multistream.xml.bz2",
        lambda p: write_multistream(xml, p, index, compresslevel=1),
    )
    started = time.perf_counter()
    ms = Multistream(dump, index, threads=2)
    opened = time.perf_counter() - started
    titles = random.Random(0).sample(ms.titles(), WANTED)
    streams = len({ms.entry(t).offset for t in titles})
    started = time.perf_counter()
    pages = ms.get(titles, follow_redirects=False)
    random_s = time.perf_counter() - started
    assert len(pages) == WANTED
    started = time.perf_counter()
    n = sum(1 for _ in iter_pages(dump, threads=2))
    scan_s = time.perf_counter() - started
    print(
        f"  {n:,} pages in {len(ms.offsets) - 1:,} streams; index read in {opened:.1f} s; "
        f"{WANTED:,} random titles touch {streams:,} streams: {random_s:.1f} s; full scan {scan_s:.1f} s"
    )
    print(f"{f'random access / full scan, {WANTED:,} pages':<44} {scan_s / random_s:7.1f} (anchor >= 50)")


if __name__ == "__main__":
    sys.exit(main())
