"""Article text rendered by MediaWiki against today's wikitext path, on the real whole-wiki
sample (elwikivoyage-sample-pages-articles-2040.xml.bz2: 1,518 articles with the wiki's own
templates and Lua modules; WIKIORIGIN_BENCH_RENDER_SAMPLE names another pages-articles dump).

- Faithfulness: of the words of MediaWiki's rendered prose (:func:`wikiorigin.render.recall.
  rendered_prose`), the share each text keeps (token recall), overall and per article (goals:
  >= 0.97 overall, >= 0.85 in every article), and the footnotes kept (goal: all). Articles are
  split by a hash of their title into ``tuning`` (a quarter, looked at while writing the rules)
  and ``held-out`` (the rest, reported apart).
- Cost: seconds per article and per MB of wikitext of the MediaWiki path (render + HTML to
  text, on all cores: one PHP process each) as a ratio against the wikitext path (one core),
  best of WIKIORIGIN_BENCH_RENDER_RUNS (default 1); the store's set-up time, once.
"""

from __future__ import annotations

import os
import re
import time
import zlib
from pathlib import Path

from common import OUT
from wikiorigin.render.html import html_article
from wikiorigin.render.mediawiki import find_mediawiki, renderer
from wikiorigin.render.recall import rendered_prose, token_recall
from wikiorigin.render.store import prepare_store
from wikiorigin.testing import write_multistream
from wikiorigin.wikitext import convert

SAMPLE = Path(
    os.environ.get(
        "WIKIORIGIN_BENCH_RENDER_SAMPLE", "/work/shared/samples/dumps/elwikivoyage-sample-pages-articles-2040.xml.bz2"
    )
)
_NOTE = re.compile(r'<li id="cite(?:_|&#95;)note-')
RUNS = int(os.environ.get("WIKIORIGIN_BENCH_RENDER_RUNS", "1"))


def _pages():
    from wikiorigin.dumps.pages import Multistream

    OUT.mkdir(parents=True, exist_ok=True)
    dump, index = OUT / f"{SAMPLE.stem}.multistream.xml.bz2", OUT / f"{SAMPLE.stem}.index.txt.bz2"
    if not dump.exists():
        write_multistream(SAMPLE, dump, index)
    ms = Multistream(dump, index)
    titles = [t for t in ms.titles() if ms.entry(t) is not None]
    pages = [p for p in ms.get(titles, follow_redirects=False).values() if p.namespace == 0 and not p.redirect]
    return ms, pages


def _best(fn) -> float:
    times = []
    for _ in range(RUNS):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return min(times)


def _recall(pages, answers) -> dict:
    sums = {"tuning": [0, 0, 0, 1.0], "held-out": [0, 0, 0, 1.0]}  # ours, wikitext, all, worst
    notes = [0, 0, 0]  # cited in the HTML, kept by us, kept by the wikitext path
    for page, answer in zip(pages, answers):
        if "html" not in answer:
            continue
        prose = rendered_prose(answer["html"], page.text)
        ours, _ = html_article(answer["html"], answer.get("categories"))
        theirs = convert(page.text)
        found, total = token_recall(prose, ours.text)
        part = sums["tuning" if zlib.crc32(page.title.encode()) % 4 == 0 else "held-out"]
        part[0] += found
        part[1] += token_recall(prose, theirs.text)[0]
        part[2] += total
        if total:
            part[3] = min(part[3], found / total)
        notes[0] += len(_NOTE.findall(answer["html"]))
        notes[1] += len(ours.references)
        notes[2] += len(theirs.references)
    for name, (ours, theirs, total, worst) in sums.items():
        print(
            f"  {name}: recall of MediaWiki's prose: ours {ours / max(total, 1):.4f}, wikitext path "
            f"{theirs / max(total, 1):.4f} ({total:,} words); worst article (ours) {worst:.3f}"
        )
    print(f"  footnotes: {notes[0]} in MediaWiki's lists, {notes[1]} kept, {notes[2]} by the wikitext path")


def main() -> None:
    engine = find_mediawiki()
    if engine is None:
        raise SystemExit("bench_render: MediaWiki is not installed (apt-get install mediawiki php-cli php-sqlite3)")
    ms, pages = _pages()
    size = sum(len(p.text.encode()) for p in pages) / 1e6
    started = time.perf_counter()
    store = prepare_store(ms, OUT / f"{SAMPLE.stem}.mediawiki", engine)
    print(
        f"render: {len(pages)} articles, {size:.1f} MB of wikitext; store ready in {time.perf_counter() - started:.1f} s"
    )
    processes = os.cpu_count() or 1
    pool = renderer(engine, store, processes)
    pool.render([(pages[0].title, pages[0].text)] * processes)  # the PHP processes started
    answers = []

    def mediawiki():
        answers[:] = pool.render([(p.title, p.text) for p in pages])
        for answer in answers:
            html_article(answer["html"], answer.get("categories"))

    rendered = _best(mediawiki)
    wikitext = _best(lambda: [convert(p.text, ms.site.namespaces) for p in pages])
    failed = sum("html" not in a for a in answers)
    print(
        f"  cost: mediawiki {1000 * rendered / len(pages):.1f} ms/article, {rendered / size:.1f} s/MB on "
        f"{processes} processes; wikitext {1000 * wikitext / len(pages):.1f} ms/article, {wikitext / size:.1f} "
        f"s/MB on 1; ratio {rendered / wikitext:.1f}x; {failed} pages MediaWiki failed on"
    )
    _recall(pages, answers)
    pool.close()


if __name__ == "__main__":
    main()
