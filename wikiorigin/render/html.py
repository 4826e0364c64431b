"""Rendered article HTML to text with its footnotes: the one path for every HTML source.

:func:`html_article` reads the HTML that MediaWiki's parser writes (``parse.php``, the action
API, our own :mod:`~wikiorigin.render.mediawiki` renderer) and the Parsoid HTML of Wikimedia's
Enterprise HTML dumps, and returns the same :class:`~wikiorigin.wikitext.Article` as the
wikitext path: the prose (paragraphs, list items, definition lists, table rows) with the
output of inline templates where it stands, headings as sections, ``[n]`` (``[group n]``)
where a footnote is cited, each cited footnote's rendered text in ``references``.

Page furniture is left out by rule and counted by kind (:data:`FURNITURE`, the report's
``left_out``): edit links, navigation boxes, banners and hatnotes, infoboxes, tables of
contents, coordinates by the title (those inside a sentence are kept as shown) and map links,
files and galleries (their captions kept), hidden text, script errors, red links to templates
the renderer lacked, styles.
"""

from __future__ import annotations

import re
import urllib.parse
from dataclasses import dataclass, field

from ..wikitext import Article, Reference, clean_text, split_sections
from .notes import Footnotes, describe

__all__ = ["FURNITURE", "HtmlText", "html_article", "missing_file"]

FURNITURE = (
    "edit_links",
    "navigation",
    "banners",
    "infoboxes",
    "contents",
    "coordinates",
    "files",
    "hidden",
    "errors",
    "missing_templates",
    "markup",
)
"""Kinds of page furniture left out of the text, in the order reports list them."""

_CLASSES = {
    "edit_links": {"mw-editsection"},
    "navigation": {"navbox", "vertical-navbox", "navbox-styles", "navigation-not-searchable", "sistersitebox"},
    "banners": {
        "ambox",
        "tmbox",
        "ombox",
        "cmbox",
        "fmbox",
        "imbox",
        "mbox-small",
        "metadata",
        "hatnote",
        "dablink",
        "rellink",
        "noprint",
        "mw-indicators",
        "mw-empty-elt",
    },
    "infoboxes": {"infobox"},
    "contents": {"toc", "toclimit-2", "toclimit-3"},
    "coordinates": {"geo", "geo-nondefault", "geo-multi-punct", "mw-kartographer-maplink"},  # inline ones kept
    "files": {"thumb", "gallery", "mw-halign-right", "mw-halign-left", "floatright", "floatleft", "mw-file-element"},
    "hidden": {"mw-cite-backlink", "sortkey", "printonly"},
    "errors": {"error", "scribunto-error", "mw-ext-cite-error"},
}
_BY_CLASS = {name: kind for kind, names in _CLASSES.items() for name in names}
_IDS = {"coordinates": "coordinates", "toc": "contents"}
_ROLES = {"navigation": "navigation", "note": "banners"}  # ARIA roles: navboxes and hatnotes of any wiki
_TAGS = {"style": "markup", "script": "markup", "link": "markup", "meta": "markup", "figure": "files", "img": "files"}
_BLOCKS = frozenset(
    "p div li dd dt ul ol dl blockquote table tr caption pre figure section center h1 h2 h3 h4 h5 h6".split()
)
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_FILE_NAME = re.compile(
    r"[^:]+:[^:]+\.(?:jpe?g|png|gif|svg|tiff?|webp|webm|og[gva]|mp[34]|pdf|djvu|wav|flac|midi?|xcf|stl)", re.I
)  # File:Name.jpg, in any language
_CAPTIONS = ("gallerytext", "thumbcaption")  # what the reader reads of a file: its caption
_HIDDEN = re.compile(r"display\s*:\s*none", re.I)


@dataclass(slots=True)
class HtmlText:
    """What :func:`html_article` left out: ``left_out``, the furniture by kind (:data:`FURNITURE`)."""

    left_out: dict[str, int] = field(default_factory=dict)


def _furniture(el) -> str | None:
    """The kind of furniture ``el`` is, or None when it is part of the article."""
    tag = el.tag if isinstance(el.tag, str) else ""
    if tag in _TAGS:
        return _TAGS[tag]
    for name in (el.get("class") or "").split():
        kind = _BY_CLASS.get(name)
        if kind:
            return kind
    if el.get("id") in _IDS:
        return _IDS[el.get("id")]
    if el.get("role") in _ROLES:
        return _ROLES[el.get("role")]
    if _HIDDEN.search(el.get("style") or ""):
        return "hidden"
    if tag == "a" and missing_file(el):
        return "files"
    return None


def missing_file(a) -> bool:
    """Whether link ``a`` stands for a file the renderer lacks (its name where the image would be).
    Parsoid marks a link in the prose (``[[:File:X.jpg|text]]``) ``mw:WikiLink``: it is kept; its
    media are ``mw:File`` wrappers, left out by their classes."""
    if "wpDestFile=" in (a.get("href") or ""):
        return True  # a link to upload it
    if "mw:WikiLink" in (a.get("rel") or "").split():
        return False
    title = a.get("title") or ""
    return _FILE_NAME.fullmatch(title) is not None  # its name, or its caption, stands for the image


def _target(a) -> str | None:
    """The footnote id a marker's link points to (``cite_note-...``)."""
    href = a.get("href") or ""
    return urllib.parse.unquote(href.partition("#")[2]) or None


class _Walk:
    def __init__(self, templates: tuple[str, ...] = (), notes: Footnotes | None = None):
        self.templates = templates  # "Template:": a red link to one is a template the renderer lacked
        self.out: list[str] = []
        self.left_out: dict[str, int] = {}
        self.notes = notes if notes is not None else Footnotes()  # shared by the page's walks

    def skip(self, kind: str) -> None:
        self.left_out[kind] = self.left_out.get(kind, 0) + 1

    def captions(self, el) -> None:
        """The captions of a file or gallery, each a block of its own."""
        for caption in el.iter():
            classes = (caption.get("class") or "").split() if isinstance(caption.tag, str) else ()
            if caption.tag == "figcaption" or any(c in classes for c in _CAPTIONS):
                self.out.append("\n\n")
                self.inside(caption, "")
                self.out.append("\n\n")

    def visit(self, el) -> None:
        tag = el.tag if isinstance(el.tag, str) else ""
        classes = (el.get("class") or "").split()
        kind = _furniture(el) if tag else "markup"
        if tag == "a" and self.templates and "new" in classes and (el.text or "").startswith(self.templates):
            kind = "missing_templates"
        if tag == "sup" and "reference" in classes:
            self.out.append(self.notes.marker(el, _target))
        elif tag == "ol" and "references" in classes:
            self.notes.notes_list(el)
        elif "mw-references-wrap" in classes or "reflist" in classes:
            for ol in el.iter("ol"):
                self.notes.notes_list(ol)
        elif kind:
            self.skip(kind)
            if kind == "files":
                self.captions(el)
        elif tag in _HEADINGS and tag != "h1":
            inner = _Walk(notes=self.notes)
            inner.inside(el, "")
            for kind, n in inner.left_out.items():
                self.left_out[kind] = self.left_out.get(kind, 0) + n
            title = " ".join("".join(inner.out).replace("\x00", " ").split())
            self.out.append(f"\x00{_HEADINGS[tag]}\x00{title}\x00")
        else:
            self.inside(el, tag)
        if el.tail:
            self.out.append(el.tail)

    def inside(self, el, tag: str) -> None:
        block = tag in _BLOCKS
        if block:
            self.out.append("\n\n" if tag != "tr" else "\n")
        if tag in ("td", "th") and el.getprevious() is not None:
            self.out.append(" | ")
        if tag == "br":
            self.out.append("\n")
        if el.text:
            self.out.append(el.text)
        for child in el:
            self.visit(child)
        if block:
            self.out.append("\n\n" if tag != "tr" else "\n")


def _note_text(li, notes: Footnotes) -> str:
    body = li.find_class("reference-text") or li.find_class("mw-reference-text")
    walk = _Walk(notes=notes)  # a footnote cited inside a note counts as cited
    walk.visit(body[0] if body else li)
    return clean_text(" ".join("".join(walk.out).replace("\x00", " ").split("\n")))


def _references(notes: Footnotes, root) -> tuple[list[Reference], int]:
    """The cited footnotes, those a note cites too, and how many notes no marker cites."""
    texts: dict[str, str] = {}
    done = 0
    while done < len(notes.markers):  # notes cite notes: read until no new marker
        notes.note_by_id(root)
        targets = [m[0] for m in notes.markers[done:]]
        done = len(notes.markers)
        for target in dict.fromkeys(targets):
            if target not in texts and (li := notes.notes.get(target)) is not None:
                texts[target] = _note_text(li, notes)
    notes.resolve()
    refs = []
    for note_id, (group, number) in notes.cited.items():
        name = re.fullmatch(r"cite_note-(.+)-\d+", note_id)
        ref = Reference(number, name.group(1).replace("_", " ") if name else None, group, "")
        if note_id in texts:
            ref.text = notes.shown(texts[note_id])
            describe(ref, notes.notes[note_id])
        refs.append(ref)
    refs.sort(key=lambda r: (r.group or "", r.number))
    unique = list({(r.group, r.number): r for r in refs}.values())
    return unique, sum(1 for k in notes.notes if k not in notes.cited)


_CATEGORY = "mw:PageProp/Category"


def _category(href: str) -> str:
    """The category a Parsoid category link names (``./Category:Star_Wars:_Films#Sort key``)."""
    path = urllib.parse.unquote(href.partition("#")[0].partition("?")[0])  # no sort key
    return re.sub(r"^(?:\./|.*?/wiki/)", "", path).partition(":")[2].replace("_", " ")


def html_article(
    html: str, categories: list[str] | None = None, templates: tuple[str, ...] = ("Template",)
) -> tuple[Article, HtmlText]:
    """The :class:`~wikiorigin.wikitext.Article` of one page's rendered ``html`` (legacy parser
    or Parsoid output), with ``categories`` (the renderer's, else the page's category links),
    and what was left out (:class:`HtmlText`). A template the renderer lacked shows as a red
    link to it, ``Template:Name`` (``templates``: the names of that namespace): left out."""
    import lxml.html

    if not html.strip():
        return Article("", [], [], list(categories or [])), HtmlText()
    root = lxml.html.document_fromstring(html)
    body = root.find("body") if root.find("body") is not None else root
    walk = _Walk(tuple(f"{name}:" for name in templates))
    if body.text:
        walk.out.append(body.text)
    for child in body:
        walk.visit(child)
    refs, uncited = _references(walk.notes, root)
    text, sections = split_sections(walk.notes.shown("".join(walk.out)))
    if categories is None:
        categories = [_category(link.get("href", "")) for link in root.iter("link") if link.get("rel") == _CATEGORY]
    return Article(text, sections, refs, list(dict.fromkeys(categories)), uncited=uncited), HtmlText(walk.left_out)
