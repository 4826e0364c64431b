"""The entries of a list page (「日本の妖怪一覧」 for YokaiEval) as articles with their footnotes.

:func:`list_entries` reads a list page's *entries*: the link that heads each list item (``*``,
``#``, ``;``) and the cell that names each row of a ``wikitable`` (a row header, else its first
data cell), where the link is the first thing in the item or cell. Every other link is left out
and counted by reason: prose, an entry's description, the row's other cells, table headers,
``<ref>`` footnotes, templates (navboxes, citations, ``{{仮リンク}}``), the back-matter sections
(関連項目, 脚注, 参考文献, 外部リンク, ...), files, categories and other namespaces or wikis,
and repeats. :func:`build_list_corpus` keeps section anchors (``[[Kappa#In Tōno]]`` extracts
that section), follows redirects, drops duplicates, and writes one ``articles`` row per
article. It works for any list page of any wiki: a list of folklore creatures in another
language is the same job.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass, field

from ..dumps.pages import Multistream
from ..errors import WikioriginError
from ..files import ParquetSink, check_output, provenance
from ..progress import Progress
from ..render.sources import text_source
from ..schemas import ARTICLES
from .articles import ARTICLE_GROUP_ROWS, ArticleTask, convert_articles
from .result import guarded_corpus

__all__ = [
    "YOKAI_LIST_PAGE",
    "BACK_MATTER",
    "LEFT_OUT",
    "ENTRY_RULE",
    "PAGE_WINDOW",
    "ListEntries",
    "ListCorpusReport",
    "list_entries",
    "list_links",
    "build_list_corpus",
]

YOKAI_LIST_PAGE = "日本の妖怪一覧"
"""The jawiki list page the YokaiEval corpus starts from (``日本の妖怪一覧``)."""

BACK_MATTER = frozenset(
    {
        "関連項目",
        "脚注",
        "注釈",
        "注記",
        "出典",
        "参照",
        "参考文献",
        "参考資料",
        "関連文献",
        "関連書籍",
        "外部リンク",
        "See also",
        "Notes",
        "References",
        "Citations",
        "Sources",
        "Bibliography",
        "Further reading",
        "External links",
        "Siehe auch",
        "Literatur",
        "Weblinks",
        "Einzelnachweise",
        "Anmerkungen",
        "Voir aussi",
        "Notes et références",
        "Références",
        "Bibliographie",
        "Liens externes",
        "같이 보기",
        "각주",
        "참고 문헌",
        "외부 링크",
        "参见",
        "參見",
        "参考资料",
        "參考資料",
        "外部链接",
        "外部連結",
        "Δείτε επίσης",
        "Παραπομπές",
        "Σημειώσεις",
        "Βιβλιογραφία",
        "Εξωτερικοί σύνδεσμοι",
    }
)
"""Headings of the sections after a list's entries (see also, notes, references, further
reading, external links) in Japanese and a few larger wikis' languages. A heading is back
matter when each of its parts is (「脚注・出典」); its links are never entries."""

LEFT_OUT = ("prose", "description", "cell", "header", "footnote", "template", "back_matter", "namespace", "repeat")
"""Why a link of a list page is not an entry, in the order reports list them: ``prose`` (a
paragraph or heading), ``description`` (an entry's text after its name), ``cell`` (a row's
other cells), ``header`` (a table's header rows and caption), ``footnote`` (inside ``<ref>``),
``template`` (inside any ``{{...}}``: navboxes, citations, ``{{仮リンク}}``), ``back_matter``
(the :data:`BACK_MATTER` sections), ``namespace`` (files, categories, other namespaces, other
wikis and languages, links within the page) and ``repeat`` (an entry already taken)."""

ENTRY_RULE = "list items and wikitable rows, the link heading each (issue 18)"
"""What a list-page corpus takes, as its files' provenance records it (``entries``): before
issue 18 every link of the page was taken."""

_INTERWIKI = {
    "w",
    "wikt",
    "wiktionary",
    "commons",
    "c",
    "m",
    "meta",
    "s",
    "q",
    "b",
    "n",
    "v",
    "d",
    "species",
    "wikipedia",
    "mw",
    "voy",
}
_OTHER_NS = {"file", "image", "category", "template", "help", "portal", "user", "talk", "special"}
_PARTS = re.compile(r"\s*(?:[・/／、,&]|\band\b|\bund\b|\bet\b)\s*")
_BEFORE_NAME = re.compile(r"[\s\u3000「『【〈《（(\"'・]*")  # text an entry's link may follow
_ANCHORS = {"anchor", "anchors", "アンカー"}  # templates that show nothing
_LIST_WRAPPERS = {"columns-list", "div col", "flatlist", "plainlist"}  # their lists are the page's


@dataclass(slots=True)
class ListEntries:
    """The entries of a list page (:func:`list_entries`): ``links``, the ``(title, anchor)``
    each linked entry names, in page order without repeats (titles normalized, anchor None
    when the link names no section); ``entries``, the list items and ``wikitable`` rows of the
    page's body; ``unlinked``, those whose name is not a link (plain text, ``{{仮リンク}}``);
    ``left_out``, the page's other links by reason (:data:`LEFT_OUT`). Every link of the page
    is in ``links`` or counted in ``left_out``."""

    links: list[tuple[str, str | None]] = field(default_factory=list)
    entries: int = 0
    unlinked: int = 0
    left_out: dict[str, int] = field(default_factory=dict)


class _Walk:
    """One pass over a parsed list page. ``place`` says what a link is where it stands: None
    on the page's lines (an entry's name, its description, or prose), ``"entry"`` in the cell
    that names a table row, else the reason it is left out."""

    def __init__(self, key):
        self.key = key  # Wikilink -> (title, anchor), or None when it names no article
        self.found = ListEntries()
        self.seen: set[tuple[str, str | None]] = set()
        self.named = 0  # entries whose name is a link
        self.back: int | None = None  # level of the back-matter heading we are under
        self.line = "prose"  # the current line: "prose", "item" or "description"
        self.head = False  # the current entry's name may still come

    def leave(self, node, reason: str) -> None:
        from mwparserfromhell.wikicode import Wikicode

        n = len(Wikicode([node]).filter_wikilinks())
        if n:
            self.found.left_out[reason] = self.found.left_out.get(reason, 0) + n

    def visit(self, node, place: str | None = None) -> None:
        from mwparserfromhell.nodes import ExternalLink, Heading, Tag, Template, Text, Wikilink

        if place is None and self.back is not None:
            place = "back_matter"
        if isinstance(node, Heading):
            self.heading(node)
        elif isinstance(node, Wikilink):
            self.link(node, place)
        elif isinstance(node, Template):
            self.template(node, place)
        elif isinstance(node, Tag):
            self.tag(node, place)
        elif isinstance(node, Text):
            self.text(node.value, place)
        elif isinstance(node, ExternalLink):
            self.head = False
            self.leave(node, self.bare(place))

    def heading(self, node) -> None:
        if self.back is not None and node.level <= self.back:
            self.back = None
        parts = [p for p in _PARTS.split(node.title.strip_code().strip()) if p]
        if self.back is None and parts and all(p in BACK_MATTER for p in parts):
            self.back = node.level
        self.leave(node, "prose" if self.back is None else "back_matter")
        self.line, self.head = "prose", False

    def link(self, node, place: str | None) -> None:
        key = self.key(node)
        if key is None:
            return self.leave(node, "namespace")
        if self.head and (place == "entry" or (place is None and self.line == "item")):
            self.head = False
            self.named += 1
            if key in self.seen:
                return self.leave(node, "repeat")
            self.seen.add(key)
            self.found.links.append(key)
        else:
            self.leave(node, self.bare(place))

    def bare(self, place: str | None) -> str:
        """Why a link that names no entry here is left out."""
        if place not in (None, "entry"):
            return place
        return "description" if place == "entry" or self.line != "prose" else "prose"

    def template(self, node, place: str | None) -> None:
        name = str(node.name).strip().replace("_", " ").casefold()
        if name in _LIST_WRAPPERS:  # {{Columns-list|...}}: the list inside is the page's
            for param in node.params:
                self.line, self.head = "prose", False
                for child in param.value.nodes:
                    self.visit(child, place)
            return
        if name not in _ANCHORS:
            self.head = False
        self.leave(node, "template")

    def tag(self, node, place: str | None) -> None:
        if node.tag in ("ref", "references"):
            self.leave(node, "footnote")
        elif node.wiki_markup in ("*", "#", ";"):
            if place is None and not (self.line == "item" and self.head):  # "**" is one item
                self.found.entries += 1
                self.line, self.head = "item", True
        elif node.wiki_markup == ":":
            if place is None:
                self.line, self.head = "description", False
        elif node.tag == "table" and place is None:
            self.table(node)
        elif node.contents is not None:
            for child in node.contents.nodes:
                self.visit(child, place)

    def text(self, value: str, place: str | None) -> None:
        first, newline, _ = value.partition("\n")
        if self.head and not _BEFORE_NAME.fullmatch(first):
            self.head = False
        if newline and place is None:
            self.line, self.head = "prose", False

    def table(self, node) -> None:
        classes = str(node.get("class").value).split() if node.has("class") else []
        if "navbox" in classes:
            return self.leave(node, "template")
        rows, loose = [], []
        for child in node.contents.nodes:
            if getattr(child, "tag", None) == "tr":
                rows.append([])
                for c in child.contents.nodes:
                    if getattr(c, "tag", None) in ("td", "th"):
                        rows[-1].append(c)
                    else:
                        self.visit(c, "cell")
            elif getattr(child, "tag", None) in ("td", "th"):
                if str(child).startswith("|+"):
                    self.leave(child, "header")  # the caption
                else:
                    loose.append(child)  # the cells before the first "|-" are a row
            else:
                self.visit(child, "cell")
        for cells in ([loose] if loose else []) + rows:
            if "wikitable" in classes:
                self.row(cells)
            else:  # a layout table: its cells are parts of the page
                for cell in cells:
                    self.line, self.head = "prose", False
                    for child in cell.contents.nodes:
                        self.visit(child)
        self.line, self.head = "prose", False

    def row(self, cells) -> None:
        data = [c for c in cells if c.tag == "td"]
        if not data:
            for cell in cells:
                self.leave(cell, "header")
            return
        name = cells[0] if cells[0].tag == "th" else data[0]  # a row header, else the first cell
        self.found.entries += 1
        for cell in cells:
            self.head = cell is name
            for child in cell.contents.nodes:
                self.visit(child, "entry" if cell is name else "cell")
        self.head = False


@dataclass(slots=True)
class ListCorpusReport:
    """What :func:`build_list_corpus` found: the list page's entries (list items and table
    rows), those whose name is no link, the entries' links (``linked``, without repeats), the
    page's other links left out by reason (:data:`LEFT_OUT`), articles found, redirects
    followed, titles missing, articles without references, duplicates, linked sections missing,
    articles converted by the fallback, articles written and the time taken; ``text``, where
    the text came from, ``note``, how to get a more faithful one when the default fell back, and
    ``furniture``, what a rendered text left out by kind (:data:`~wikiorigin.render.html.FURNITURE`)."""

    entries: int = 0
    unlinked: int = 0
    linked: int = 0
    left_out: dict[str, int] = field(default_factory=dict)
    found: int = 0
    redirected: int = 0
    missing: list[str] = field(default_factory=list)
    without_references: int = 0
    duplicates: int = 0
    sections_missing: list[str] = field(default_factory=list)
    fallback: int = 0
    articles: int = 0
    seconds: float = 0.0
    text: str = ""
    note: str | None = None
    furniture: dict[str, int] = field(default_factory=dict)


def list_entries(wikitext: str, dump: Multistream) -> ListEntries:
    """The entries of a list page's wikitext (see the module's text for the rule), the links
    of ``dump``'s wiki: its namespaces are not articles and its titles are normalized."""
    import mwparserfromhell

    from ..languages import registry

    article_ns = {name.casefold() for key, name in dump.site.namespaces.items() if key != 0 and name}
    skip = article_ns | {w.subdomain for w in registry().wikis} | _INTERWIKI | _OTHER_NS

    def key(link) -> tuple[str, str | None] | None:
        target = str(link.title).strip().lstrip(":").strip()
        title, _, anchor = target.partition("#")
        prefix = title.split(":", 1)[0].strip().casefold() if ":" in title else ""
        if not title.strip() or prefix in skip:
            return None  # a link within the page, another namespace, or another wiki
        return dump.normalize(title), anchor.strip() or None

    walk = _Walk(key)
    for node in mwparserfromhell.parse(wikitext).nodes:
        walk.visit(node)
    walk.found.unlinked = walk.found.entries - walk.named
    return walk.found


def list_links(wikitext: str, dump: Multistream) -> list[tuple[str, str | None]]:
    """(title, anchor) of the linked entries of a list page, in order, without repeats: the
    ``links`` of :func:`list_entries`."""
    return list_entries(wikitext, dump).links


PAGE_WINDOW = 128
"""Links whose pages are fetched from the dump together (their streams decompressed once
between them): the pages a list corpus holds at a time, whatever the list's length."""


def _list_tasks(links: list, dump: Multistream, indexed: dict, report: ListCorpusReport) -> Iterator[ArticleTask]:
    """The articles of ``links``, in their order: their pages fetched :data:`PAGE_WINDOW` links
    at a time, each title once (a page linked again in a later window is kept until then), the
    titles found and redirected counted in ``report``; a page already taken for the same
    anchor (two titles, one page) is a duplicate. Each task's key is ``title#anchor``."""
    last = {title: i for i, (title, _) in enumerate(links)}
    kept: dict = {}  # title -> page, of the titles linked again further on
    done = set()
    for start in range(0, len(links), PAGE_WINDOW):
        window = links[start : start + PAGE_WINDOW]
        fetch = [t for t in dict.fromkeys(t for t, _ in window) if indexed[t] and t not in kept]
        pages = dump.get(fetch) if fetch else {}
        report.found += len(pages)
        report.redirected += sum(1 for t, p in pages.items() if p.title != t)
        pages.update(kept)
        for title, anchor in window:
            page = pages.get(title)
            if page is None:
                continue
            if (page.page_id, anchor) in done:
                report.duplicates += 1
                continue
            done.add((page.page_id, anchor))
            yield ArticleTask(page, anchor, key=f"{title}#{anchor}")
        end = start + len(window)
        kept = {t: p for t, p in pages.items() if last[t] >= end}


@guarded_corpus  # the whole run guarded; returns a CorpusResult (its fields include the report's)
def build_list_corpus(
    dump: Multistream,
    out,
    list_page: str = YOKAI_LIST_PAGE,
    domain: str | None = None,
    *,
    jobs: int = 1,
    scheduler=None,
    text: str | None = None,
    html_dump=None,
) -> ListCorpusReport:
    """Write the ``articles`` of the entries of ``list_page`` (:func:`list_entries`) to ``out``.

    ``text`` names where the articles' text comes from (:func:`~wikiorigin.render.sources.text_source`:
    ``"wikitext"``, ``"mediawiki"``, ``"html-dump"`` with ``html_dump``; None: the most faithful
    this machine has); the report's ``text`` and the file's provenance say which.

    The articles are converted on ``jobs`` processes (or a Dask cluster: ``scheduler``) and
    written as they come, in the order of the list: the same file for any ``jobs``, in flat
    memory (:func:`~wikiorigin.corpora.articles.convert_articles`)."""
    check_output(out, inputs=[dump.dump, dump.index])  # before any work
    started = time.perf_counter()
    listing = dump.get([list_page]).get(list_page)
    if listing is None:
        raise WikioriginError(f"{dump.dump}: no page {list_page!r} (the list page) in this dump")
    found = list_entries(listing.text, dump)
    links = found.links
    report = ListCorpusReport(
        entries=found.entries, unlinked=found.unlinked, linked=len(links), left_out=found.left_out
    )
    titles = list(dict.fromkeys(t for t, _ in links))
    indexed = {t: dump.entry(t) is not None for t in titles}  # each title looked up once
    report.missing = [t for t in titles if not indexed[t]]
    domain = domain or f"{dump.site.dbname.removesuffix('wiki').replace('_', '-')}.wikipedia.org"
    source, report.note = text_source(
        text, dump, out, html_dump=html_dump, processes=max(1, (os.cpu_count() or 1) // jobs)
    )
    report.text = source.describe()
    meta = provenance(
        text=report.text,
        stage="corpus",
        corpus="list",
        list_page=list_page,
        dump=dump.dump.name,
        list_revision_id=listing.revision_id,
        wiki=dump.site.dbname,
        entries=ENTRY_RULE,
        entry_counts={
            "entries": found.entries,
            "unlinked": found.unlinked,
            "linked": len(links),
            "left_out": found.left_out,
        },
    )
    tasks = _list_tasks(links, dump, indexed, report)
    with (
        ParquetSink(out, ARTICLES, meta, row_group_rows=ARTICLE_GROUP_ROWS) as sink,
        closing(
            convert_articles(
                tasks,
                dump.site.dbname,
                domain,
                dump.site.namespaces,
                ARTICLES,
                jobs=jobs,
                scheduler=scheduler,
                source=source,
            )
        ) as converted,
        Progress("corpus", unit="article") as progress,
    ):
        for batch, outcomes in converted:
            sink.write(batch)
            progress.update(len(outcomes))
            for outcome in outcomes:
                report.fallback += outcome.fallback
                for kind, n in (outcome.left_out or {}).items():
                    report.furniture[kind] = report.furniture.get(kind, 0) + n
                if not outcome.written:
                    report.sections_missing.append(outcome.key)
                    continue
                report.without_references += not outcome.references
                report.articles += 1
    report.seconds = time.perf_counter() - started
    return report
