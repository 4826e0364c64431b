"""Rendering another wiki than the Greek sample: an English-Wikipedia-style dump
(tests/data/dumps/wikipedia-like-render-sample.xml, hand-made: see SOURCES.md) whose articles use
enwiki's furniture, citation and language templates, Lua modules and footnote groups, rendered
by MediaWiki through ``corpus yokai --text mediawiki``.

Under ``CI=true`` a missing MediaWiki fails these tests; elsewhere they skip."""

from __future__ import annotations

import json
import os
import subprocess
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.corpora.engine import require_mediawiki
from wikiorigin.cli import main
from wikiorigin.render.mediawiki import find_mediawiki, renderer
from wikiorigin.render.recall import rendered_prose, token_recall, words

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "dumps" / "wikipedia-like-render-sample.xml"
LIST = "List of test articles"
ARTICLES = ["Kappa (folklore)", "Umibōzu", "Funayūrei"]
FURNITURE_WORDS = {
    *"citation needed".split(),  # {{citation needed}}: maintenance (noprint)
    *"33 5 130 4 n e".split(),  # {{coord}}: the decimal form, hidden (geo-nondefault)
    *"template nihongo2 ja japan portal umibōzu".split(),  # a missing template; {{ill}}, portal and navbox links
    *"lua error in module wikidata at line attempt to index field wikibase a nil value".split(),  # no Wikidata
}

require_mediawiki()


@pytest.fixture(scope="module")
def enwiki(tmp_path_factory):
    """The sample as a multistream dump with a list page, its corpus rendered by MediaWiki;
    (corpus rows by title, MediaWiki's own HTML by title, the pages by title, (dump, index, store))."""
    from wikiorigin.dumps.pages import iter_pages
    from wikiorigin.testing import page_xml, write_multistream

    d = tmp_path_factory.mktemp("enwiki")
    dump, index = d / "enwiki-multistream.xml.bz2", d / "index.txt.bz2"
    listing = "\n".join(f"* [[{title}]]" for title in ARTICLES)
    write_multistream(SAMPLE, dump, index, pages_per_stream=10, extra_pages=[page_xml(990001, LIST, listing)])
    out = d / "articles.parquet"
    args = ["corpus", "yokai", "--dump", str(dump), "--index", str(index), "--out", str(out), "--list-page", LIST]
    assert main([*args, "--text", "mediawiki"]) == 0
    pages = {p.title: p for p in iter_pages(SAMPLE) if p.namespace == 0}
    answers = renderer(find_mediawiki(), d / f"{dump.name}.mediawiki", 2).render([(t, pages[t].text) for t in ARTICLES])
    rows = {r["title"]: r for r in pq.read_table(out).to_pylist()}
    return rows, {t: a["html"] for t, a in zip(ARTICLES, answers)}, pages, (dump, index, d / f"{dump.name}.mediawiki")


@pytest.mark.slow
def test_the_prose_missed_is_furniture_and_every_footnote_is_kept(enwiki):
    """Each article keeps >= 0.85 of MediaWiki's prose; the words it lacks are furniture's (a
    maintenance tag, hidden coordinates, navigation links, a script error); every note of the
    lists is kept with its text, whatever its group's labels ([a], [I]) or its name (``name=""``)."""
    import lxml.html

    rows, html, pages, _ = enwiki
    for title in ARTICLES:
        prose = rendered_prose(html[title], pages[title].text)
        found, total = token_recall(prose, rows[title]["text"])
        assert found >= 0.85 * total, title
        missing = Counter(prose) - Counter(words(rows[title]["text"]))
        assert set(missing) <= FURNITURE_WORDS, (title, missing)
        notes = lxml.html.fromstring(html[title]).xpath("//ol[contains(@class,'references')]/li")
        assert len(rows[title]["references"]) == len(notes) > 0, title
        assert all(r["text"] for r in rows[title]["references"]), title


@pytest.mark.slow
def test_templates_modules_and_site_are_the_dumps(enwiki):
    rows, *_ = enwiki
    kappa = rows["Kappa (folklore)"]
    text = kappa["text"].replace("\xa0", " ")  # no-break spaces as MediaWiki writes them
    assert '(河童, lit. "river-child")' in kappa["text"]  # {{nihongo}} and {{lang}} (Lua, mw.loadData)
    assert "1200 km (746 mi)" in text and "33.5°N 130.4°E Kurume" in text
    assert "kept on Wikipedia and" in kappa["text"]  # {{SITENAME}}: the dump's
    assert "kappa-kawa no kami" in kappa["text"] and "syntaxhighlight" not in kappa["text"]
    assert "<section" not in kappa["text"] and "hiero" not in kappa["text"]
    assert "Kurume.[lower-alpha 1]" in kappa["text"] and "Kijimuna.[lower-alpha 2]" in kappa["text"]
    notes = {(r["group"], r["number"]): r for r in kappa["references"]}
    assert notes["lower-alpha", 1]["text"] == "The Kurume legend is the oldest written one.[2]"
    foster = notes[None, 1]
    assert (foster["template"], foster["year"], foster["isbn"], foster["authors"]) == (
        "citation",
        "2015",
        "9780520271029",
        ["Foster, Michael Dylan"],
    )
    assert "[upper-roman 1]" in rows["Funayūrei"]["text"] and "[note 2]" in rows["Umibōzu"]["text"]
    assert "Kappa" in kappa["categories"] and "Japanese legendary creatures" in kappa["categories"]


@pytest.mark.slow
def test_a_case_sensitive_wiki_keeps_its_titles_case(tmp_path):
    """Wiktionary's titles keep their first letter's case (``<case>case-sensitive</case>``):
    ``{{en-noun}}`` is ``Template:en-noun``, not ``Template:En-noun``; the site's name is the dump's."""
    from wikiorigin.dumps.pages import Multistream
    from wikiorigin.render.sources import text_source
    from wikiorigin.testing import page_xml, write_multistream_pages

    head = (
        b'<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.11/" version="0.11" xml:lang="en">\n<siteinfo>\n'
        b"<sitename>Wiktionary</sitename>\n<dbname>enwiktionary</dbname>\n<case>case-sensitive</case>\n<namespaces>\n"
        b'<namespace key="0" case="case-sensitive" />\n<namespace key="10" case="case-sensitive">Template</namespace>\n'
        b"</namespaces>\n</siteinfo>\n"
    )
    pages = [
        page_xml(1, "Template:en-noun", "'''{{PAGENAME}}''' (plural '''{{PAGENAME}}s''') on {{SITENAME}}", ns=10),
        page_xml(2, "Template:En-noun", "the wrong template", ns=10),
        page_xml(3, "kappa", "==English==\n===Noun===\n{{en-noun}}\n# A water imp of Japanese folklore."),
    ]
    dump, index = tmp_path / "enwiktionary-multistream.xml.bz2", tmp_path / "index.txt.bz2"
    write_multistream_pages(head, pages, dump, index)
    ms = Multistream(dump, index)
    source, _ = text_source("mediawiki", ms, tmp_path / "out.parquet")
    ((article, _),) = source.articles(list(ms.get(["kappa"]).values()))
    assert "kappa (plural kappas) on Wiktionary" in article.text and "wrong" not in article.text


def _parsoid(store: Path, pages) -> list[str]:
    """Parsoid's HTML of ``pages`` (MediaWiki's bundled Parsoid, tests/corpora/parsoid.php)."""
    engine = find_mediawiki()
    script = Path(__file__).with_name("parsoid.php")
    requests = "".join(json.dumps({"title": p.title, "text": p.text}) + "\n" for p in pages)
    done = subprocess.run(
        [engine.php, str(script), "--conf", str(store / "LocalSettings.php")],
        input=requests,
        capture_output=True,
        text=True,
        env=dict(os.environ, MW_INSTALL_PATH=str(engine.home)),
        check=True,
    )
    answers = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")][1:]
    return [a["html"] for a in answers]


@pytest.mark.slow
def test_an_html_dump_of_parsoid_html(enwiki, tmp_path):
    """An Enterprise-layout HTML dump of Parsoid's HTML (what Wikimedia's dumps carry), from the
    same wikitext: ``--text html-dump`` keeps the same prose and every footnote."""
    from wikiorigin.render.htmldump import write_html_dump

    rows, html, pages, (dump, index, store) = enwiki
    parsoid = _parsoid(store, [pages[t] for t in ARTICLES])
    assert all('typeof="mw:Extension/ref"' in h and "<section" in h for h in parsoid)
    html_dump = tmp_path / "enwiki-NS0-20260801-ENTERPRISE-HTML.json.tar.gz"
    records = [
        {"name": t, "identifier": pages[t].page_id, "article_body": {"html": h}} for t, h in zip(ARTICLES, parsoid)
    ]
    write_html_dump(html_dump, records)
    out = tmp_path / "articles.parquet"
    args = ["corpus", "yokai", "--dump", str(dump), "--index", str(index), "--out", str(out), "--list-page", LIST]
    assert main([*args, "--text", "html-dump", "--html-dump", str(html_dump)]) == 0
    got = {r["title"]: r for r in pq.read_table(out).to_pylist()}
    for title in ARTICLES:
        prose = rendered_prose(html[title], pages[title].text)
        assert token_recall(prose, got[title]["text"]) == token_recall(prose, rows[title]["text"]), title
        mine = [(r["group"], r["number"], r["text"]) for r in got[title]["references"]]
        assert mine == [(r["group"], r["number"], r["text"]) for r in rows[title]["references"]], title
    assert got["Kappa (folklore)"]["categories"] == ["Kappa", "Japanese legendary creatures"]
