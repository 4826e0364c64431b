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
- Memory: the peak resident memory of the whole ``corpus yokai --text mediawiki`` (and
  ``--text html-dump``) command (its largest process: Python's or a PHP renderer's), each
  started from a small Python of its own, at 5x the articles against 1x
  (goal: at most 1.3x): the sample's templates, modules and messages with its first
  WIKIORIGIN_BENCH_RENDER_ARTICLES articles (default 150) once or five times under other titles,
  and a list page linking them all.

The figure lines at the end go to the performance page (``scripts/bench_table.py``).
"""

from __future__ import annotations

import bz2
import os
import re
import time
import zlib
from pathlib import Path

from common import OUT, PY, cached, peak_rss_mb
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
ARTICLES = int(os.environ.get("WIKIORIGIN_BENCH_RENDER_ARTICLES", "150"))
COPIES = 5
LIST = "Κατάλογος για τη μέτρηση"


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
    ours, theirs, total, worst = sums["held-out"]
    print(f"{'render recall of the prose, held-out':<52} {ours / max(total, 1):7.4f} (goal >= 0.97)")
    print(f"{'render recall, worst held-out article':<52} {worst:7.3f} (goal >= 0.85)")
    print(f"{'render recall of the prose, wikitext path':<52} {theirs / max(total, 1):7.4f}")
    print(f"{'render footnotes kept / cited':<52} {notes[1] / max(notes[0], 1):7.3f} (goal 1)")


def _scaled_dump(copies: int) -> tuple[Path, Path]:
    """The sample's templates, modules and messages, its first :data:`ARTICLES` articles
    ``copies`` times (copy k: titles `` (k)``, ids + k x 10^7) and a list page linking them."""
    from wikiorigin.dumps.pages import iter_pages
    from wikiorigin.testing import page_xml, write_multistream_pages

    def make(path):
        with bz2.open(SAMPLE) as f:
            head = f.read(1 << 16)
        head = head[: head.index(b"</siteinfo>") + len(b"</siteinfo>\n")]
        pages = list(iter_pages(SAMPLE))
        xml = [page_xml(p.page_id, p.title, p.text, ns=p.namespace) for p in pages if p.namespace in (8, 10, 828)]
        articles = [p for p in pages if p.namespace == 0 and not p.redirect][:ARTICLES]
        titles = [f"{p.title} ({k})" for k in range(copies) for p in articles]
        for k in range(copies):
            xml += [page_xml(p.page_id + k * 10_000_000, f"{p.title} ({k})", p.text) for p in articles]
        xml.append(page_xml(90_000_000, LIST, "== Άρθρα ==\n" + "\n".join(f"* [[{t}]]" for t in titles)))
        write_multistream_pages(head, xml, path, index)

    index = OUT / f"render-{copies}x-{ARTICLES}-index.txt.bz2"
    return cached(f"render-{copies}x-{ARTICLES}.xml.bz2", make), index


def _html_dump(dump: Path, index: Path, pool) -> Path:
    """An HTML dump in the Enterprise layout of the articles of ``dump``, from ``pool``'s rendering."""
    from wikiorigin.dumps.pages import Multistream
    from wikiorigin.render.htmldump import write_html_dump

    def make(path):
        ms = Multistream(dump, index)
        pages = [p for p in ms.get(ms.titles(), follow_redirects=False).values() if p.namespace == 0]
        answers = pool.render([(p.title, p.text) for p in pages if p.title != LIST])
        rows = [
            {
                "name": p.title,
                "identifier": p.page_id,
                "version": {"identifier": p.revision_id},
                "article_body": {"html": a.get("html", ""), "wikitext": p.text},
            }
            for p, a in zip([p for p in pages if p.title != LIST], answers)
        ]
        write_html_dump(path, rows)

    return cached(f"{dump.name.split('.')[0]}-NS0-ENTERPRISE-HTML.json.tar.gz", make)


def _memory(pool) -> None:
    """Peak memory of ``corpus yokai --text mediawiki|html-dump`` at 5x the articles against 1x."""
    dumps = {n: _scaled_dump(n) for n in (1, COPIES)}
    peaks = {}
    for text in ("mediawiki", "html-dump"):
        for n, (dump, index) in dumps.items():
            out = OUT / f"render-{n}x-{text}.parquet"
            argv = [PY, "-m", "wikiorigin.cli", "corpus", "yokai", "--dump", str(dump), "--index", str(index)]
            argv += ["--out", str(out), "--list-page", LIST, "--text", text]
            if text == "html-dump":
                argv += ["--html-dump", str(_html_dump(dump, index, pool))]
            peak_rss_mb(argv)  # the store and the index made once, outside the measure
            peaks[text, n] = peak_rss_mb(argv)
        print(
            f"  corpus yokai --text {text}, peak RSS: {peaks[text, 1]:.0f} MB at 1x ({ARTICLES} articles), "
            f"{peaks[text, COPIES]:.0f} MB at {COPIES}x"
        )
    for text in ("mediawiki", "html-dump"):
        label = f"render peak memory {COPIES}x / 1x, --text {text}"
        print(f"{label:<52} {peaks[text, COPIES] / peaks[text, 1]:7.2f} (goal <= 1.3)")


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
    print(f"{'render cost per article, mediawiki / wikitext':<52} {rendered / wikitext:7.1f}x")
    _memory(pool)
    pool.close()


if __name__ == "__main__":
    main()
