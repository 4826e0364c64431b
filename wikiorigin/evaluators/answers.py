"""Reading which option a free-text answer to a multiple-choice question names.

The rules follow the judging rules YokaiEval's verdicts were made with: an answer names one
option, in any wording or format, and then it is read as that option; an answer that names
several options, or none, is no answer (``None``); a hedged answer that still names one option
counts. :func:`read_choice` returns the index and the reason (:class:`Reading`), and
:func:`parse_choice` the index alone.

How an answer is read, strongest evidence first:

0. a reasoning trace (``<think>…</think>``, gpt-oss's analysis channel, and the other markers of
   :func:`~.markup.split_reasoning`) is not the answer: what follows the trace is; a trace
   that never closes (the model ran out of tokens while reasoning) is no answer, read as
   ``truncated``, whatever option the trace names;
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

from .cues import ANSWER_CUES
from .markup import split_reasoning, strip_markup
from .mentions import _copied, _inflected, _occurrences, _paraphrase, match_key
from .scripts import (
    LABEL_TOKEN as _LABEL_TOKEN,
    ascii_digits,
    fold_greek,
    lookalike,
)

__all__ = [
    "parse_choice",
    "read_choice",
    "Reading",
    "option_labels",
    "strip_markup",
    "match_key",
    "ascii_digits",
    "PARSER_VERSION",
]

PARSER_VERSION = "5"
"""The version of the answer reader's rules; bumped when a change can turn a verdict. It is
part of every MCQ run's signature."""

# -- keys: how options and answers are compared --------------------------------------------

# -- the answer's parts --------------------------------------------------------------------

_BULLET = re.compile(r"^\s*(?:[-・*•●▪◦]+|\(?[0-9]{1,2}[).．:：、]|[0-9]{1,2}\.(?!\d))\s*")
_LABEL = re.compile(rf"^[(（\[]?({_LABEL_TOKEN})[)）\]．.:：、]?\s*(?:番目?)?\s*(?:です|だ)?[。.]?$")
_LABELLED = re.compile(rf"^\s*[(（\[]?({_LABEL_TOKEN})(?:[)）\]．.:：、]\s*|\s+)(.+)$")
# The answer cues of other languages (evaluators/cues.py) open an answer only with a colon.
_CUE_WORDS = "|".join(
    sorted(
        {
            unicodedata.normalize("NFKC", w).strip().rstrip(":：").strip()  # as answers are read
            for code, w in ANSWER_CUES.items()
            if code not in ("ja", "en")
        }
    )
)
_ZH_DECLARED = r"(?:正确|正確)?(?:答案|选项|選項)\s*(?:是|为|為)|我(?:选|選)(?:择|擇)?"  # 答案是B, 我选B
_PREFIX = re.compile(
    r"^\s*(?:(?:(?:the\s+)?(?:correct\s+)?(?:answer|option|choice)(?:\s+is)?|最終回答|正解|回答|答え|解答|選択肢)"
    rf"\s*(?:は|:|：|is)?|(?:{_CUE_WORDS})\s*(?=[:：])|{_ZH_DECLARED})\s*[:：]?\s*",
    re.I,
)
# A label declared in a sentence (Chinese: 我认为答案是B。), read when the prompt had labels.
_DECLARED_LABEL = re.compile(rf"(?:{_ZH_DECLARED})\s*[:：]?\s*[(（\[]?({_LABEL_TOKEN})(?![A-Za-z0-9])")
_CLOSING = re.compile(r"(?:です|だ|である|でしょう|と思います|が正解|が答え|だと思う)$")
_STOPS = " \t\n。．.、,!！?？"
_QUOTES = "「」『』\"'“”‘’【】《》〈〉*`"
_DECLARED = [
    re.compile(
        r"(?:正解|答え|回答|解答|正しい(?:答え|回答|選択肢|もの)?)\s*(?:は|:|：|=)\s*(.+?)(?:です|だ|である|でしょう|。|\n|$)"
    ),
    re.compile(r"([「『\"“][^「」『』\"“”\n]{1,80}[」』\"”])\s*(?:が|こそ)\s*(?:正解|答え|正しい)"),
    re.compile(r"(?:the\s+)?(?:correct\s+)?(?:answer|option|choice)\s*(?:is|:)\s*(.+?)(?:\.\s|\n|$)", re.I),
]
_QUOTED = re.compile(r"[「『\"“]([^「」『』\"“”\n]{1,80})[」』\"”]")
_SENTENCE = re.compile(r"[^。．!！?？\n]+")


def _clean(line: str) -> str:
    """A line without its bullet, answer prefix, quotes and closing words."""
    line = _BULLET.sub("", line)
    line = _PREFIX.sub("", line).strip().strip(_QUOTES).strip().rstrip(_STOPS)
    return _CLOSING.sub("", line).rstrip(_STOPS).strip().strip(_QUOTES).strip()


def _as_option(line: str, keys: list[str]) -> int | None:
    """The option a line is, as it stands or with less and less around it stripped (so that
    ``1、2刻`` and ``飛び込んだ`` keep what an option needs); None if it is none or several."""
    bare = _PREFIX.sub("", _BULLET.sub("", line)).strip().strip(_QUOTES).strip()
    for form in (line, _BULLET.sub("", line), bare, _clean(line)):
        key = match_key(form)
        if key and key in keys:
            return keys.index(key) if keys.count(key) == 1 else None
    unaccented = [fold_greek(k) for k in keys]  # Greek capitals go without accents: ΧΕΡΣΟΝΗΣΟΣ
    key = fold_greek(key)  # the last form's: the cleaned line
    return unaccented.index(key) if key and unaccented.count(key) == 1 else None


@dataclass(frozen=True, slots=True)
class Reading:
    """What an answer names: ``index`` of the option (None for none or several) and ``how``
    it was read (``exact``, ``line``, ``position``, ``declared``, ``mentioned``, ``quoted``,
    ``first-sentence``, ``paraphrase``, ``inflected``; ``empty``, ``several``, ``none`` for no
    answer; ``truncated`` for a reasoning trace that never closed, or, in
    :func:`~wikiorigin.evaluators.mcq.evaluate_generate`, a response stopped by the token
    limit)."""

    index: int | None
    how: str


# A line's label and what separates it from the option (the option is checked apart: one
# pattern for every prompt, not one compiled per option).
_LABEL_HEAD = re.compile(rf"^\s*[(（\[]?({_LABEL_TOKEN})(?:[)）\]．.:：、]\s*|\s+)", re.M)
_LINE_END = re.compile(r"\s*$", re.M)


def option_labels(prompt: str, choices: list[str]) -> list[str] | None:
    """The labels a prompt showed before its options (``["1", "2", "3", "4"]``, ``A``-``D``,
    ``①``-``④``, ``ア``-``エ``), or None when they were unlabelled (``- `` bullets) or cannot
    be told (an empty option among them)."""
    text = unicodedata.normalize("NFKC", prompt or "")
    starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
    heads = [m for m in (_LABEL_HEAD.match(text, at) for at in starts) if m]
    labels = []
    for choice in choices:
        option = unicodedata.normalize("NFKC", choice).strip()
        label = (
            None
            if not option
            else next(
                (
                    m.group(1)
                    for m in heads
                    if text.startswith(option, m.end()) and _LINE_END.match(text, m.end() + len(option))
                ),
                None,
            )
        )
        if label is None:
            return None
        labels.append(label)
    return labels if len(set(labels)) == len(labels) else None


def _position(text: str, labels) -> int | None:
    """The option a bare label names (``B``, ``(2)``, ``2番``, ``答案是B``), when the prompt had
    labels; a capital that looks like a label of another alphabet by its shape
    (:func:`.scripts.lookalike`: a Cyrillic ``В`` for ``B``)."""
    if not labels:
        return None
    match = _LABEL.match(_PREFIX.sub("", text.strip().strip(_QUOTES)).strip().strip(_QUOTES))
    if match is None:
        return None
    wanted = match.group(1).casefold()
    hits = [i for i, label in enumerate(labels) if label.casefold() == wanted]
    return hits[0] if len(hits) == 1 else (lookalike(match.group(1), list(labels)) if not hits else None)


# What denies an option (cues.DENIALS, every language's at once): before it, one short word
# (``the``, ``es``, ``η``) may come between; after it, as written (Xではない, 서울이 아니라).
def _read_lines(lines: list[str], keys: list[str], labels) -> tuple[Reading | None, list[str]]:
    """Stages 2 and 3: an answer that is an option, a shortened option or a label, whole or
    line by line. Returns the reading (None: read on) and the lines left to read."""
    per_line = [_as_option(l, keys) for l in lines]  # each worked out once, used by every stage below
    as_key = [match_key(_clean(l)) for l in lines]
    if len(lines) == 1:
        if per_line[0] is not None:
            return Reading(per_line[0], "exact"), lines
        position = _position(lines[0], labels)
        if position is not None:
            return Reading(position, "position"), lines
        whole = as_key[0]
        inside = [i for i, k in enumerate(keys) if len(whole) >= 2 and whole in k and 5 * len(whole) >= 2 * len(k)]
        if len(inside) == 1:  # a shortened option
            return Reading(inside[0], "shortened"), lines
    # an echoed option list (bulleted lines that begin with three or more of the options)
    listing = [bool(_BULLET.match(l)) and any(o and k.startswith(o) for o in keys) for l, k in zip(lines, as_key)]
    listed = {i for l, k, on in zip(lines, as_key, listing) if on for i, o in enumerate(keys) if o and k.startswith(o)}
    if len(listed) >= min(3, len(keys)):
        return None, [l for l, on in zip(lines, listing) if not on]
    named = {i for i in per_line if i is not None}
    if named:
        return (Reading(named.pop(), "line") if len(named) == 1 else Reading(None, "several")), lines
    for line in lines:
        labelled = _LABELLED.match(line)
        index = _as_option(labelled.group(2), keys) if labels and labelled else None
        position = index if index is not None else _position(line, labels)
        if position is not None:
            return Reading(position, "line" if index is not None else "position"), lines
    declared = {_position(m.group(1), labels) for m in _DECLARED_LABEL.finditer("\n".join(lines))} if labels else set()
    if len(declared) == 1 and None not in declared:
        return Reading(declared.pop(), "position"), lines
    return None, lines


def _read_text(body: str, keys: list[str], asked: str) -> Reading:
    """Stages 4 to 6: a declared answer, the options mentioned, a paraphrase."""
    for pattern in _DECLARED:
        named = {i for m in pattern.finditer(body) for i in _occurrences(match_key(m.group(1)), keys)}
        if len(named) == 1:
            return Reading(named.pop(), "declared")
    mentioned = _occurrences(match_key(body), keys, asked)
    if len(mentioned) == 1:
        return Reading(mentioned[0], "mentioned")
    quoted = {keys.index(k) for k in (match_key(m.group(1)) for m in _QUOTED.finditer(body)) if k and k in keys}
    if len(quoted) == 1:
        return Reading(quoted.pop(), "quoted")
    sentences = [k for k in (match_key(s) for s in _SENTENCE.findall(body)) if k]
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


def read_choice(response: str | None, choices: list[str], *, labels=None, question: str = "") -> Reading:
    """Which option ``response`` names (see the module's docstring for the rules). ``labels``:
    the labels the prompt put before the options (a string of one-character labels such as
    ``"ABCD"``, or a list; None for unlabelled options). With the ``question``, what the
    answer copies from it (five characters or more) is not taken as naming an option:
    ``元興寺に現れた妖怪は、鬼を…`` names 鬼, not 妖怪. The answer is what follows a
    reasoning trace; a trace that never closes is no answer (``truncated``)."""
    keys = [match_key(c) for c in choices]
    _, answer = split_reasoning(response or "")
    if answer is None:
        return Reading(None, "truncated")
    text = strip_markup(answer)
    if not text or not choices:
        return Reading(None, "empty")
    reading, lines = _read_lines([l for l in (x.strip() for x in text.splitlines()) if l], keys, labels)
    if reading is None:
        asked = match_key(question)
        reading = _read_text("\n".join(lines), keys, asked)
        if reading.how == "none":
            inflected = _inflected(match_key("\n".join(lines)), keys, asked)
            reading = reading if inflected is None else Reading(inflected, "inflected")
    return reading


def parse_choice(response: str | None, choices: list[str], *, labels=None, question: str = "") -> int | None:
    """The index of the option ``response`` names; None for no answer or several."""
    return read_choice(response, choices, labels=labels, question=question).index
