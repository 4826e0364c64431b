"""Where a multiple-choice answer mentions an option (:mod:`~wikiorigin.evaluators.answers`
reads the answer with them): the key options and answers are compared on (:func:`match_key`:
NFKC, case-folded, numerals as digits, without punctuation), an option's occurrences as a
whole and not denied, the stretches copied from the question, a reworded option, an option
inflected in a spaced script."""

from __future__ import annotations

import re
import unicodedata

from .cues import DENIALS
from .scripts import SPACED_CHAR as _SPACED_CHAR, ascii_digits, attached, script, spaced

__all__ = ["match_key"]

_KANJI_DIGITS = {c: i for i, c in enumerate("〇一二三四五六七八九")} | {"零": 0, "壱": 1, "弐": 2, "参": 3}
_SMALL_UNITS = {"十": 10, "百": 100, "千": 1000}
_BIG_UNITS = {"万": 10**4, "億": 10**8, "兆": 10**12}
_NUMERAL = re.compile(r"[0-9〇一二三四五六七八九零壱弐参十百千万億兆]+")


def _numeral_value(run: str) -> str:
    """A run of kanji and arabic numerals as digits (三千 → 3000, 3千 → 3000, 二十一 → 21);
    a run that is not a number (万 alone, 千千) is left as it is."""
    if run.isdigit() or not any(c in _SMALL_UNITS or c in _BIG_UNITS or c in _KANJI_DIGITS for c in run):
        return run
    total = section = 0
    digits = ""
    for c in run:
        if c.isdigit() or c in _KANJI_DIGITS:
            digits += str(int(c) if c.isdigit() else _KANJI_DIGITS[c])
        elif c in _SMALL_UNITS:
            section += (int(digits) if digits else 1) * _SMALL_UNITS[c]
            digits = ""
        else:
            if not (section or digits):
                return run
            total += (section + (int(digits) if digits else 0)) * _BIG_UNITS[c]
            section, digits = 0, ""
    return str(total + section + (int(digits) if digits else 0))


def match_key(text: str) -> str:
    """``text`` as compared: NFKC, case-folded, numerals as digits (``3,000``, ``三千`` and
    ``٣٠٠٠`` are ``3000``), without punctuation; spaces are kept only between two letters or
    digits of scripts that space their words (Latin, Greek, Cyrillic, Hangul, Arabic,
    Devanagari, ...), so that words stay apart (``cat`` is not in ``category``), and go
    elsewhere (Japanese, Chinese, Thai)."""
    text = ascii_digits(unicodedata.normalize("NFKC", text)).casefold()
    text = _THOUSANDS.sub("", text)
    text = _NUMERAL.sub(lambda m: _numeral_value(m.group()), text)
    return _LONE_SPACE.sub("", " ".join(text.translate(_KEPT).split()))


class _Kept(dict):
    """For ``str.translate``: a letter, number or mark stays, anything else is a space; each
    character's category looked up once, when first met."""

    def __missing__(self, code: int) -> str:
        char = chr(code)
        self[code] = kept = char if unicodedata.category(char)[0] in "LNM" else " "
        return kept


_KEPT = _Kept()
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_LONE_SPACE = re.compile(rf"(?<!{_SPACED_CHAR}) | (?!{_SPACED_CHAR})")


_DENIED_BEFORE = re.compile("(?:" + "|".join(f for before, _ in DENIALS.values() for f in before) + r")(?:\w{1,3} )?$")
_DENIED_AFTER = re.compile("|".join(f for _, after in DENIALS.values() for f in after))


def _denied(text: str, x: int, y: int) -> bool:
    """Whether the option at ``text[x:y]`` (a key) is denied (``Xではない``, ``not X``,
    ``не X``, ``不是X``)."""
    return bool(_DENIED_AFTER.match(text, y) or _DENIED_BEFORE.search(text[max(0, x - 40) : x]))


def _found(text: str, key: str):
    """The spans where ``key`` (not empty) occurs in ``text``, left to right, not overlapping
    (as ``re.finditer`` of the escaped key, without compiling a pattern per option)."""
    x = text.find(key)
    while x >= 0:
        yield x, x + len(key)
        x = text.find(key, x + len(key))


def _spans(text: str, key: str) -> list[tuple[int, int]]:
    """Where ``key`` occurs in ``text`` (both keys) as a whole: not inside a longer number or
    word of a spaced script (a Korean particle may follow: ``서울이``), and not denied."""
    out = []
    for x, y in _found(text, key):
        if (spaced(key[0]) and x and spaced(text[x - 1])) or (
            spaced(key[-1]) and y < len(text) and spaced(text[y]) and attached(text, x, y) != "particle"
        ):
            continue
        if not _denied(text, x, y):
            out.append((x, y))
    return out


_SOFT_END = frozenset("aeiouyаеёиоуыэюяьйαεηιουωάέήίόύώς")  # endings a declension replaces


def _forms(key: str) -> list[str]:
    """What of an option an inflected word begins with: the option, and for an option ending
    in a vowel or soft sign also its stem (Russian ``Москва`` -> ``Москвы``, ``Казань`` ->
    ``Казани``)."""
    return [key, key[:-1]] if len(key) >= 5 and key[-1] in _SOFT_END else [key]  # a stem of 4 letters or more


def _inflected(text: str, keys: list[str], asked: str) -> int | None:
    """The last resort in spaced scripts: an option inflected in the answer, followed by up to
    three letters of its word (Estonian ``Tallinnas``; a final vowel or soft sign may be
    replaced: Russian ``Казани``) or, in Arabic and Hebrew, preceded by a clitic
    (``بدمشق``). Read only when exactly one option (three letters or more) occurs so, not
    copied from the question nor denied, and no option begins another's form."""
    copied, found = _copied(text, asked), set()
    for i, key in enumerate(keys):
        if len(key) < 3 or not (spaced(key[0]) and spaced(key[-1])):
            continue
        for form in _forms(key):
            for x, y in _found(text, form):
                if (
                    attached(text, x, y) in ("suffix", "clitic")
                    and not _denied(text, x, y)
                    and not any(a <= x and y <= b for a, b in copied)
                ):
                    found.add(i)
    if len(found) != 1:
        return None
    i = found.pop()
    if any(
        j != i and k and any(k.startswith(f) or f.startswith(k) for f in _forms(keys[i])) for j, k in enumerate(keys)
    ):
        return None
    return i


def _occurrences(text: str, keys: list[str], question: str = "") -> list[int]:
    """Options that occur in ``text`` (a key), not counting an occurrence inside an occurrence
    of a longer option, nor one inside a stretch copied from ``question``."""
    found = {i: s for i, s in ((i, _spans(text, k)) for i, k in enumerate(keys) if k) if s}
    copied = _copied(text, question)
    keep = []
    for i, own in found.items():
        covers = copied + [s for j, other in found.items() if j != i and len(keys[j]) > len(keys[i]) for s in other]
        if any(not any(a <= x and y <= b for a, b in covers) for x, y in own):
            keep.append(i)
    return keep


def _copied(text: str, question: str, shortest: int = 5) -> list[tuple[int, int]]:
    """The stretches of ``text`` (a key) copied from the question, ``shortest`` characters or
    more: an option that occurs only inside them is the question's, not the answer's."""
    spans, i = [], 0
    while question and i + shortest <= len(text):
        j = i + shortest
        if text[i:j] in question:
            while j < len(text) and text[i : j + 1] in question:
                j += 1
            spans.append((i, j))
            i = j
        else:
            i += 1
    return spans


def _paraphrase(sentence: str, keys: list[str]) -> int | None:
    """The option whose distinctive characters (those no other option has; at least three)
    the sentence holds almost all of, clearly more than any other option's: the answer
    rewords one option (``夜間にサギが青白く光る`` for ``サギが夜間に青白く光る``). Letters of
    alphabets (Latin, Cyrillic, Arabic, ...) say nothing alone and are not counted."""
    chars = [{c for c in k if not (c.isalpha() and spaced(c) and script(c) != "HANGUL")} for k in keys]
    scores = []
    for i, own in enumerate(chars):
        mine = own - set().union(*(c for j, c in enumerate(chars) if j != i))
        scores.append(sum(c in sentence for c in mine) / len(mine) if len(mine) >= 3 else 0.0)
    best = max(range(len(keys)), key=scores.__getitem__)
    rest = max((s for i, s in enumerate(scores) if i != best), default=0.0)
    return best if scores[best] >= 0.8 and rest <= scores[best] - 0.3 else None
