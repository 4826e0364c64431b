"""How much of a rendered page's prose a text keeps: the measure of a text source.

:func:`rendered_prose` takes, from MediaWiki's HTML of a page, the words of its prose blocks
(paragraphs, list items, definitions) read independently of :mod:`~wikiorigin.render.html`:
a block counts when most of its words are in the page's own wikitext (so page furniture a
template writes, such as map links, is left out) and footnotes and their list are not prose.
:func:`token_recall` is the share of those words (with their repeats) found in a text.
"""

from __future__ import annotations

import re
from collections import Counter

__all__ = ["OWN_WORDS", "words", "rendered_prose", "token_recall"]

OWN_WORDS = 0.5
"""Share of a block's words that must be in the page's wikitext for the block to be prose."""
_WORD = re.compile(r"\w+")
_FILE = re.compile(
    r"[^:]+:[^:]+\.(?:jpe?g|png|gif|svg|tiff?|webp|webm|og[gva]|mp[34]|pdf|djvu|wav|flac|midi?|xcf|stl)", re.I
)
_PROSE = ("p", "li", "dd", "dt")


def words(text: str) -> list[str]:
    """The words of ``text`` (runs of letters and digits), case-folded."""
    return [w.casefold() for w in _WORD.findall(text)]


def _own_text(el) -> str:
    """The text of a block without the blocks nested in it and its footnote markers."""
    parts = [el.text or ""]
    for child in el:
        tag = child.tag if isinstance(child.tag, str) else ""
        if tag not in ("ul", "ol", "dl", "p", "table", "div") and "reference" not in (child.get("class") or ""):
            parts.append(child.text_content())
        parts.append(child.tail or "")
    return "".join(parts)


def rendered_prose(html: str, wikitext: str) -> list[str]:
    """The words of the prose blocks of ``html`` whose words are mostly (:data:`OWN_WORDS`) in ``wikitext``."""
    import lxml.html

    if not html.strip():
        return []
    root = lxml.html.document_fromstring(html)
    for notes in root.xpath("//ol[contains(@class,'references')]|//style|//script"):
        notes.getparent().remove(notes)
    for a in root.iter("a"):  # a file the renderer lacks: the reader sees an image, not its name
        if _FILE.fullmatch(a.get("title") or ""):
            a.text = ""
            for child in list(a):
                a.remove(child)
    source = set(words(wikitext))
    kept: list[str] = []
    for el in root.iter(*_PROSE):
        block = words(_own_text(el))
        if block and sum(w in source for w in block) >= OWN_WORDS * len(block):
            kept.extend(block)
    return kept


def token_recall(reference: list[str], text: str) -> tuple[int, int]:
    """``(found, total)``: of the words ``reference`` (with repeats), how many ``text`` holds."""
    have = Counter(words(text))
    want = Counter(reference)
    return sum(min(n, have[w]) for w, n in want.items()), sum(want.values())
