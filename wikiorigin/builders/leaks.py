"""Does a question hold its answer's name? Names are matched as words, script by script.

Both texts are compared after NFKC and case folding. A name of a *spaced* script (Latin,
Cyrillic, Georgian, Arabic, Hangul, ...) is found where no letter or digit of such a script
comes right before it, nor right after it for a short name: "Ur" leaks in "Where is Ur?" but
not in "What is urban?", "&" in "A & B" but not in "AT&T". A name of four characters or more
(two or more in Hangul, whose particles follow every noun) may be followed by letters, so that
an inflected form still leaks: "Tallinn" in "Tallinnas", "서울" in "서울은". Scripts written
without spaces between words (:data:`UNSPACED`: Han, kana, Thai, Lao, Khmer, Myanmar, Tibetan)
have no word boundary to look for, so a name holding any of their characters is found as a
substring when it is two characters or longer (a two-kanji name inside a question that runs
on after it with kana), except that a name all in katakana is found where no katakana touches
it, katakana words being set off by the other scripts or the middle dot (pan, bread, is no leak
in panda, both in katakana, but is when kana particles follow it, and Smith is in John Smith
written with the middle dot between the names); a one-character name
of those scripts only where no letter touches it (quoted alone, not as the first half of a
compound): one character alone is too often a part of another word. A letter of an unspaced
script next to a spaced-script name is a boundary ("Ampersand" followed by a kana particle
holds "Ampersand").
"""

from __future__ import annotations

import unicodedata

__all__ = ["UNSPACED", "unspaced", "leaked_name", "find_leak"]

UNSPACED = (
    (0x0E00, 0x0EFF),  # Thai, Lao
    (0x0F00, 0x0FFF),  # Tibetan
    (0x1000, 0x109F),  # Myanmar
    (0x1780, 0x17FF),  # Khmer
    (0x2E80, 0x2FDF),  # CJK radicals
    (0x3005, 0x3007),  # ideographic iteration mark, closing mark, number zero
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x31F0, 0x31FF),  # Katakana extensions
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0x20000, 0x3FFFF),  # CJK extensions B and later
)
"""The code point ranges of scripts written without spaces between words."""


def unspaced(char: str) -> bool:
    """Whether ``char`` is of a script written without spaces (:data:`UNSPACED`)."""
    point = ord(char)
    return any(low <= point <= high for low, high in UNSPACED)


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def _wordlike(char: str) -> bool:
    return unicodedata.category(char)[0] in "LMN" or char == "_"


def _joins(char: str, name_unspaced: bool) -> bool:
    """Whether ``char`` beside a name makes it part of a longer word."""
    if not char or not _wordlike(char):
        return False
    return name_unspaced or not unspaced(char)


def _hangul(char: str) -> bool:
    return 0xAC00 <= ord(char) <= 0xD7A3 or 0x1100 <= ord(char) <= 0x11FF or 0x3130 <= ord(char) <= 0x318F


def _takes_suffix(name: str) -> bool:
    """Whether letters may follow ``name`` (a spaced-script name long enough to inflect)."""
    return len(name) >= 4 or (len(name) >= 2 and all(_hangul(c) for c in name if _wordlike(c)))


def _katakana(char: str) -> bool:
    """A katakana letter; not the middle dot (U+30FB), which parts katakana words (John Smith)."""
    return (0x30A1 <= ord(char) <= 0x30FF and char != "\u30fb") or 0x31F0 <= ord(char) <= 0x31FF


def _katakana_word(name: str, text: str) -> bool:
    """Whether ``text`` holds the katakana ``name`` with no katakana right before or after it."""
    start = text.find(name)
    while start >= 0:
        before, after = text[start - 1 : start], text[start + len(name) : start + len(name) + 1]
        if not (before and _katakana(before)) and not (after and _katakana(after)):
            return True
        start = text.find(name, start + 1)
    return False


def leaked_name(name: str, text: str) -> bool:
    """Whether ``text`` holds ``name`` as a word (see the module's rules)."""
    name, text = _fold(name).strip(), _fold(text)
    if not name:
        return False
    name_unspaced = any(unspaced(c) for c in name)
    if name_unspaced and len(name) >= 2:
        return _katakana_word(name, text) if all(_katakana(c) for c in name) else name in text
    suffix = not name_unspaced and _takes_suffix(name)
    start = text.find(name)
    while start >= 0:
        before, after = text[start - 1 : start], text[start + len(name) : start + len(name) + 1]
        if not _joins(before, name_unspaced) and (suffix or not _joins(after, name_unspaced)):
            return True
        start = text.find(name, start + 1)
    return False


def find_leak(names: list[str], texts: list[str]) -> tuple[int, int] | None:
    """The first ``(name index, text index)`` where a text holds a name as a word, else None."""
    for i, name in enumerate(names):
        for j, text in enumerate(texts):
            if leaked_name(name, text):
                return i, j
    return None
