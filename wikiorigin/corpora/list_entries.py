"""The entries of a list page: :func:`list_entries` reads a list page's *entries*, the link
that heads each list item (``*``, ``#``, ``;``) and the cell that names each row of a
``wikitable`` (a row header, else its first data cell), where the link is the first thing in
the item or cell. Every other link is left out and counted by reason (:data:`LEFT_OUT`):
prose, an entry's description, the row's other cells, table headers, ``<ref>`` footnotes,
templates (navboxes, citations, interlanguage-link templates), the back-matter sections
(:data:`BACK_MATTER`), files, categories and other namespaces or wikis, and repeats. The
headings of back matter and the templates that show nothing, by language, are data
(``wikiorigin/data/list_pages.json``)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from importlib import resources

from ..dumps.pages import Multistream

__all__ = ["BACK_MATTER", "LEFT_OUT", "ENTRY_RULE", "ListEntries", "list_entries", "list_links"]

_DATA = json.loads((resources.files("wikiorigin") / "data" / "list_pages.json").read_text(encoding="utf-8"))

BACK_MATTER = frozenset(_DATA["back_matter"])
"""Headings of the sections after a list's entries (see also, notes, references, further
reading, external links) in Japanese and a few larger wikis' languages (data:
``list_pages.json``). A heading is back matter when each of its parts is ("Notes and
references"); its links are never entries."""

LEFT_OUT = ("prose", "description", "cell", "header", "footnote", "template", "back_matter", "namespace", "repeat")
"""Why a link of a list page is not an entry, in the order reports list them: ``prose`` (a
paragraph or heading), ``description`` (an entry's text after its name), ``cell`` (a row's
other cells), ``header`` (a table's header rows and caption), ``footnote`` (inside ``<ref>``),
``template`` (inside any ``{{...}}``: navboxes, citations, interlanguage links), ``back_matter``
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
_PARTS = re.compile(r"\s*(?:[\u30fb/\uff0f\u3001,&]|\band\b|\bund\b|\bet\b)\s*")  # middle dots, slashes, commas
_BEFORE_NAME = re.compile(r"[\s\u3000\u300c\u300e\u3010\u3008\u300a\uff08(\"'\u30fb]*")  # what a link may follow
_ANCHORS = set(_DATA["anchor_templates"])  # templates that show nothing
_LIST_WRAPPERS = {"columns-list", "div col", "flatlist", "plainlist"}  # their lists are the page's


@dataclass(slots=True)
class ListEntries:
    """The entries of a list page (:func:`list_entries`): ``links``, the ``(title, anchor)``
    each linked entry names, in page order without repeats (titles normalized, anchor None
    when the link names no section); ``entries``, the list items and ``wikitable`` rows of the
    page's body; ``unlinked``, those whose name is not a link (plain text, an interlanguage-link template);
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

    def __init__(self, key) -> None:
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
        rows: list = []
        loose: list = []
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
