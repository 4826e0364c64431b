"""Wikitext to text with references on the real jawiki sample: pages per second, and the
ratio to mwparserfromhell's bare parse of the same pages (anchor: our conversion costs at
most 2x the parse, i.e. the ratio conversion time / parse time <= 2)."""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import mwparserfromhell

from common import QUICK
from wikiorigin.dumps.pages import iter_pages
from wikiorigin.wikitext import convert

SAMPLE = (
    Path(__file__).resolve().parent.parent
    / "tests"
    / "data"
    / "dumps"
    / "jawiki-20230501-pages-articles-multistream_first100k-lines.xml.xz"
)


def best(fn, texts, runs=3) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        for text in texts:
            fn(text)
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        texts = [p.text for p in iter_pages(SAMPLE, namespaces=[0]) if not p.redirect]
    texts = texts[:20] if QUICK else texts
    parse_s = best(mwparserfromhell.parse, texts, 1 if QUICK else 3)
    convert_s = best(convert, texts, 1 if QUICK else 3)
    refs = sum(len(convert(t).references) for t in texts)
    print(
        f"bench_wikitext: {len(texts)} jawiki articles, {sum(map(len, texts)) / 1e6:.1f} M chars, {refs:,} references"
    )
    print(f"  bare parse {len(texts) / parse_s:,.1f} pages/s; conversion {len(texts) / convert_s:,.1f} pages/s")
    print(f"{'conversion / bare parse, time':<44} {convert_s / parse_s:7.2f} (anchor <= 2)")


if __name__ == "__main__":
    sys.exit(main())
