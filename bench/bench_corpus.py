"""`corpus yokai` on 1x and 5x the real jawiki sample: `--jobs 2` against `--jobs 1` (goal: at
most 0.65x the time at 5x) and the peak memory at 5x against 1x (goal: at most 1.3x); then
`corpus origin --wikidata` on the same dumps, every article an item (items in qid order, so
the pages come in no order of the dump's): its peak memory at 5x against 1x (recorded).

The input is the sample's 189 articles (4.7 M characters of wikitext, 5,954 references) once,
or five times under other titles and page ids, as a multistream dump with a list page that
links every article: a list corpus of 189 or 945 articles. Each figure is the whole command in
a child process (start-up, the list page, fetching, converting, writing), timed best of three,
alternating; peak memory is the child's largest resident set (with `--jobs 2`: the largest of
its processes). Size: WIKIORIGIN_BENCH_CORPUS_COPIES (default 5; --quick: 2 of the sample's first 10
pages, best of one).
"""

from __future__ import annotations

import lzma
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

from common import OUT, PY, QUICK, cached, peak_rss_mb, size
from wikiorigin.dumps.pages import iter_pages
from wikiorigin.testing import page_xml, write_multistream_pages

SAMPLE = (
    Path(__file__).resolve().parent.parent
    / "tests"
    / "data"
    / "dumps"
    / "jawiki-20230501-pages-articles-multistream_first100k-lines.xml.xz"
)
COPIES = size(5, 2, "WIKIORIGIN_BENCH_CORPUS_COPIES")
PAGES = 10 if QUICK else None  # the sample's first pages only (None: all)
TRIES = 1 if QUICK else 3
LIST = "ベンチマーク用の一覧"


def make_dump(copies: int):
    """The sample's namespace-0 pages ``copies`` times (copy k: titles `` (k)``, ids + k x 10^7,
    redirects to the same copy) and a list page linking every article, as a multistream dump."""
    with lzma.open(SAMPLE) as f:
        head = f.read(1 << 16)
    head = head[: head.index(b"</siteinfo>") + len(b"</siteinfo>\n")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pages = list(iter_pages(SAMPLE, namespaces=[0]))[:PAGES]
    name = lambda title, k: f"{title} ({k})" if k else title  # noqa: E731
    xml, links = [], []
    for k in range(copies):
        for p in pages:
            redirect = name(p.redirect, k) if p.redirect else None
            xml.append(
                page_xml(
                    p.page_id + k * 10_000_000, name(p.title, k), p.text, redirect=redirect, revision_id=p.revision_id
                )
            )
            if not redirect:
                links.append(f"* [[{name(p.title, k)}]]")
    text = f"'''{LIST}'''\n== 記事 ==\n" + "\n".join(links) + "\n"
    xml.insert(0, page_xml(90_000_000, LIST, text))

    tag = f"{copies}x" + (f"-{PAGES}" if PAGES else "")
    index = OUT / f"corpus-jawiki-{tag}-index.txt.bz2"  # written before the dump is renamed
    dump = cached(f"corpus-jawiki-{tag}.xml.bz2", lambda path: write_multistream_pages(head, xml, path, index))
    return dump, index


def command(dump, index, jobs: int, out) -> list[str]:
    return [
        PY,
        "-m",
        "wikiorigin.cli",
        "corpus",
        "yokai",
        "--dump",
        str(dump),
        "--index",
        str(index),
        "--out",
        str(out),
        "--list-page",
        LIST,
        "--jobs",
        str(jobs),
    ]


def origin_inputs(dump, index, copies: int) -> tuple[Path, Path]:
    """An items file (origins schema) with an item for each article of the dump, numbered so
    that the items' order is not the dump's, and a Wikidata JSON dump naming each."""
    from wikiorigin.dumps.pages import Multistream
    from wikiorigin.testing import entity_json, write_items, write_wikidata_json

    ms = Multistream(dump, index)
    pages = [p for _, p in ms.each(ms.page_ids()) if p.redirect is None and p.namespace == 0 and p.title != LIST]
    rows = sorted((f"Q{p.page_id * 7919 + 1}", "jawiki", p.page_id, p.title) for p in pages)  # one item a page
    folder = OUT / (f"corpus-origin-{copies}x" + (f"-{PAGES}" if PAGES else ""))
    folder.mkdir(exist_ok=True)
    items = write_items(folder / "items.parquet", rows)
    lines = [entity_json(qid, {"ja": title, "en": title}) for qid, _, _, title in rows]
    return items, write_wikidata_json(folder, lines)


def origin_command(dump, index, items, wikidata, out) -> list[str]:
    return [PY, "-m", "wikiorigin.cli", "corpus", "origin", "--items", str(items), "--dump", str(dump)] + [
        "--index",
        str(index),
        "--wikidata",
        str(wikidata),
        "--out",
        str(out),
    ]


def wikitext_mb() -> tuple[float, int]:
    """MB of wikitext (UTF-8) in the sample's articles (redirects apart), and how many: the work
    of one copy, the figure the projection scales (docs/reference/performance.md)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        articles = [p for p in list(iter_pages(SAMPLE, namespaces=[0]))[:PAGES] if not p.redirect]
    return sum(len(p.text.encode()) for p in articles) / 1e6, len(articles)


def timed(argv) -> float:
    started = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> None:
    print(f"bench_corpus: corpus yokai on 1x and {COPIES}x the jawiki sample")
    one, many = make_dump(1), make_dump(COPIES)
    out = OUT / "corpus-bench.parquet"
    times: dict[int, list[float]] = {1: [], 2: []}
    for _ in range(TRIES):
        for jobs in (1, 2):
            times[jobs].append(timed(command(*many, jobs, out)))
    one_s, two_s = min(times[1]), min(times[2])
    print(
        f"  {COPIES}x: --jobs 1 {one_s:.1f} s, --jobs 2 {two_s:.1f} s (best of three: "
        f"{', '.join(f'{s:.1f}' for s in times[1])} / {', '.join(f'{s:.1f}' for s in times[2])} s)"
    )
    mb, articles = wikitext_mb()
    print(
        f"  {COPIES * articles} articles, {COPIES * mb:.1f} MB of wikitext: --jobs 1 {COPIES * mb / one_s:.2f} MB/s, "
        f"--jobs 2 {COPIES * mb / two_s:.2f} MB/s (whole commands; load average now {os.getloadavg()[0]:.1f})"
    )
    print(f"{'--jobs 2 / --jobs 1 time, ' + str(COPIES) + 'x':<44} {two_s / one_s:7.2f} (goal <= 0.65)")
    rss = {
        (n, jobs): peak_rss_mb(command(*dump, jobs, out)) for n, dump in ((1, one), (COPIES, many)) for jobs in (1, 2)
    }
    print(
        f"  peak RSS: --jobs 1 {rss[1, 1]:.0f} MB at 1x, {rss[COPIES, 1]:.0f} MB at {COPIES}x; "
        f"--jobs 2 {rss[1, 2]:.0f} MB at 1x, {rss[COPIES, 2]:.0f} MB at {COPIES}x (largest process)"
    )
    print(f"{'peak memory ' + str(COPIES) + 'x / 1x, --jobs 1':<44} {rss[COPIES, 1] / rss[1, 1]:7.2f} (goal <= 1.3)")
    print(f"{'peak memory ' + str(COPIES) + 'x / 1x, --jobs 2':<44} {rss[COPIES, 2] / rss[1, 2]:7.2f}")
    origin = {
        n: peak_rss_mb(origin_command(*dump, *origin_inputs(*dump, n), out)) for n, dump in ((1, one), (COPIES, many))
    }
    print(f"  corpus origin --wikidata, peak RSS: {origin[1]:.0f} MB at 1x, {origin[COPIES]:.0f} MB at {COPIES}x")
    print(f"{'corpus origin peak memory ' + str(COPIES) + 'x / 1x':<44} {origin[COPIES] / origin[1]:7.2f} (recorded)")


if __name__ == "__main__":
    sys.exit(main())
