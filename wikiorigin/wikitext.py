"""Wikitext to plain text with its footnotes, as MediaWiki numbers them (mwparserfromhell).

:func:`convert` returns an :class:`Article`: the text with ``[n]`` where each footnote is cited
(``[group n]`` for a named group), the sections (heading, level, text), the categories and the
references. Numbering follows MediaWiki's Cite: footnotes are numbered per group in order of
first use; a named footnote used again keeps its number; a footnote cited by name before (or
only in a list such as ``<references>`` or ``{{Reflist|refs=}}``) takes its content from that
definition; list-defined footnotes that are never cited are left out (counted).

Footnote templates: ``{{efn}}``/``{{efn2}}``/``{{refnest}}`` (a footnote in a notes group),
``{{sfn}}``/``{{sfnp}}`` (a short citation; identical calls share a number), ``{{r}}`` (reuses
by name). Kept templates (their text stays): :data:`KEPT_TEMPLATES`. Every other template,
tables, files, comments and HTML markup are dropped; maintenance templates such as 要出典 are
not references.

Each reference is parsed: citation templates (Cite book/web/news/journal, Citation, and the
Japanese usage with the positional ``和書`` flag and ``{{ISBN2}}``) give authors, title,
publisher, year, ISBN, URL and pages; a free-text reference keeps its text. A page the parser
cannot handle falls back to plain stripping (``Article.fallback``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ._citations import _CITATIONS, Reference, _citation, _name, _param, _params

__all__ = ["Article", "Reference", "Section", "convert", "clean_text", "split_sections"]
__all__ += ["KEPT_TEMPLATES", "NOTE_TEMPLATES"]

# Templates whose text is kept: name -> which positional parameter holds the text.
KEPT_TEMPLATES = {
    "lang": 2,
    "langwithname": 2,
    "nihongo": 1,
    "仮リンク": 1,
    "ruby": 1,
    "読み仮名": 1,
    "読み仮名_ruby不使用": 1,
    "lang-en": 1,
    "lang-ja": 1,
    "lang-zh": 1,
    "lang-ko": 1,
    "lang-fr": 1,
    "lang-de": 1,
    "en": 1,
    "語中改行": 1,
    "nowrap": 1,
    "small": 1,
    "math": 1,
    "display none": 0,
    "!": 0,
}
"""Templates whose text is kept: template name -> the positional parameter that holds the text."""
# Footnote templates (a footnote in a group); efn2/refnest are jawiki's, efn both.
NOTE_TEMPLATES = {"efn": "注", "efn2": "注", "refnest": "注", "efn-ua": "注", "efn-la": "注"}
"""Footnote templates -> the footnote group they put their note in (``efn2`` and ``refnest``
are jawiki's, ``efn`` both's)."""
_SFN = {"sfn", "sfnp", "sfnm"}
_FILE_NAMESPACES = {"file", "image", "ファイル", "画像", "media", "メディア"}
_CATEGORY_NAMESPACES = {"category", "カテゴリ"}
_DROP_TAGS = {
    "references",
    "gallery",
    "math",
    "score",
    "timeline",
    "graph",
    "mapframe",
    "syntaxhighlight",
    "source",
    "templatedata",
    "imagemap",
    "table",
    "noinclude",
}


@dataclass(slots=True)
class Section:
    """One section of an article: its ``heading`` (empty for the lead), ``level`` and plain ``text``."""

    heading: str
    level: int
    text: str


@dataclass(slots=True)
class Article:
    """An article converted by :func:`convert`: plain ``text``, its ``sections``, ``references``
    and ``categories``; ``fallback`` when the converter fell back to plain stripping, ``uncited``
    the list-defined footnotes never cited."""

    text: str
    sections: list[Section]
    references: list[Reference]
    categories: list[str]
    fallback: bool = False
    uncited: int = 0  # list-defined footnotes never cited


_NODES = None  # mwparserfromhell's node classes, imported on first use


def _nodes():
    global _NODES
    if _NODES is None:
        import mwparserfromhell.nodes as nodes

        _NODES = nodes
    return _NODES


class _Converter:
    def __init__(self, namespaces: dict[int, str] | None):
        names = {n.lower() for n in (namespaces or {}).values() if n}
        ns = namespaces or {}
        self.file_ns = _FILE_NAMESPACES | ({ns[6].lower()} if ns.get(6) else set())
        self.category_ns = _CATEGORY_NAMESPACES | ({ns[14].lower()} if ns.get(14) else set())
        self.other_ns = names
        self.categories: list[str] = []
        self.refs: list[Reference] = []  # in first-use order (their content: self.content)
        self.by_name: dict[tuple, Reference] = {}
        self.content: dict[int, object] = {}
        self.counts: dict[str | None, int] = {}
        self.list_defined: dict[tuple, object] = {}
        self._handlers: dict | None = None  # node class -> its renderer (render)

    # footnotes ------------------------------------------------------------------------------

    def cite(self, group: str | None, name: str | None, content) -> str:
        group = group or None
        key = (group, name) if name else None
        ref = self.by_name.get(key) if key else None
        if ref is None:
            self.counts[group] = self.counts.get(group, 0) + 1
            ref = Reference(self.counts[group], name, group, "")
            self.refs.append(ref)
            if key:
                self.by_name[key] = ref
        if content is not None and id(ref) not in self.content:
            self.content[id(ref)] = content
        return f"[{group} {ref.number}]" if group else f"[{ref.number}]"

    def ref_tag(self, tag) -> str:
        attrs = {str(a.name).strip().lower(): str(a.value).strip() for a in tag.attributes}
        content = tag.contents if not tag.self_closing and tag.contents is not None else None
        if content is not None and not str(content).strip():
            content = None
        if content is None and not attrs.get("name"):
            return ""
        return self.cite(attrs.get("group"), attrs.get("name"), content)

    def collect_list(self, wikicode, group=None) -> None:
        """List-defined footnotes (inside <references> or {{Reflist|refs=}})."""
        for tag in wikicode.filter_tags(recursive=False, matches=lambda n: str(n.tag).lower() == "ref"):
            attrs = {str(a.name).strip().lower(): str(a.value).strip() for a in tag.attributes}
            if attrs.get("name") and tag.contents is not None and str(tag.contents).strip():
                self.list_defined[(attrs.get("group") or group, attrs["name"])] = tag.contents

    # nodes ----------------------------------------------------------------------------------

    def template(self, node) -> str:
        name = _name(node)
        if name in NOTE_TEMPLATES:
            params = _params(node)
            group = _param(params, "group", NOTE_TEMPLATES[name])
            content = params["1"].value if "1" in params else None
            return self.cite(group, _param(params, "name"), content)
        if name in _SFN:
            params = _params(node)
            args = [str(p.value).strip() for p in node.params if not p.showkey]
            extra = [f"{k}={_param(params, k)}" for k in ("p", "pp", "loc") if k in params]
            label = " ".join(args) + (", " + ", ".join(extra) if extra else "")
            return self.cite(None, "sfn:" + label, _Text(label))
        if name == "r":
            return "".join(
                self.cite(None, str(p.value).strip(), None)
                for p in node.params
                if not p.showkey and str(p.value).strip()
            )
        if name in ("reflist", "references"):
            refs = _params(node).get("refs")
            if refs is not None:
                self.collect_list(refs.value)
                return ""
        # a kept template's text parameter, then (lang-xx) the first: the first one present
        keys = [str(KEPT_TEMPLATES[name])] if KEPT_TEMPLATES.get(name) else []
        if name.startswith("lang-"):
            keys.append("1")
        if keys:
            params = _params(node)
            for key in keys:
                if key in params:
                    return self.render(params[key].value)
        return self.markers(node)

    def markers(self, node) -> str:
        """Only the footnote markers inside something whose text is dropped (an infobox, a
        quote box, a table): MediaWiki renders and numbers those footnotes too."""
        nodes = _nodes()
        if isinstance(node, nodes.Template):
            parts = [p.value for p in node.params]
        elif isinstance(node, nodes.Tag):
            parts = [node.contents] if node.contents is not None else []
        elif isinstance(node, (nodes.Wikilink, nodes.ExternalLink)):
            parts = [x for x in (getattr(node, "text", None), getattr(node, "title", None)) if x is not None]
        else:
            parts = [node.title] if isinstance(node, nodes.Heading) else []
        out = []
        text = nodes.Text  # most children: nothing to look for in them
        for inner in parts:
            for child in inner.nodes:
                if type(child) is text:
                    continue
                if isinstance(child, nodes.Tag) and str(child.tag).lower() == "ref":
                    out.append(self.ref_tag(child))
                elif isinstance(child, nodes.Template):
                    out.append(self.template(child))
                elif isinstance(child, (nodes.Tag, nodes.Wikilink, nodes.ExternalLink, nodes.Heading)):
                    out.append(self.markers(child))
        return "".join(out)

    def wikilink(self, node) -> str:
        title = str(node.title).strip()
        prefix = title.split(":", 1)[0].strip().lower() if ":" in title else ""
        if prefix in self.category_ns:
            self.categories.append(title.split(":", 1)[1].strip().replace("_", " "))
            return ""
        if prefix in self.file_ns:
            return self.markers(node)  # a caption's footnotes are rendered and numbered
        if (
            prefix
            and not title.startswith(":")
            and prefix not in self.other_ns
            and len(prefix) <= 12
            and re.fullmatch(r"[a-z-]+", prefix)
        ):
            return ""  # an interlanguage link
        return self.render(node.text) if node.text is not None else title.lstrip(":")

    def tag(self, node) -> str:
        name = str(node.tag).lower()
        if name == "ref":
            return self.ref_tag(node)
        if name == "references":
            if node.contents is not None:
                group = next(
                    (str(a.value).strip() for a in node.attributes if str(a.name).strip().lower() == "group"), None
                )
                self.collect_list(node.contents, group)
            return ""
        if name in _DROP_TAGS or node.wiki_markup == "{|":
            return self.markers(node)
        if name == "br":
            return "\n"
        if name in ("li", "dd", "dt") and node.wiki_markup:
            return "\n"
        if node.contents is None:
            return ""
        return self.render(node.contents)

    def render(self, wikicode) -> str:
        """The text of ``wikicode``: one dispatch on each node's class (the node classes of
        mwparserfromhell have no subclasses); comments and arguments give nothing."""
        handlers = self._handlers
        if handlers is None:
            nodes = _nodes()
            handlers = self._handlers = {
                nodes.Text: _text,
                _Text: _text,
                nodes.Template: self.template,
                nodes.Wikilink: self.wikilink,
                nodes.ExternalLink: self.external_link,
                nodes.Tag: self.tag,
                nodes.HTMLEntity: _entity,
                nodes.Heading: self.heading,
            }
        out = []
        for node in wikicode.nodes:
            handler = handlers.get(type(node))
            if handler is not None:
                out.append(handler(node))
        return "".join(out)

    def external_link(self, node) -> str:
        return self.render(node.title) if node.title is not None else ""

    def heading(self, node) -> str:
        return f"\n\x00{node.level}\x00{self.render(node.title).strip()}\x00\n"

    # references ------------------------------------------------------------------------------

    def finish_references(self) -> tuple[list[Reference], int]:
        for ref in self.refs:
            content = self.content.get(id(ref))
            if content is None and ref.name:
                content = self.list_defined.get((ref.group, ref.name))
            if content is not None:  # else cited by a name defined nowhere: MediaWiki keeps
                _describe(ref, content, self)  # the number and shows an error; text stays ""
        cited = {(r.group, r.name) for r in self.refs if r.name}
        uncited = sum(1 for key in self.list_defined if key not in cited)
        return self.refs, uncited


def _text(node) -> str:
    return node.value


def _entity(node) -> str:
    return node.normalize()


class _Text:
    """Plain text standing in for wikicode (the label of an sfn)."""

    def __init__(self, value: str):
        self.value = value
        self.nodes = [self]

    def __str__(self) -> str:
        return self.value


def clean_text(text: str) -> str:
    """``text`` with runs of spaces and tabs made one, spaces around line breaks and blank lines
    beyond one dropped, and stripped: how every source lays out its text."""
    text = re.sub(r"[ \t]+", " ", text)
    text = re.sub(r" *\n *", "\n", text)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def _describe(ref: Reference, content, conv: _Converter) -> None:
    """Fill a reference's fields from its content: a citation template, or free text."""
    if isinstance(content, _Text):
        ref.text = content.value
        ref.template = "sfn"
        return
    inner = _Converter(None)
    inner.file_ns, inner.category_ns = conv.file_ns, conv.category_ns
    ref.text = clean_text(inner.render(content))
    for template in content.filter_templates(recursive=False):
        if _name(template) in _CITATIONS:
            _citation(ref, template, lambda value: clean_text(inner.render(value)))
            break
    if ref.template:  # the citation's fields, then any free text around it
        summary = ", ".join(x for x in ("; ".join(ref.authors), ref.title, ref.publisher, ref.year) if x)
        ref.text = f"{summary} {ref.text}".strip() if ref.text else summary
    if not ref.text:  # only templates we do not render (e.g. {{OED|...}}): keep the source
        ref.text = clean_text(str(content))


def split_sections(text: str) -> tuple[str, list[Section]]:
    """The plain text and the :class:`Section` list of ``text`` in which each heading stands as
    ``\\x00level\\x00heading\\x00`` (what the wikitext and the HTML readers write)."""
    parts = text.split("\x00")
    sections = [Section("", 0, "")]
    body = [parts[0]]
    for i in range(1, len(parts) - 2, 3):
        level, heading, after = int(parts[i]), parts[i + 1], parts[i + 2]
        sections.append(Section(heading, level, ""))
        body.append(after)
    for section, chunk in zip(sections, body):
        section.text = clean_text(chunk)
    plain = "\n\n".join(
        (f"{'=' * s.level} {s.heading} {'=' * s.level}\n{s.text}" if s.level else s.text).strip() for s in sections
    ).strip()
    return plain, [s for s in sections if s.level or s.text]


_clean, _sections = clean_text, split_sections  # their former, private names

MAX_CHARS = 2_000_000  # parsing time grows with the size: larger pages take the fallback


def _fallback(wikitext: str) -> Article:
    text = clean_text(re.sub(r"<[^>]*>|\{\{[^{}]*\}\}|\[\[|\]\]|'{2,}", "", wikitext))
    return Article(text, [Section("", 0, text)], [], [], fallback=True)


def convert(wikitext: str, namespaces: dict[int, str] | None = None, max_chars: int = MAX_CHARS) -> Article:
    """Plain text, sections, categories and references of one page's wikitext.

    Time per page is bounded by its size: a page over ``max_chars`` characters, or one the
    parser fails on, is stripped plainly instead (``Article.fallback``)."""
    import mwparserfromhell
    from mwparserfromhell.parser import ParserError

    if len(wikitext) > max_chars:
        return _fallback(wikitext)
    try:
        code = mwparserfromhell.parse(wikitext)
        conv = _Converter(namespaces)
        raw = conv.render(code)
        refs, uncited = conv.finish_references()
    except (ParserError, RecursionError):  # one page must never stop a run
        return _fallback(wikitext)
    text, sections = split_sections(raw)
    return Article(text, sections, refs, list(dict.fromkeys(conv.categories)), uncited=uncited)
