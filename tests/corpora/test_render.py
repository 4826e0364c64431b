"""Article text as readers see it: real pages of a real wiki (tests/data/dumps/
elwikivoyage-render-sample.xml.xz: ten articles with the templates, Lua modules and messages
they use) rendered by MediaWiki (Debian's package) through ``corpus yokai --text mediawiki``,
then read back from an Enterprise-layout HTML dump that our rendering wrote.

Under ``CI=true`` a missing MediaWiki fails these tests; elsewhere they skip, saying how to
install it."""

from __future__ import annotations

import lzma
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.corpora.engine import require_mediawiki
from wikiorigin.cli import main
from wikiorigin.files import read_provenance
from wikiorigin.render.mediawiki import find_mediawiki, renderer
from wikiorigin.render.recall import rendered_prose, token_recall, words
from wikiorigin.wikitext import convert

DATA = Path(__file__).resolve().parents[1] / "data" / "dumps"
SAMPLE = DATA / "elwikivoyage-render-sample.xml.xz"
LIST = "Κατάλογος δοκιμής"
ARTICLES = [
    "Ευρωπαϊκή Ένωση",
    "Εγνατία οδός",
    "Αμπχαζία",
    "Κεντρική Ευρώπη",
    "Αγκριτζέντο",
    "Μακεδονία",
    "Αίγινα (Χώρα)",
    "Σικελία",
    "Καστοριά",
    "Μπρατισλάβα",
]

require_mediawiki()


@pytest.fixture(scope="session")
def el_dump(tmp_path_factory):
    """The sample as a multistream dump with a list page of its articles; the corpus rendered
    once by MediaWiki (``corpus yokai --text mediawiki``: its store made beside it). Returns
    (dump, index, corpus, the store, the pages by title)."""
    from wikiorigin.dumps.pages import iter_pages
    from wikiorigin.testing import page_xml, write_multistream

    d = tmp_path_factory.mktemp("elwikivoyage")
    xml = d / "sample.xml"
    xml.write_bytes(lzma.decompress(SAMPLE.read_bytes()))
    dump, index = d / "elwikivoyage-multistream.xml.bz2", d / "index.txt.bz2"
    listing = "\n".join(f"* [[{title}]]" for title in ARTICLES)
    write_multistream(xml, dump, index, pages_per_stream=10, extra_pages=[page_xml(990001, LIST, listing)])
    pages = {p.title: p for p in iter_pages(xml) if p.namespace == 0}
    out = d / "out" / "articles.parquet"
    out.parent.mkdir()
    args = ["corpus", "yokai", "--dump", str(dump), "--index", str(index), "--out", str(out), "--list-page", LIST]
    assert main([*args, "--text", "mediawiki"]) == 0
    return dump, index, out, out.parent / f"{dump.name}.mediawiki", pages


@pytest.mark.slow
def test_rendered_text_keeps_the_prose_and_every_footnote(el_dump):
    """Of the words of MediaWiki's rendered prose, the text keeps >= 0.97 overall and >= 0.85
    in every article (the wikitext path: far less), and every cited footnote with its text."""
    import lxml.html

    dump, _, out, store, pages = el_dump
    rows = {r["title"]: r for r in pq.read_table(out).to_pylist()}
    assert sorted(rows) == sorted(ARTICLES)
    answers = renderer(find_mediawiki(), store, 2).render([(t, pages[t].text) for t in ARTICLES])
    totals = Counter()
    for title, answer in zip(ARTICLES, answers):
        prose = rendered_prose(answer["html"], pages[title].text)
        found, total = token_recall(prose, rows[title]["text"])
        assert found >= 0.85 * total, title
        totals["ours"] += found
        totals["wikitext"] += token_recall(prose, convert(pages[title].text).text)[0]
        totals["all"] += total
        cited = lxml.html.fromstring(answer["html"]).xpath("//ol[contains(@class,'references')]/li")
        assert len(rows[title]["references"]) == len(cited), title
        assert all(r["text"] for r in rows[title]["references"])
    assert totals["ours"] >= 0.97 * totals["all"]
    assert totals["wikitext"] < 0.85 * totals["all"]  # what templates hold, the wikitext path lost
    assert sum(len(r["references"]) for r in rows.values()) == 12
    assert "Τηλ" in rows["Αγκριτζέντο"]["text"] or "updated" in rows["Αγκριτζέντο"]["text"]  # listings


@pytest.mark.slow
def test_provenance_names_the_engine_and_the_store_is_reused(el_dump, capsys):
    dump, index, out, store, _ = el_dump
    meta = read_provenance(out)
    assert meta["text"].startswith("mediawiki (MediaWiki 1.")
    made = (store / "store.json").stat().st_mtime_ns
    again = out.with_name("again.parquet")
    args = ["corpus", "yokai", "--dump", str(dump), "--index", str(index), "--out", str(again), "--list-page", LIST]
    assert main(args) == 0  # the default: MediaWiki, installed here
    printed = capsys.readouterr().out
    assert "text: mediawiki" in printed and "page furniture left out:" in printed and " files" in printed
    assert (store / "store.json").stat().st_mtime_ns == made  # not made again
    assert pq.read_table(again).column("text").to_pylist() == pq.read_table(out).column("text").to_pylist()


def test_an_html_dump_gives_the_same_text(el_dump, tmp_path, capsys):
    """An Enterprise HTML dump (NDJSON in .json.tar.gz, ``article_body.html``) written from our
    own rendering gives the corpus the same text as MediaWiki did, with no MediaWiki asked."""
    from wikiorigin.render.htmldump import iter_html_dump, write_html_dump

    dump, index, out, store, pages = el_dump
    answers = renderer(find_mediawiki(), store, 2).render([(t, pages[t].text) for t in ARTICLES])
    html_dump = tmp_path / "elwikivoyage-NS0-20260801-ENTERPRISE-HTML.json.tar.gz"
    records = [
        {
            "name": t,
            "identifier": pages[t].page_id,
            "version": {"identifier": pages[t].revision_id},
            "url": f"https://el.wikivoyage.org/wiki/{t}",
            "article_body": {"html": a["html"], "wikitext": pages[t].text},
        }
        for t, a in zip(ARTICLES, answers)
    ]
    assert write_html_dump(html_dump, records) == len(ARTICLES)
    assert [a["name"] for a in iter_html_dump(html_dump)] == ARTICLES
    got = tmp_path / "articles.parquet"
    args = ["corpus", "yokai", "--dump", str(dump), "--index", str(index), "--out", str(got), "--list-page", LIST]
    assert main([*args, "--text", "html-dump", "--html-dump", str(html_dump)]) == 0
    assert read_provenance(got)["text"] == f"html-dump ({html_dump.name})"
    mine, theirs = pq.read_table(got).to_pylist(), pq.read_table(out).to_pylist()
    assert [r["text"] for r in mine] == [r["text"] for r in theirs]
    assert [r["references"] for r in mine] == [r["references"] for r in theirs]


def test_a_missing_engine_is_one_line(el_dump, tmp_path, monkeypatch, capsys):
    dump, index, *_ = el_dump
    monkeypatch.setenv("WIKIORIGIN_MEDIAWIKI", str(tmp_path / "no-mediawiki"))
    out = tmp_path / "a.parquet"
    args = ["corpus", "yokai", "--dump", str(dump), "--index", str(index), "--out", str(out), "--list-page", LIST]
    assert main([*args, "--text", "mediawiki"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "apt-get install mediawiki" in err[0]
    assert not out.exists()
    assert main(args) == 0  # the default falls back to the wikitext, saying how to get MediaWiki's
    captured = capsys.readouterr()
    assert "note: text from the wikitext" in captured.err and "apt-get install" in captured.err
    assert read_provenance(out)["text"].startswith("wikitext")


def test_html_text_rules():
    """Furniture left out and counted; inline template output kept; footnotes numbered as shown."""
    from wikiorigin.render.html import html_article

    html = (
        '<div class="mw-parser-output"><div class="hatnote">See also X</div>'
        '<table class="infobox"><tr><td>Capital</td></tr></table>'
        '<p>Born <span>1890</span> in Tōno.<sup class="reference"><a href="#cite_note-a-1">[1]</a></sup></p>'
        '<h2><span class="mw-headline" id="Life">Life</span><span class="mw-editsection">[edit]</span></h2>'
        '<ul><li>One<sup class="reference"><a href="#cite_note-2">[注 1]</a></sup></li></ul>'
        '<p><a href="/File:Map.png" title="File:Map.png">File:Map.png</a> <span style="display:none">x</span></p>'
        '<div class="navbox">Nav</div>'
        '<ol class="references"><li id="cite_note-a-1"><span class="mw-cite-backlink">^</span> '
        '<span class="reference-text">Yanagita 1910, p. 3.</span></li>'
        '<li id="cite_note-2"><span class="reference-text">A note.</span></li>'
        '<li id="cite_note-3"><span class="reference-text">Never cited.</span></li></ol></div>'
    )
    article, left = html_article(html, ["Yōkai"])
    assert article.text == "Born 1890 in Tōno.[1]\n\n== Life ==\nOne[注 1]"
    assert [(s.heading, s.level) for s in article.sections] == [("", 0), ("Life", 2)]
    assert [(r.number, r.group, r.name, r.text) for r in article.references] == [
        (1, None, "a", "Yanagita 1910, p. 3."),
        (1, "注", None, "A note."),
    ]
    assert article.uncited == 1 and article.categories == ["Yōkai"]
    assert left.left_out == {"banners": 1, "infoboxes": 1, "edit_links": 1, "files": 1, "hidden": 1, "navigation": 1}
    assert words("Tōno, 1890") == ["tōno", "1890"]


@pytest.mark.slow
def test_japanese_pages_without_their_templates(ja_multistream, tmp_path, capsys):
    """The Japanese sample carries no templates: by default its text is the wikitext's (a note
    says why); asked for, MediaWiki renders its articles' prose, and a template it lacks leaves
    nothing in the text (no red link to the template)."""
    from wikiorigin.dumps.pages import Multistream
    from wikiorigin.render.sources import MediaWikiText, WikitextText, text_source

    dump, index, _ = ja_multistream
    ms = Multistream(dump, index)
    source, note = text_source(None, ms, tmp_path / "x.parquet")
    assert isinstance(source, WikitextText) and "carries no templates" in note
    source, note = text_source("mediawiki", ms, tmp_path / "x.parquet")
    assert isinstance(source, MediaWikiText) and note is None
    pages = list(ms.get(["河童", "地理"]).values())
    for page, (article, left_out) in zip(pages, source.articles(pages)):
        assert not article.fallback and len(article.text) > 500, page.title
        assert "Template:" not in article.text and "テンプレート:" not in article.text, page.title
        assert article.references, page.title
        assert left_out["missing_templates"] >= 1, page.title


def test_a_footnote_with_an_empty_name_is_kept(el_dump):
    """``<ref name="">`` (what ``{{efn}}`` and the like write when given no name) is a footnote
    without a name, as in later Cite; MediaWiki 1.39's Cite links it to no note."""
    from wikiorigin.render.html import html_article

    store = el_dump[3]
    text = 'One.<ref name="">First.</ref> Two.<ref name="" group="n">Second.</ref> Three.<ref>Third.</ref>'
    answer = renderer(find_mediawiki(), store, 2).render(
        [("Σελίδα", text + '\n<references group="n"/>\n<references/>')]
    )
    article, _ = html_article(answer[0]["html"], [])
    assert article.text == "One.[1] Two.[n 1] Three.[2]"
    assert [(r.group, r.number, r.text) for r in article.references] == [
        (None, 1, "First."),
        (None, 2, "Third."),
        ("n", 1, "Second."),
    ]


def test_parser_functions_of_extensions_the_engine_lacks_leave_no_wikitext(el_dump):
    """``{{#chart:...}}`` (Chart, which replaced ``<graph>``), ``{{#categorytree:...}}`` and
    labelled-section transclusion under its other names (``#section``, ``#section-x``,
    ``#section-h``) are functions of extensions the store lacks: no text, not their wikitext."""
    from wikiorigin.render.html import html_article

    text = "A {{#chart:Population.chart}} B {{#categorytree:Foo}} C {{#section:Foo|x}}{{#section-x:Foo|x}}"
    answer = renderer(find_mediawiki(), el_dump[3], 2).render([("Σελίδα", text + "{{#section-h:Foo|x}} D.")])
    article, _ = html_article(answer[0]["html"], [])
    assert article.text == "A B C D."
