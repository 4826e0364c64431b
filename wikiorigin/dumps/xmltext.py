"""The text of XML elements as MediaWiki dumps write it: one unescaper, one element pattern.

Every reader of XML dumps here (the page-creation scan's Python path, the pages-articles
reader, the header) decodes character references with :func:`unescape`, by the rules the
compiled core (``_scanblock.c``, ``unescape``) follows, so that a title reads the same
whichever path read it. :func:`element` is the pattern of an element's text.
"""

from __future__ import annotations

import re

__all__ = ["unescape", "element"]

# The references XML defines: five names, and numbers of at most 12 characters in all (the
# core looks for the ';' within 12 bytes).
_REFERENCE = re.compile(r"&(amp|lt|gt|quot|apos|#[0-9]{1,9}|#[xX][0-9a-fA-F]{1,8});")
_NAMED = {"amp": "&", "lt": "<", "gt": ">", "quot": '"', "apos": "'"}


def _reference(m: re.Match) -> str:
    name = m.group(1)
    if name[0] != "#":
        return _NAMED[name]
    code = int(name[2:], 16) if name[1] in "xX" else int(name[1:])
    return chr(code) if 0 < code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else m.group(0)


def unescape(text: str) -> str:
    """``text`` with its XML character references replaced, in one pass.

    Replaced: ``&amp;`` ``&lt;`` ``&gt;`` ``&quot;`` ``&apos;`` and numeric references
    (``&#039;``, ``&#x1F600;``) to a character XML allows. Anything else is kept as it stands,
    on purpose: a name XML does not define (``&nbsp;``, which a dump cannot hold), a reference
    without its ``;``, ``&#0;``, a surrogate, a number past U+10FFFF or longer than 12
    characters. ``&amp;lt;`` gives ``&lt;`` (one pass, never twice).
    """
    return _REFERENCE.sub(_reference, text) if "&" in text else text


def element(tag: str, text: bytes = rb"[^<]*") -> re.Pattern[bytes]:
    """The pattern of ``<tag>TEXT</tag>`` in bytes, its text (matching ``text``) as group 1."""
    name = tag.encode("ascii")
    return re.compile(rb"<%s>(%s)</%s>" % (name, text, name))
