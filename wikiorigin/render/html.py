"""Rendered article HTML to text with its footnotes: the one path for every HTML source.

:func:`html_article` reads the HTML that MediaWiki's parser writes (``parse.php``, the action
API, our own :mod:`~wikiorigin.render.mediawiki` renderer) and the Parsoid HTML of Wikimedia's
Enterprise HTML dumps, and returns the same :class:`~wikiorigin.wikitext.Article` as the
wikitext path: the prose (paragraphs, list items, definition lists, table rows) with the
output of inline templates where it stands, headings as sections, ``[n]`` (``[group n]``)
where a footnote is cited, each cited footnote's rendered text in ``references``.

Page furniture is left out by rule and counted by kind (:data:`FURNITURE`, the report's
``left_out``): edit links, navigation boxes, banners and hatnotes, infoboxes, tables of
contents, coordinates and map links, files and galleries (their captions kept), hidden text,
script errors, red links to templates the renderer lacked, styles.
"""

from __future__ import annotations

import re
import urllib.parse
from dataclasses import dataclass, field

from ..wikitext import Article, Reference, _clean, _sections

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
    "coordinates": {"geo", "geo-dec", "geo-dms", "geo-default", "geo-multi-punct", "mw-kartographer-maplink"},
    "files": {"thumb", "gallery", "mw-halign-right", "mw-halign-left", "floatright", "floatleft", "mw-file-element"},
    "hidden": {"mw-cite-backlink", "sortkey", "printonly"},
    "errors": {"error", "scribunto-error", "mw-ext-cite-error"},
}
_BY_CLASS = {name: kind for kind, names in _CLASSES.items() for name in names}
_IDS = {"coordinates": "coordinates", "toc": "contents"}
_TAGS = {"style": "markup", "script": "markup", "link": "markup", "meta": "markup", "figure": "files", "img": "files"}
_BLOCKS = frozenset(
    "p div li dd dt ul ol dl blockquote table tr caption pre figure section center h1 h2 h3 h4 h5 h6".split()
)
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_MARKER = re.compile(r"\[\s*(?:(.+?)\s+)?(\d+)\s*\]")
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
    if _HIDDEN.search(el.get("style") or ""):
        return "hidden"
    if tag == "a" and missing_file(el):
        return "files"
    return None


def missing_file(a) -> bool:
    """Whether link ``a`` stands for a file the renderer lacks (its name where the image would be)."""
    if "wpDestFile=" in (a.get("href") or ""):
        return True  # a link to upload it
    title = a.get("title") or ""
    return _FILE_NAME.fullmatch(title) is not None  # its name, or its caption, stands for the image
    return None


def _target(a) -> str | None:
    """The footnote id a marker's link points to (``cite_note-...``)."""
    href = a.get("href") or ""
    return urllib.parse.unquote(href.partition("#")[2]) or None


class _Walk:
    def __init__(self, templates: tuple[str, ...] = ()):
        self.templates = templates  # "Template:": a red link to one is a template the renderer lacked
        self.out: list[str] = []
        self.left_out: dict[str, int] = {}
        self.cited: dict[str, tuple[str | None, int]] = {}  # footnote id -> (group, number)
        self.notes: dict[str, object] = {}  # footnote id -> its list item

    def skip(self, kind: str) -> None:
        self.left_out[kind] = self.left_out.get(kind, 0) + 1

    def marker(self, sup) -> None:
        a = next(sup.iter("a"), None)
        m = _MARKER.search(sup.text_content())
        if a is None or m is None or not (target := _target(a)):
            return
        group, number = m.group(1), int(m.group(2))
        self.cited.setdefault(target, (group, number))
        self.out.append(f"[{group} {number}]" if group else f"[{number}]")

    def notes_list(self, ol) -> None:
        for li in ol.iterchildren("li"):
            if li.get("id"):
                self.notes.setdefault(li.get("id"), li)

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
            self.marker(el)
        elif tag == "ol" and "references" in classes:
            self.notes_list(el)
        elif "mw-references-wrap" in classes or "reflist" in classes:
            for ol in el.iter("ol"):
                self.notes_list(ol)
        elif kind:
            self.skip(kind)
            if kind == "files":
                self.captions(el)
        elif tag in _HEADINGS and tag != "h1":
            inner = _Walk()
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


def _note_text(li) -> str:
    body = li.find_class("reference-text") or li.find_class("mw-reference-text")
    walk = _Walk()
    walk.visit(body[0] if body else li)
    return _clean(" ".join("".join(walk.out).replace("\x00", " ").split("\n")))


_COINS = {"rft.btitle": "title", "rft.atitle": "title", "rft.title": "title", "rft.jtitle": "publisher"}


def _describe(ref: Reference, li) -> None:
    """Fields of a rendered citation: its COinS metadata (``span.Z3988``) and first link."""
    coins = li.find_class("Z3988")
    if coins:
        ref.template = "citation"
        data = urllib.parse.parse_qs(coins[0].get("title") or "")
        for key, name in _COINS.items():
            if key in data and getattr(ref, name) is None:
                setattr(ref, name, data[key][0])
        ref.publisher = (data.get("rft.pub") or data.get("rft.jtitle") or [ref.publisher])[0]
        authors = [", ".join(x for x in (last, first) if x) for last, first in _names(data)]
        ref.authors = list(dict.fromkeys(a for a in authors if a))
        year = re.search(r"(1[0-9]{3}|20[0-9]{2})", (data.get("rft.date") or [""])[0])
        ref.year = year.group(1) if year else None
        isbn = (data.get("rft.isbn") or [None])[0]
        ref.isbn = isbn.replace("-", "") if isbn else None
        ref.pages = (data.get("rft.pages") or data.get("rft.spage") or [None])[0]
    link = next((a for a in li.iter("a") if "external" in (a.get("class") or "")), None)
    ref.url = link.get("href") if link is not None else None


def _names(data: dict) -> list[tuple[str, str | None]]:
    names = [(last, None) for last in data.get("rft.au", [])]
    lasts, firsts = data.get("rft.aulast", []), data.get("rft.aufirst", [])
    return [(last, firsts[i] if i < len(firsts) else None) for i, last in enumerate(lasts)] + names


def _references(walk: _Walk) -> tuple[list[Reference], int]:
    refs = []
    for note_id, (group, number) in walk.cited.items():
        li = walk.notes.get(note_id)
        name = re.fullmatch(r"cite_note-(.+)-\d+", note_id)
        ref = Reference(number, name.group(1).replace("_", " ") if name else None, group, "")
        if li is not None:
            ref.text = _note_text(li)
            _describe(ref, li)
        refs.append(ref)
    refs.sort(key=lambda r: (r.group or "", r.number))
    unique = list({(r.group, r.number): r for r in refs}.values())
    return unique, sum(1 for k in walk.notes if k not in walk.cited)


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
    refs, uncited = _references(walk)
    text, sections = _sections("".join(walk.out))
    if categories is None:
        categories = [
            urllib.parse.unquote(link.get("href", "")).rpartition(":")[2].replace("_", " ")
            for link in root.iter("link")
            if link.get("rel") == "mw:PageProp/Category"
        ]
    return Article(text, sections, refs, list(dict.fromkeys(categories)), uncited=uncited), HtmlText(walk.left_out)
