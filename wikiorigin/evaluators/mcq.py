"""Reading a model's answer to a multiple-choice question (YokaiEval's generation mode).

:func:`parse_choice` returns the index of the option a response answers, or ``None`` when it
answers none or several. It copes with what local models write: chat-role prefixes and end
tokens, an echoed question and option list, ``回答：``/``答え:``/``Answer:`` prefixes, bullets,
numbers and letters (``2``, ``B)``, ``(b)``), brackets and quotes (「」『』""), full-width and
half-width forms (NFKC), and hedged answers that still pick one option.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["parse_choice", "normalize"]

_SPECIAL = re.compile(r"<\|[^|>]*\|>|<[A-Za-z]+\|[^>]*>|</?s>|\[/?INST\]|<unk>|<pad>")
_ROLE = re.compile(r"^\s*(?:ASSISTANT|assistant|Assistant|システム|アシスタント|AI|### ?(?:応答|Response|回答))\s*[:：]?\s*", re.M)
_PREFIX = re.compile(r"^\s*(?:正解|回答|答え|解答|answer|the answer|correct answer|選択肢)\s*(?:は|:|：|is)?\s*[:：]?\s*", re.I)
_BULLET = re.compile(r"^\s*(?:[-・*•●]|\(?[0-9a-dA-D１-４]\s*[).．:：、]|[0-9１-４]\s*\.)\s*")
_QUOTES = "「」『』\"'“”‘’【】()（）[]《》〈〉"
_TRAIL = re.compile(r"[\s。．.、,!！?？]+$")
_LETTERS = {c: i for i, c in enumerate("abcd")}


def normalize(text: str) -> str:
    return unicodedata.normalize("NFKC", text).strip()


def _clean(line: str) -> str:
    line = _BULLET.sub("", line)
    line = _PREFIX.sub("", line)
    line = line.strip().strip(_QUOTES).strip()
    return _TRAIL.sub("", line).strip(_QUOTES).strip()


def _mentioned(text: str, choices: list[str]) -> list[int]:
    """Options that occur in ``text``, not counting one that only occurs inside a longer one."""
    found = [i for i, c in enumerate(choices) if c and c in text]
    return [i for i in found
            if not any(j != i and choices[i] in choices[j] and choices[j] in text for j in found)]


def parse_choice(response: str, choices: list[str]) -> int | None:
    """The index of the option ``response`` answers; None for no answer or several."""
    if not response or not choices:
        return None
    options = [normalize(c) for c in choices]
    text = _ROLE.sub("", _SPECIAL.sub("", normalize(response))).strip()
    lines = [l for l in (x.strip() for x in text.splitlines()) if l]
    # an echoed option list (bulleted lines that are the options): drop it
    echo = [l for l in lines if _BULLET.match(l) and _clean(l) in options]
    if len(echo) >= 3:
        lines = [l for l in lines if l not in echo] or lines
    cleaned = [_clean(l) for l in lines]
    for raw, line in zip(lines, cleaned):  # a line that is an option, or a letter or number
        if line in options:
            return options.index(line)
        key = re.sub(r"[\s()（）.．:：、\[\]]", "", _PREFIX.sub("", raw)).lower()
        if key in _LETTERS:
            return _LETTERS[key]
        if key in ("1", "2", "3", "4"):
            return int(key) - 1
    for line in cleaned:  # a shortened option: the line lies inside exactly one option
        inside = [i for i, o in enumerate(options) if len(line) >= 2 and line in o]
        if len(inside) == 1:
            return inside[0]
    body = "\n".join(lines)
    for pattern in (r"(?:正解|答え|回答|解答)(?:は|:|：)\s*[「『\"]?(.+?)[」』\"]?(?:です|だ|。|$)",
                    r"(?:answer is|answer:)\s*\"?(.+?)\"?(?:\.|$)"):
        for match in re.finditer(pattern, body, re.I | re.M):
            hit = _mentioned(_clean(match.group(1)), options)
            if len(hit) == 1:
                return hit[0]
    hits = _mentioned(body, options)
    if len(hits) == 1:
        return hits[0]
    first = _mentioned(lines[0], options) if lines else []
    return first[0] if len(first) == 1 else None
