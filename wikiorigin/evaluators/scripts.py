"""What the answer reader (:mod:`.answers`) knows of writing systems: digits of any script,
which scripts space their words, the letters that label options, look-alike capitals of the
Latin, Greek and Cyrillic alphabets, the particles Korean attaches to a word, and the clitics
Arabic and Hebrew attach before one.

Everything here works on match keys (NFKC, case-folded, punctuation gone, single spaces kept
only between words of spaced scripts), as :func:`.answers.match_key` makes them.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = [
    "ascii_digits",
    "fold_greek",
    "script",
    "lookalike",
    "attached",
    "spaced",
    "UNSPACED_RANGES",
    "SPACED_CHAR",
    "LABEL_TOKEN",
]

_DIGIT = re.compile(r"[^\D0-9]")  # a decimal digit (Unicode Nd) other than 0-9


def ascii_digits(text: str) -> str:
    """``text`` with every decimal digit of any script (Arabic-Indic ``٣``, Devanagari ``३``,
    Bengali, Thai, ...) written as an ASCII digit; other characters as they are."""
    return _DIGIT.sub(lambda m: str(unicodedata.decimal(m.group())), text)


_GREEK_MARKED = re.compile("[\u0386-\u03ce\u1f00-\u1ffc]")


def fold_greek(text: str) -> str:
    """``text`` with Greek letters' accents and breathings removed (``ά`` -> ``α``): Greek
    capitals are written without them (``ΧΕΡΣΟΝΗΣΟΣ`` is ``χερσόνησος``)."""
    return _GREEK_MARKED.sub(
        lambda m: "".join(c for c in unicodedata.normalize("NFD", m.group()) if not unicodedata.combining(c)), text
    )


UNSPACED_RANGES = "\u0e00-\u0fff\u1000-\u109f\u1780-\u17ff\u2e80-\u9fff\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003ffff"
"""Scripts written without spaces between words (CJK, kana, Thai, Lao, Myanmar, Khmer,
Tibetan), as a character class body: there a space is no word boundary."""

SPACED_CHAR = rf"[^\W_{UNSPACED_RANGES}]|[\u0300-\u036f\u0900-\u0dff]"
"""A letter, digit or mark of a script that spaces its words (Latin, Greek, Cyrillic, Hangul,
Arabic, Hebrew, Devanagari, ...), as a regular expression."""

LABEL_TOKEN = (
    r"[0-9]{1,2}|[A-Za-z]|[Α-Ωα-ω]|[А-Яа-я]|[アイウエオカキクケコ]|[가나다라마바]|[أبجده]|[कखगघङ]"
    r"|[กขคงจ]|[אבגדה]"
)
"""An option label: digits (① is 1 after NFKC; other scripts' digits are made ASCII first),
Latin, Greek and Cyrillic letters, the katakana of Japanese lists, Korean 가나다라, Arabic
أبجد, Devanagari कखगघ, Thai กขคง and Hebrew אבגד."""


def script(char: str) -> str:
    """The script of a character as the first word of its Unicode name (``LATIN``,
    ``CYRILLIC``, ``GREEK``, ``HANGUL``, ``ARABIC``, ``HEBREW``, ...; ``""`` if unnamed)."""
    return unicodedata.name(char, "").split(" ", 1)[0]


# Capitals that look the same in the Latin, Cyrillic and Greek alphabets (one shape per string).
_SHAPES = [
    "AАΑ",
    "BВΒ",
    "CСϹ",
    "EЕΕ",
    "HНΗ",
    "IІΙ",
    "KКΚ",
    "MМΜ",
    "NΝ",
    "OОΟ",
    "PРΡ",
    "TТΤ",
    "XХΧ",
    "YΥ",
    "ZΖ",
    "ГΓ",
    "ПΠ",
    "ФΦ",
]
_SHAPE = {c: shape for shape in _SHAPES for c in shape}
_FIRST = {"LATIN": "A", "CYRILLIC": "А", "GREEK": "Α"}


def lookalike(letter: str, labels) -> int | None:
    """The option a capital letter names by its shape when the prompt's labels are capitals of
    another of the Latin, Cyrillic and Greek alphabets (a Cyrillic ``В`` with labels ``ABCD`` is
    ``B``). Not when the labels mix scripts, and not when the letter's place in its own alphabet
    names another label (a Latin ``B`` with labels ``АБВГ`` looks like ``В`` but may stand for
    ``Б``, the second): then it is no answer, not a guess."""
    kinds = {script(label) for label in labels if len(label) == 1}
    if len(letter) != 1 or not letter.isupper() or len(kinds) != 1 or any(len(label) != 1 for label in labels):
        return None
    kind, own = kinds.pop(), script(letter)
    if kind not in _FIRST or own not in _FIRST or kind == own:
        return None
    same = [i for i, label in enumerate(labels) if label in _SHAPE.get(letter, "")]
    if len(same) != 1:
        return None
    place = ord(letter) - ord(_FIRST[own])
    if own == "LATIN" and place < len(labels) and place != same[0]:
        return None  # B read as the second label (by place) or as В (by shape): no answer
    return same[0]


# What Korean attaches to a noun: case particles, topic markers and the copula, as the first
# syllable of what follows the noun in the same word (서울이, 서울은, 서울입니다, 서울에서, 사과예요).
_HANGUL_PARTICLE = re.compile(
    "(?:이|가|은|는|을|를|의|에|로|으로|와|과|도|만|랑|이랑|처럼|까지|보다|"
    "입니|이다|이에|이었|였|인|일|임|예요|이요|요|이야|야|라고|이라|란|이란|께|께서)"
)
_CLITIC_SCRIPTS = ("ARABIC", "HEBREW")


def attached(text: str, x: int, y: int) -> str | None:
    """How an option found at ``text[x:y]`` (a key) inside a longer word is joined to it: a
    Korean particle after a Hangul option (``"particle"``), letters of the same script after
    it (``"suffix"``: Estonian ``Tallinnas``) or, in Arabic and Hebrew, before it
    (``"clitic"``: ``بدمشق``), at most three letters either way; None when it is not so joined."""
    start, end = x, y
    while start and spaced(text[start - 1]):
        start -= 1
    while end < len(text) and spaced(text[end]):
        end += 1
    before, after = text[start:x], text[y:end]
    first, last = script(text[x]), script(text[y - 1])
    if not before and after and last == "HANGUL" and _HANGUL_PARTICLE.match(after):
        return "particle"
    if len(before) > 3 or len(after) > 3 or not (before or after):
        return None
    if any(script(c) != first for c in before) or any(script(c) != last for c in after):
        return None
    if before and first not in _CLITIC_SCRIPTS:
        return None
    return "clitic" if before else "suffix"


_SPACED = re.compile(SPACED_CHAR)


def spaced(char: str) -> bool:
    """Whether ``char`` is a letter, digit or mark of a script that spaces its words
    (:data:`SPACED_CHAR`)."""
    return _SPACED.match(char) is not None
