"""Reading which option a free-text answer to a multiple-choice question names.

The rules follow the judging rules YokaiEval's verdicts were made with: an answer names one
option, in any wording or format, and then it is read as that option; an answer that names
several options, or none, is no answer (``None``); a hedged answer that still names one option
counts. :func:`read_choice` returns the index and the reason (:class:`Reading`), and
:func:`parse_choice` the index alone.

How an answer is read, strongest evidence first:

1. chat markup is stripped generically: special tokens (``<|...|>``, ``<X|Y>``, ``<eos>``,
   ``</s>``, ``[/INST]``), and role markers (``ASSISTANT:``, a lone ``assistant`` or ``model``
   line, ``### 応答:``): the answer is the first assistant turn, or the text before any other
   role's turn;
2. the whole answer, or one of its lines, is an option once bullets, ``正解:``/``Answer:``
   prefixes, quotes, a closing ``です`` and punctuation are removed (an echoed option list is
   ignored);
3. a bare number or letter is a position only when the prompt labelled the options (``labels``,
   e.g. ``"1234"`` or ``"ABCD"``; :func:`option_labels` finds them in a recorded prompt); with
   unlabelled ``- `` bullets (YokaiEval's layout) ``1`` is an echo of "choose 1 answer", not
   option 1;
4. a declared answer (``正解は「X」``, ``答えはXです``, ``the answer is X``, ``「X」が正解``)
   that names one option;
5. the options the answer mentions, outside what it copies from the question: one option
   alone; else the only option quoted; else the first sentence that mentions an option, if it
   mentions exactly one;
6. a paraphrase: one option whose distinctive characters the first sentence contains almost
   all of, clearly more than any other option's (at least 80%, and 30 points ahead).

Options are compared on a key: NFKC, case-folded, numerals written as digits (``三千`` and
``3千`` are both ``3000``), without spaces and punctuation. An option that occurs only inside a
longer option that also occurs is not counted (``千年ずつ`` inside ``三千年ずつ``); two options
that match equally well give no answer.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

__all__ = ["parse_choice", "read_choice", "Reading", "option_labels", "strip_markup", "match_key",
           "PARSER_VERSION"]

# Bump when a change can turn a verdict: it is part of every run's signature.
PARSER_VERSION = "2"

# -- chat markup -------------------------------------------------------------------------

_SPECIAL = re.compile(
    r"<\|[^<>|\n]{0,40}\|>"                    # <|im_end|>, <|eot_id|>, <|endoftext|>
    r"|<[^<>|\s]{1,30}\|[^<>\n]{0,30}>"         # <EOD|LLM-jp>
    r"|</?[a-z_][a-z0-9_]{0,30}>"              # <s>, </s>, <eos>, <end_of_turn>, <start_of_turn>
    r"|<<\s*/?SYS\s*>>|\[/?INST\]"             # Llama-2 style
    , re.I)
_ASSISTANT = ("assistant", "model", "bot", "ai", "gpt", "chatbot", "response", "output",
              "アシスタント", "応答", "回答", "出力")
_OTHER = ("user", "human", "system", "instruction", "input", "ユーザー", "ユーザ", "システム", "指示", "入力")
_ROLE_WORDS = "|".join(sorted(_ASSISTANT + _OTHER, key=len, reverse=True))
# A role marker: "ROLE:" at the start of a line, a line that is only a role word, or a
# "### ROLE" heading.
_ROLE = re.compile(rf"^[ \t]*(?:#{{2,4}}[ \t]*)?({_ROLE_WORDS})[ \t]*(?:[:：][ \t]*|$)", re.I | re.M)
_HEADING = re.compile(r"^[ \t]*#{2,4}[ \t]*(?:(" + _ROLE_WORDS + r")[ \t]*[:：]?)?[ \t]*$", re.I | re.M)


def strip_markup(response: str) -> str:
    """The answer without chat-template tokens and role markers: the first assistant turn when
    the response has role markers, else the text before another role's turn."""
    text = _SPECIAL.sub("\n", unicodedata.normalize("NFKC", response or ""))
    turns, role, start = [], None, 0
    for match in _ROLE.finditer(text):
        word = match.group(1).lower()
        # "回答:" and "応答:" open an answer inline too; they are role markers only as headings
        # or alone on their line
        if word in ("回答", "応答", "出力", "response", "output") and not _alone(text, match):
            continue
        turns.append((role, text[start:match.start()]))
        role, start = ("assistant" if word in _ASSISTANT else "other"), match.end()
    turns.append((role, text[start:]))
    spoken = [t for r, t in turns if r == "assistant" and t.strip()]
    if spoken:
        return _HEADING.sub("", spoken[0]).strip()
    before = turns[0][1] if turns[0][0] is None else ""
    return _HEADING.sub("", before).strip()


def _alone(text: str, match) -> bool:
    """Whether a role word is a heading (``### 応答``) or alone on its line (not ``回答：X``)."""
    line_start = text.rfind("\n", 0, match.start()) + 1
    line_end = text.find("\n", match.end())
    rest = text[match.end():line_end if line_end >= 0 else len(text)].strip()
    return "#" in text[line_start:match.start()] or rest == ""


# -- keys: how options and answers are compared --------------------------------------------

_KANJI_DIGITS = {c: i for i, c in enumerate("〇一二三四五六七八九")} | {"零": 0, "壱": 1, "弐": 2, "参": 3}
_SMALL_UNITS = {"十": 10, "百": 100, "千": 1000}
_BIG_UNITS = {"万": 10 ** 4, "億": 10 ** 8, "兆": 10 ** 12}
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
    if len(digits) > 1 and not run.isdigit() and all(c in _KANJI_DIGITS for c in digits) and not (section or total):
        return digits  # 一九九九 read digit by digit
    return str(total + section + (int(digits) if digits else 0))


def match_key(text: str) -> str:
    """``text`` as compared: NFKC, case-folded, numerals as digits, no spaces or punctuation."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = _NUMERAL.sub(lambda m: _numeral_value(m.group()), text)
    return "".join(c for c in text if unicodedata.category(c)[0] in "LNM")


# -- the answer's parts --------------------------------------------------------------------

_BULLET = re.compile(r"^\s*(?:[-・*•●▪◦]+|\(?[0-9]{1,2}[).．:：、]|[0-9]{1,2}\.(?!\d))\s*")
_LABEL = re.compile(r"^\s*[(（\[]?([0-9]{1,2}|[A-Za-z])[)）\]．.:：、]?\s*$")
_LABELLED = re.compile(r"^\s*[(（\[]?([0-9]{1,2}|[A-Za-z])(?:[)）\]．.:：、]\s*|\s+)(.+)$")
_PREFIX = re.compile(r"^\s*(?:(?:the\s+)?(?:correct\s+)?(?:answer|option|choice)(?:\s+is)?|最終回答|正解|回答|答え|解答|選択肢)"
                     r"\s*(?:は|:|：|is)?\s*[:：]?\s*", re.I)
_CLOSING = re.compile(r"(?:です|だ|である|でしょう|と思います|が正解|が答え|だと思う)?[\s。．.、,!！?？]*$")
_QUOTES = "「」『』\"'“”‘’【】《》〈〉*`"
_DECLARED = [
    re.compile(r"(?:正解|答え|回答|解答|正しい(?:答え|回答|選択肢|もの)?)\s*(?:は|:|：|=)\s*(.+?)(?:です|だ|である|でしょう|。|\n|$)"),
    re.compile(r"([「『\"“][^「」『』\"“”\n]{1,80}[」』\"”])\s*(?:が|こそ)\s*(?:正解|答え|正しい)"),
    re.compile(r"(?:the\s+)?(?:correct\s+)?(?:answer|option|choice)\s*(?:is|:)\s*(.+?)(?:\.\s|\n|$)", re.I),
]
_QUOTED = re.compile(r"[「『\"“]([^「」『』\"“”\n]{1,80})[」』\"”]")
_SENTENCE = re.compile(r"[^。．!！?？\n]+")


def _clean(line: str) -> str:
    """A line without its bullet, answer prefix, quotes and closing words."""
    line = _BULLET.sub("", line)
    line = _PREFIX.sub("", line).strip().strip(_QUOTES).strip()
    return _CLOSING.sub("", line).strip().strip(_QUOTES).strip()


def _as_option(line: str, keys: list[str]) -> int | None:
    """The option a line is, as it stands or with less and less around it stripped (so that
    ``1、2刻`` and ``飛び込んだ`` keep what an option needs); None if it is none or several."""
    bare = _PREFIX.sub("", _BULLET.sub("", line)).strip().strip(_QUOTES).strip()
    for form in (line, _BULLET.sub("", line), bare, _clean(line)):
        key = match_key(form)
        if key in keys:
            return keys.index(key) if keys.count(key) == 1 else None
    return None


@dataclass(frozen=True, slots=True)
class Reading:
    """What an answer names: ``index`` of the option (None for none or several) and ``how``
    it was read (``exact``, ``line``, ``position``, ``declared``, ``mentioned``, ``quoted``,
    ``first-sentence``, ``paraphrase``; ``empty``, ``several``, ``none`` for no answer)."""

    index: int | None
    how: str


def option_labels(prompt: str, choices: list[str]) -> str | None:
    """The labels a prompt showed before its options (``"1234"``, ``"ABCD"``, ``"abcd"``), or
    None when they were unlabelled (``- `` bullets) or cannot be told."""
    labels = []
    for choice in choices:
        match = re.search(r"(?m)^\s*[(（\[]?([0-9]{1,2}|[A-Za-z])[)）\]．.:：、]\s*" + re.escape(choice.strip()) + r"\s*$",
                          unicodedata.normalize("NFKC", prompt or ""))
        if not match:
            return None
        labels.append(match.group(1))
    return "".join(labels) if len(set(labels)) == len(labels) else None


def _position(text: str, labels: str | None) -> int | None:
    if not labels:
        return None
    match = _LABEL.match(_PREFIX.sub("", text.strip()))
    key = match.group(1) if match else None
    if key is None:
        return None
    for candidate in (key, key.upper(), key.lower()):
        if candidate in labels:
            return labels.index(candidate)
    return None


def _occurrences(text: str, keys: list[str], question: str = "") -> list[int]:
    """Options whose key occurs in ``text`` (a key), not counting an occurrence inside an
    occurrence of a longer option, nor one inside a stretch copied from ``question``."""
    spans = {i: [(m.start(), m.start() + len(k)) for m in re.finditer(re.escape(k), text)]
             for i, k in enumerate(keys) if k}
    found = {i: s for i, s in spans.items() if s}
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
            while j < len(text) and text[i:j + 1] in question:
                j += 1
            spans.append((i, j))
            i = j
        else:
            i += 1
    return spans


def _paraphrase(sentence: str, keys: list[str]) -> int | None:
    """The option whose distinctive characters (those no other option has; at least three)
    the sentence holds almost all of, clearly more than any other option's: the answer
    rewords one option (``夜間にサギが青白く光る`` for ``サギが夜間に青白く光る``)."""
    chars = [set(k) for k in keys]
    scores = []
    for i, own in enumerate(chars):
        mine = own - set().union(*(c for j, c in enumerate(chars) if j != i))
        scores.append(sum(c in sentence for c in mine) / len(mine) if len(mine) >= 3 else 0.0)
    best = max(range(len(keys)), key=scores.__getitem__)
    rest = max((s for i, s in enumerate(scores) if i != best), default=0.0)
    return best if scores[best] >= 0.8 and rest <= scores[best] - 0.3 else None


def read_choice(response: str | None, choices: list[str], *, labels: str | None = None,
                question: str = "") -> Reading:
    """Which option ``response`` names (see the module's docstring for the rules). With the
    ``question``, what the answer copies from it (five characters or more) is not taken as
    naming an option: ``元興寺に現れた妖怪は、鬼を…`` names 鬼, not 妖怪."""
    keys = [match_key(c) for c in choices]
    text = strip_markup(response or "")
    if not text or not choices:
        return Reading(None, "empty")
    lines = [l for l in (x.strip() for x in text.splitlines()) if l]
    if len(lines) == 1:
        index = _as_option(lines[0], keys)
        if index is not None:
            return Reading(index, "exact")
        position = _position(lines[0], labels)
        if position is not None:
            return Reading(position, "position")
        whole = match_key(_clean(lines[0]))
        inside = [i for i, k in enumerate(keys) if len(whole) >= 2 and whole in k and 5 * len(whole) >= 2 * len(k)]
        if len(inside) == 1:  # a shortened option
            return Reading(inside[0], "shortened")
    # an echoed option list (bulleted lines that begin with three or more of the options)
    as_key = [match_key(_clean(l)) for l in lines]
    listed = {i for l, k in zip(lines, as_key) if _BULLET.match(l) for i, o in enumerate(keys) if o and k.startswith(o)}
    if len(listed) >= min(3, len(keys)):
        lines = [l for l, k in zip(lines, as_key) if not (_BULLET.match(l) and any(o and k.startswith(o) for o in keys))]
    else:
        named = {i for i in (_as_option(l, keys) for l in lines) if i is not None}
        if len(named) == 1:
            return Reading(named.pop(), "line")
        if len(named) > 1:
            return Reading(None, "several")
        for line in lines:
            labelled = _LABELLED.match(line)
            index = _as_option(labelled.group(2), keys) if labels and labelled else None
            if index is not None:
                return Reading(index, "line")
            position = _position(line, labels)
            if position is not None:
                return Reading(position, "position")
    body = "\n".join(lines)
    for pattern in _DECLARED:
        named = {i for m in pattern.finditer(body) for i in _occurrences(match_key(m.group(1)), keys)}
        if len(named) == 1:
            return Reading(named.pop(), "declared")
    asked = match_key(question)
    mentioned = _occurrences(match_key(body), keys, asked)
    if len(mentioned) == 1:
        return Reading(mentioned[0], "mentioned")
    quoted = {keys.index(k) for k in (match_key(m.group(1)) for m in _QUOTED.finditer(body)) if k in keys}
    if len(quoted) == 1:
        return Reading(quoted.pop(), "quoted")
    sentences = [match_key(s) for s in _SENTENCE.findall(body)]
    sentences = [s for s in sentences if s]
    if mentioned:
        for sentence in sentences:
            here = _occurrences(sentence, keys, asked)
            if here:
                return Reading(here[0], "first-sentence") if len(here) == 1 else Reading(None, "several")
    if sentences:
        first = sentences[0]
        for a, b in reversed(_copied(first, asked)):  # what restates the question paraphrases nothing
            first = first[:a] + "\x00" + first[b:]
        guess = _paraphrase(first, keys)
        if guess is not None:
            return Reading(guess, "paraphrase")
    return Reading(None, "several" if mentioned else "none")


def parse_choice(response: str | None, choices: list[str], *, labels: str | None = None,
                 question: str = "") -> int | None:
    """The index of the option ``response`` names; None for no answer or several."""
    return read_choice(response, choices, labels=labels, question=question).index
