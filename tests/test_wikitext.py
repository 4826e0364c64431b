import collections
import re
import warnings

import pytest

from wikiorigin.dumps.pages import iter_pages
from wikiorigin.wikitext import convert

JA = "jawiki-20230501-pages-articles-multistream_first100k-lines.xml.xz"
MARKER = re.compile(r"\[(?:([^\s\[\]]+) )?(\d+)\]")


@pytest.fixture(scope="module")
def ja_articles(data_dir):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pages = [p for p in iter_pages(data_dir / JA, namespaces=[0]) if not p.redirect]
    return {p.page_id: (p, convert(p.text)) for p in pages}


@pytest.mark.slow
def test_every_marker_has_a_reference_and_every_reference_is_cited(ja_articles):
    assert len(ja_articles) == 189
    total = 0
    for page, article in ja_articles.values():
        assert not article.fallback, page.title
        cited = {(g or None, int(n)) for g, n in MARKER.findall(article.text)}
        have = {(r.group, r.number) for r in article.references}
        assert cited == have, page.title
        groups = collections.defaultdict(list)
        for ref in article.references:
            groups[ref.group].append(ref.number)
        for numbers in groups.values():
            assert numbers == list(range(1, len(numbers) + 1)), page.title
        named = [(r.group, r.name) for r in article.references if r.name]
        assert len(named) == len(set(named)), page.title  # a named reuse shares one number
        total += len(article.references)
    assert total > 5000


@pytest.mark.slow
@pytest.mark.parametrize(
    "page_id,default,notes",
    [
        (141, 3, 1),  # 音楽家: three plain refs and one group="注"
        (272, 3, 1),  # 個人: koujien, daijisen (reused), Barnard (reused 3x), one group="注"
        (172, 5, 0),  # 画像: five named refs, <references />
    ],
)
def test_reference_counts_pinned_by_hand(ja_articles, page_id, default, notes):
    _, article = ja_articles[page_id]
    groups = collections.Counter(r.group for r in article.references)
    assert (groups[None], groups["注"]) == (default, notes)


@pytest.mark.slow
def test_citation_fields(ja_articles):
    _, article = ja_articles[272]
    barnard = next(r for r in article.references if r.name == "Barnard")
    assert barnard.template.lower() == "cite web" and barnard.authors == ["伊藤博之"]
    assert barnard.url.startswith("https://www.econ.shiga-u.ac.jp/") and barnard.title


def test_numbering_rules():
    article = convert(
        "A<ref name=x/> B<ref>plain</ref> C<ref name=x>defined later</ref> D<ref group=n>note</ref>"
        " E{{efn|an efn}} F{{sfn|Smith|2001|p=4}} G{{sfn|Smith|2001|p=4}} H{{R|y}}\n"
        "<references>\n<ref name=y>list-defined</ref>\n<ref name=z>never cited</ref>\n</references>"
    )
    assert article.text.splitlines()[0] == "A[1] B[2] C[1] D[n 1] E[注 1] F[3] G[3] H[4]"
    refs = {(r.group, r.number): r.text for r in article.references}
    assert refs == {
        (None, 1): "defined later",
        (None, 2): "plain",
        ("n", 1): "note",
        ("注", 1): "an efn",
        (None, 3): "Smith 2001, p=4",
        (None, 4): "list-defined",
    }
    assert article.uncited == 1


def test_reflist_refs_and_templates_kept_or_dropped():
    article = convert(
        "{{Infobox|name=X|pop=5<ref name=inf>census</ref>}}'''河童'''（{{lang|en|Kappa}}）は"
        "{{仮リンク|水虎|en|Suiko}}の一種{{要出典|date=2020年}}。<!-- comment -->"
        "[[File:Kappa.jpg|thumb|図<ref>caption ref</ref>]][[ファイル:K.png]]\n"
        "{| class=wikitable\n|-\n| cell<ref name=t>in a table</ref>\n|}\n"
        "== 出典 ==\n{{Reflist|refs=<ref name=r1>{{Cite book|和書|author=柳田国男|title=妖怪談義"
        "|publisher=修道社|year=1956|isbn={{ISBN2|978-4-06-158135-7}}|page=12}}</ref>}}"
        "本文<ref name=r1/>\n[[Category:妖怪]][[en:Kappa]]"
    )
    first = article.sections[0].text
    assert first.startswith("[1]河童（Kappa）は水虎の一種。")  # the infobox's footnote stays
    assert "要出典" not in article.text and "comment" not in article.text and "cell" not in article.text
    assert article.categories == ["妖怪"] and "Kappa.jpg" not in article.text
    assert [s.heading for s in article.sections] == ["", "出典"]
    book = article.references[-1]
    assert (book.authors, book.title, book.publisher, book.year, book.isbn, book.pages) == (
        ["柳田国男"],
        "妖怪談義",
        "修道社",
        "1956",
        "9784061581357",
        "12",
    )
    assert [r.text for r in article.references[:3]] == ["census", "caption ref", "in a table"]


def test_parser_failure_falls_back(monkeypatch):
    import mwparserfromhell
    from mwparserfromhell.parser import ParserError

    def broken(text):
        raise ParserError("boom")

    monkeypatch.setattr(mwparserfromhell, "parse", broken)
    article = convert("'''Bold''' text<ref>r</ref> and {{tpl}} [[link]]")
    assert article.fallback and "Bold text" in article.text and article.references == []


def test_oversized_page_takes_the_fallback():
    big = "'''Big''' page<ref>r</ref> " * 50
    article = convert(big, max_chars=100)
    assert article.fallback and article.text.startswith("Big page")
    assert not convert("'''Big''' page", max_chars=100).fallback


def test_layout_helpers_are_public():
    """What the HTML path shares with the wikitext path has public names (the private ones stay)."""
    from wikiorigin import wikitext

    assert wikitext.clean_text(" a  b \n\n\n\n c ") == "a b\n\nc"
    text, sections = wikitext.split_sections("Lead.\x002\x00History\x00 Then. ")
    assert text == "Lead.\n\n== History ==\nThen." and [s.heading for s in sections] == ["", "History"]
    assert {"clean_text", "split_sections"} <= set(wikitext.__all__)
    assert wikitext._clean is wikitext.clean_text and wikitext._sections is wikitext.split_sections
