"""The HTML-to-text path on HTML no MediaWiki is needed for: footnote groups whose markers are
labels a wiki defines (``[a]``, ``[I]``), notes cited inside notes, and Parsoid's markup (the
Enterprise HTML dumps: ``tests/data/render/parsoid-enterprise.html``, made by hand in the shape
Parsoid 0.16 writes, after its ``Ext/Cite/References.php``: ``sup.mw-ref`` with
``typeof="mw:Extension/ref"``, ``a[data-mw-group]`` with ``span.mw-reflink-text``,
``ol.mw-references[data-mw-group]``, ``span.mw-reference-text``, ``section`` wrappers,
``data-mw`` attributes, ``figure[typeof=mw:File/Thumb]``)."""

from __future__ import annotations

from pathlib import Path

from wikiorigin.render.html import html_article


def _marker(note: str, label: str) -> str:
    return f'<sup id="cite_ref-{note}" class="reference"><a href="#cite_note-{note}">&#91;{label}&#93;</a></sup>'


def _note(note: str, text: str) -> str:
    return f'<li id="cite_note-{note}"><span class="mw-cite-backlink">↑</span> <span class="reference-text">{text}</span></li>'


def test_labelled_groups_and_notes_cited_in_notes():
    """Markers a wiki labels (``MediaWiki:Cite link label group-lower-alpha``: ``[a]``; upper-roman:
    ``[I]``) are numbered per group in the order cited, and a footnote cited inside a note
    ({{efn|... <ref>...</ref>}}) is kept: every note of the lists, with its text."""
    html = (
        '<div class="mw-parser-output"><p>Kurume.' + _marker("1", "a") + " Okinawa." + _marker("oki-3", "b") + "</p>"
        "<p>Shikoku." + _marker("oki-3", "b") + " Kōchi." + _marker("4", "I") + " Foster." + _marker("5", "2") + "</p>"
        '<h2><span class="mw-headline">Notes</span></h2><div class="reflist"><div class="mw-references-wrap">'
        '<ol class="references">'
        + _note("1", "The oldest legend." + _marker("2", "1"))
        + _note("oki-3", "A tree spirit.")
        + '</ol></div></div><div class="mw-references-wrap"><ol class="references">'
        + _note("4", "Rice instead.")
        + "</ol></div>"
        '<div class="reflist"><ol class="references">'
        + _note("2", "Kurume City.")
        + _note("5", "Foster 2015.")
        + "</ol></div></div>"
    )
    article, _ = html_article(html)
    assert article.text == (
        "Kurume.[lower-alpha 1] Okinawa.[lower-alpha 2]\n\n"
        "Shikoku.[lower-alpha 2] Kōchi.[upper-roman 1] Foster.[2]\n\n== Notes =="
    )
    assert [(r.group, r.number, r.name, r.text) for r in article.references] == [
        (None, 1, None, "Kurume City."),
        (None, 2, None, "Foster 2015."),
        ("lower-alpha", 1, None, "The oldest legend.[1]"),
        ("lower-alpha", 2, "oki", "A tree spirit."),
        ("upper-roman", 1, None, "Rice instead."),
    ]
    assert article.uncited == 0


PARSOID = (Path(__file__).resolve().parents[1] / "data" / "render" / "parsoid-enterprise.html").read_text("utf-8")


def test_parsoid_html_of_an_enterprise_dump():
    """Parsoid's markup: sections, headings without ``mw-headline``, markers with their group in
    ``data-mw-group``, the notes' text in ``span.mw-reference-text`` (a note citing a note), a
    figure's caption kept, hatnote, navbox, styles and the red link to a missing template left
    out, categories from ``link[rel=mw:PageProp/Category]``."""
    article, left = html_article(PARSOID, None)
    assert article.text == (
        "Funayūrei by Sawaki Sūshi\n\nFunayūrei (船幽霊) are the ghosts of those who died at sea.[1] They ask for a "
        "ladle&sink ships.[lower-alpha 1]\n\n== Prevention ==\nSailors carry a ladle without a bottom.[1]\n\n"
        "== Notes ==\n\n== References =="
    )
    assert [(r.group, r.number, r.name, r.text) for r in article.references] == [
        (None, 1, "a", '"Funayūrei legends". Folklore Archive.'),
        (None, 2, None, "Murakami 2000, p. 294."),
        ("lower-alpha", 1, None, "In Kōchi rice is thrown.[2]"),
    ]
    first = article.references[0]
    assert (first.template, first.title, first.publisher, first.year, first.url) == (
        "citation",
        "Funayūrei legends",
        "Folklore Archive",
        "2015",
        "https://example.org/f",
    )
    assert article.categories == ["Ghosts", "Japanese folklore: Sea"] and article.uncited == 0
    assert left.left_out == {"banners": 1, "files": 1, "missing_templates": 1, "markup": 3, "navigation": 1}


def test_other_wikis_markup():
    """What another wiki's templates and messages write: navigation and hatnotes known by their
    ARIA role whatever their classes, a marker shown without brackets, notes in a list of the
    wiki's own markup (found by their id)."""
    html = (
        '<div class="mw-parser-output"><div role="note" class="bandeau-section">Article détaillé : X.</div>'
        '<p>Le kappa vit dans les rivières.<sup class="reference"><a href="#cite_note-1">1)</a></sup></p>'
        '<div role="navigation" class="palette"><ul><li>Kappa</li><li>Tengu</li></ul></div>'
        '<ol class="liste-notes"><li id="cite_note-1"><span class="reference-text">Foster 2015.</span></li></ol></div>'
    )
    article, left = html_article(html)
    assert article.text.startswith("Le kappa vit dans les rivières.[1]") and "Tengu" not in article.text
    assert [(r.number, r.text) for r in article.references] == [(1, "Foster 2015.")]
    assert left.left_out == {"banners": 1, "navigation": 1}


def test_a_group_numbered_anew_after_each_list():
    """Cite numbers a group anew after each of its lists (``<references/>`` in two sections: both
    notes shown ``[1]``): each note is kept, numbered on as the wikitext path numbers it."""
    html = (
        '<div class="mw-parser-output"><p>Kurume.' + _marker("1", "1") + "</p>"
        '<ol class="references">' + _note("1", "Kurume City.") + "</ol>"
        "<p>Kōchi." + _marker("2", "1") + " Again." + _marker("2", "1") + " Foster." + _marker("3", "2") + "</p>"
        '<ol class="references">' + _note("2", "Kōchi City.") + _note("3", "Foster 2015.") + "</ol></div>"
    )
    article, _ = html_article(html)
    assert article.text == "Kurume.[1]\n\nKōchi.[2] Again.[2] Foster.[3]"
    assert [(r.number, r.text) for r in article.references] == [
        (1, "Kurume City."),
        (2, "Kōchi City."),
        (3, "Foster 2015."),
    ]
    labelled = (
        '<div class="mw-parser-output"><p>Kurume.' + _marker("1", "a") + "</p>"
        '<ol class="references">' + _note("1", "Kurume City.") + "</ol>"
        "<p>Kōchi." + _marker("2", "a") + " Foster." + _marker("3", "b") + "</p>"
        '<ol class="references">' + _note("2", "Kōchi City.") + _note("3", "Foster 2015.") + "</ol></div>"
    )
    article, _ = html_article(labelled)  # a labelled group ({{efn}} ... {{notelist}} twice): the same
    assert article.text == "Kurume.[lower-alpha 1]\n\nKōchi.[lower-alpha 2] Foster.[lower-alpha 3]"
    assert [r.text for r in article.references] == ["Kurume City.", "Kōchi City.", "Foster 2015."]


def test_a_parsoid_link_to_a_file_page_keeps_its_text():
    """``[[:File:X.jpg|the scroll]]`` is a link in the prose (Parsoid marks it ``mw:WikiLink``):
    its text is kept; a missing image (``mw:File``, ``mw-broken-media``) and the legacy
    parser's link named as the file are left out."""
    html = (
        '<section data-mw-section-id="0"><p>See <a rel="mw:WikiLink" href="./File:Kappa_scroll.jpg" '
        'title="File:Kappa scroll.jpg">the scroll</a> of 1850.'
        '<span typeof="mw:Error mw:File"><a href="./Special:FilePath/Kappa.png"><span class="mw-file-element '
        'mw-broken-media">Kappa.png</span></a></span> '
        '<a href="/wiki/File:Old.jpg" title="File:Old.jpg">File:Old.jpg</a></p></section>'
    )
    article, left = html_article(html)
    assert article.text == "See the scroll of 1850."
    assert left.left_out == {"files": 2}
