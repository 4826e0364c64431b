"""CARE and its judge: the question files, the rated-response files, a rubric per CARE
category, and the LLM judge that rates an answer 1-10 against the reference answer. One judge
for the whole package: the preference builder (:mod:`wikiorigin.builders.preference`) rates
answers with it to choose pairs, the judge evaluator (:mod:`wikiorigin.evaluators.judge`) to
score a model.

The judge sees the question, the reference answer written by a person of the culture, the
rubric of the question's category (what each band of 1-10 means for it) and the answer to
grade; it explains briefly and ends with ``Rating: [[n]]``, the format of CARE's published
judge outputs, so our ratings and theirs are read by one parser. :func:`parse_rating` reads
that line and its common variants; a rating that is missing, out of 1-10 or given twice with
different values is unreadable, never guessed. It samples as CARE's responders did
(:data:`JUDGE_PARAMS`: temperature 0.7, top-p 1.0, at most 1,024 output tokens; CARE gives no
sampling for its judge). The rubrics follow CARE's five two-point bands (:data:`BANDS`) and its
criteria, relevance counting unneeded information against an answer; the words are ours.

:func:`read_rated` reads people's ratings of recorded responses (CARE's released annotations
reshaped to one row per rated response: ``question``, ``model``, ``response``, ``rating``).
"""

from __future__ import annotations

import csv
import hashlib
import json
import lzma
import math
import re
import unicodedata
from pathlib import Path

from .errors import ParameterError, WikioriginError
from .files import read_rows

__all__ = [
    "read_care",
    "read_rated",
    "question_key",
    "judge_messages",
    "rating_request",
    "parse_rating",
    "RUBRICS",
    "BANDS",
    "DEFAULT_RUBRIC",
    "RATED_FIELDS",
    "RATING_SCALE",
    "JUDGE_PROMPT",
    "JUDGE_VERSION",
    "JUDGE_PARAMS",
    "JUDGE_RULES",
    "JUDGE_SHA1",
]


BANDS = ("1-2", "3-4", "5-6", "7-8", "9-10")
"""The score bands of every rubric: CARE's five two-point bands of its 1-10 scale."""


def _bands(focus: str, *meanings: str) -> str:
    """A category's rubric: what to look at, then what each of the five bands means."""
    return focus + "".join(f"\n{band}: {text}" for band, text in zip(BANDS, meanings, strict=True))


# What matters for each CARE category (``culture_type``) and what each score band means, in our words.
RUBRICS = {
    "Cultural entities": _bands(
        "Look at whether the person, place, work, food or event named is the one asked about, and whether "
        "what is said of it is true.",
        "the wrong entity, false facts about it, or no real answer.",
        "an entity near the one asked about, or the right one with most of what is said of it wrong.",
        "the right entity, but a fact asked about is wrong or missing, or several candidates are offered "
        "without choosing.",
        "the right entity with correct facts; a small omission, or some detail the question did not need.",
        "the right entity, every fact asked about correct, told as plainly as the question needs.",
    ),
    "Opinion": _bands(
        "Look at whether the answer reports the views that people of this culture commonly hold, and "
        "reports them fairly.",
        "a view alien to the culture, or a stereotype.",
        "one narrow opinion passed off as everyone's, or a view from outside the culture.",
        "near the common view but generic enough to fit any culture, or claiming more agreement than there is.",
        "the commonly held views, stated fairly; little on where people differ, or more than was asked.",
        "the views of the reference and where people differ (by region, age or group), no stereotype, "
        "nothing the question did not ask for.",
    ),
    "Social norms": _bands(
        "Look at whether the manners, etiquette, customs and taboos described are the ones this culture "
        "actually observes.",
        "a norm described wrongly, or advice that would give offence in this culture.",
        "a norm of another culture, or the main point wrong.",
        "the main point right, but details wrong, missing or borrowed from another culture.",
        "the norm and how it is practised described correctly; little on exceptions, or padded.",
        "what is done, when and why, correct and to the point, with the exceptions a member of the "
        "culture would mention.",
    ),
    "Cultural commonsense": _bands(
        "Look at whether the everyday knowledge that people of this culture share (daily life, seasons, "
        "habits, common practice) is stated correctly.",
        "wrong about what people there take for granted.",
        "an answer from another culture's daily life, or mostly wrong.",
        "broadly true but vague, partly wrong, or beside the point of the question.",
        "correct, what a local would say; small gaps, or detail the question did not need.",
        "correct and specific, as a well-informed local would put it, with nothing beside the point.",
    ),
    "Literacy": _bands(
        "Look at whether what is said of the culture's literature, language, writing, idioms and sayings is correct.",
        "an invented work, quotation, reading or origin.",
        "the wrong work, author, reading or meaning.",
        "the right work or expression but a wrong detail, meaning or usage.",
        "correct meaning, source and usage; a small omission, or more than was asked.",
        "correct and precise, with the usage or background the reference gives and nothing extra.",
    ),
}
"""Each CARE category (``culture_type``) -> its rubric, in our words: what to look at, then
what each of CARE's five bands (:data:`BANDS`: 1-2, 3-4, 5-6, 7-8, 9-10) means for it."""
DEFAULT_RUBRIC = _bands(
    "Look at whether the answer is correct and fits this culture.",
    "wrong, or harmful.",
    "mostly wrong, or beside the question.",
    "partly correct, with errors or large gaps.",
    "correct and fitting the culture; small gaps, or detail the question did not need.",
    "correct, fitting and to the point, as good as the reference.",
)
"""The rubric of a category that :data:`RUBRICS` does not name (the same bands, in general terms)."""

JUDGE_PROMPT = (
    "task: rate\n"
    "You grade an answer to a question about a culture ({culture}). The reference answer was written "
    "by a person of that culture. Judge four things: accuracy (does the answer agree with the reference "
    "on the facts), cultural fit (does it fit the culture, without stereotypes), relevance (does it answer "
    "what was asked, and only that: information the question did not ask for lowers the grade, it earns "
    "nothing) and clarity. The answer may be worded differently from the reference; wrong facts and "
    "stereotypes cost the most.\n"
    "How to grade this kind of question ({category}):\n"
    "{rubric}\n"
    "Explain your grade in two or three sentences, then give it on the last line exactly as "
    "`Rating: [[n]]`, n an integer from 1 to 10."
)
"""The judge's instructions, a format string with ``{culture}``, ``{category}`` and
``{rubric}``; the judge answers ``Rating: [[n]]`` (read by :func:`parse_rating`)."""
JUDGE_VERSION = "care-rate"
"""The request cache's prompt version of a rating request."""
JUDGE_PARAMS = {"temperature": 0.7, "top_p": 1.0, "max_tokens": 1024}
"""The default sampling of a rating request: temperature 0.7, top-p 1.0, at most 1,024 output
tokens. CARE gives these for the open models it ran with vLLM (its responders), not for its
judge: using them for the judge is our choice. :func:`rating_request` takes other settings."""
# Everything that changes a rating but the models and the sampling, and its hash: a preference
# file's provenance carries the hash, a judged run's signature its first 8 digits (``jprompt``).
JUDGE_RULES = JUDGE_PROMPT + json.dumps([RUBRICS, DEFAULT_RUBRIC], sort_keys=True, ensure_ascii=False)
"""Everything that changes a rating but the models and the sampling: the prompt and the rubrics."""
JUDGE_SHA1 = hashlib.sha1(JUDGE_RULES.encode("utf-8")).hexdigest()
"""The SHA-1 of :data:`JUDGE_RULES`: a preference file's provenance carries it, a judged
run's signature its first 8 digits (``jprompt``)."""
RATED_FIELDS = ("question", "model", "response", "rating")
"""The fields of a rated-response file (:func:`read_rated`); other fields are ignored."""


def read_care(path) -> list[dict]:
    """CARE test rows (``question``, ``answer`` = the reference, ``culture_type``,
    ``associated_culture``), from the released JSON or a Parquet/JSON of the same fields;
    a ``response`` field, where present, is a recorded answer to be rated. A row without a
    question or reference answer is a :class:`~wikiorigin.errors.WikioriginError` naming the
    file and row."""
    rows = read_rows(path)
    for i, row in enumerate(rows):
        if not isinstance(row, dict) or not row.get("question") or not row.get("answer"):
            raise WikioriginError(f"{path}: row {i} has no question or no reference answer")
    return rows


def question_key(text: str) -> str:
    """How a question is matched between files: Unicode NFC with the outer whitespace
    stripped (an editor or a CSV export may change either)."""
    return unicodedata.normalize("NFC", text).strip()


RATING_SCALE = (1.0, 10.0)
"""CARE's rating scale, 1 to 10: its judge's and its people's."""


def read_rated(path, scale: tuple[float, float] | None = RATING_SCALE) -> list[dict]:
    """Rated responses, one dict per row (``question``, ``model``, ``response``, ``rating`` a
    float, ``row``), from JSON (a list of objects), JSON Lines (``.jsonl``, ``.ndjson``, or
    one object a line under ``.json``), CSV (a header line) or Parquet; ``.xz`` compressed
    too. Rows are numbered from 1, a CSV's header not counted. A missing field, a rating that
    is not a finite number, an empty question, model or response, or a second rating of one
    model on one question (questions compared by :func:`question_key`) is a one-line
    :class:`~wikiorigin.errors.WikioriginError` naming the file and row; so is a rating outside
    ``scale`` (lowest, highest; default CARE's 1-10, :data:`RATING_SCALE`; None: any), a
    :class:`~wikiorigin.errors.ParameterError` naming ``rating_scale``."""
    rows: list[dict] = []
    first: dict = {}
    for n, record in enumerate(_records(Path(path)), 1):
        where = f"{path}: row {n}"
        if not isinstance(record, dict):
            raise WikioriginError(f"{where}: not an object with the fields {', '.join(RATED_FIELDS)}")
        for name in ("question", "model", "response"):
            _check_text(record.get(name), name, where)
        rating = _rating(record.get("rating"), where)
        if scale is not None and not scale[0] <= rating <= scale[1]:
            raise ParameterError(
                "rating_scale",
                f"{where}: rating {rating:g} is outside the rating scale {scale[0]:g}-{scale[1]:g} "
                "(give {rating_scale} for ratings on another scale)",
            )
        key = (question_key(record["question"]), record["model"].strip())
        if key in first:
            raise WikioriginError(
                f"{where}: a second rating of model {key[1]!r} on one question (the first: row {first[key]})"
            )
        first[key] = n
        rows.append(
            {
                "question": record["question"],
                "model": key[1],
                "response": record["response"],
                "rating": rating,
                "row": n,
            }
        )
    if not rows:
        raise WikioriginError(f"{path}: no rated responses")
    return rows


def _check_text(value, name: str, where: str) -> None:
    if value is None:
        raise WikioriginError(f"{where}: no {name} (the fields: {', '.join(RATED_FIELDS)})")
    if not isinstance(value, str):
        raise WikioriginError(f"{where}: {name} {value!r} is not text")
    if not value.strip():
        raise WikioriginError(f"{where}: empty {name}")


def _rating(value, where: str) -> float:
    """A rating as a finite float; a bool, a word or NaN is an error naming ``where``."""
    if value is None:
        raise WikioriginError(f"{where}: no rating (the fields: {', '.join(RATED_FIELDS)})")
    if isinstance(value, str) and not value.strip():
        raise WikioriginError(f"{where}: empty rating")
    try:
        number = None if isinstance(value, bool) else float(value)
    except (TypeError, ValueError):
        number = None
    if number is None:
        raise WikioriginError(f"{where}: rating {value!r} is not a number")
    if not math.isfinite(number):
        raise WikioriginError(f"{where}: rating {value!r} is not a finite number")
    return number


def _records(path: Path) -> list:
    """The records of a rated file, by its name's ending (before ``.xz``)."""
    kind = path.name.removesuffix(".xz").rsplit(".", 1)[-1].lower()
    if not path.exists():
        raise WikioriginError(f"{path}: no such file")
    if kind == "parquet":
        return read_rows(path, list(RATED_FIELDS))
    opener = lzma.open if path.suffix == ".xz" else open
    try:
        with opener(path, "rt", encoding="utf-8-sig", newline="") as f:
            if kind == "csv":
                return list(csv.DictReader(f))
            text = f.read()
    except (UnicodeDecodeError, lzma.LZMAError, EOFError, csv.Error) as exc:
        raise WikioriginError(f"{path}: unreadable ({str(exc).splitlines()[0]})") from None
    return _json_records(path, text, lines=kind in ("jsonl", "ndjson"))


def _json_records(path: Path, text: str, lines: bool) -> list:
    """A JSON list of objects (a ``{"data": [...]}`` wrapper opened), or JSON Lines."""
    if not lines:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            if exc.msg != "Extra data":  # "Extra data": one object a line under a .json name
                raise WikioriginError(f"{path}: not JSON ({exc})") from None
            lines = True
    if lines:
        data = []
        for n, line in enumerate(text.splitlines(), 1):
            try:
                data += [json.loads(line)] if line.strip() else []
            except json.JSONDecodeError as exc:
                raise WikioriginError(f"{path}: line {n}: not JSON ({exc.msg})") from None
        return data
    if isinstance(data, dict):
        data = data.get("data") or data.get("rows") or [data]
    if not isinstance(data, list):
        raise WikioriginError(f"{path}: expected a list of objects, or JSON Lines")
    return data


def judge_messages(row: dict, answer: str) -> list[dict]:
    """The chat that asks the judge to rate ``answer`` to the CARE ``row``: the instructions
    with the rubric of the row's category, then the question, reference and answer."""
    category = row.get("culture_type") or ""
    system = JUDGE_PROMPT.format(
        culture=row.get("associated_culture") or "unspecified",
        category=category or "general",
        rubric=RUBRICS.get(category, DEFAULT_RUBRIC),
    )
    user = f"Question: {row['question']}\n\nReference answer: {row['answer']}\n\nAnswer to grade: {answer}"
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def rating_request(row: dict, answer: str, params: dict | None = None):
    """:func:`judge_messages` as a :class:`~wikiorigin.llm.ChatRequest` sampled with ``params``
    (default :data:`JUDGE_PARAMS`, CARE's), free text: read the reply with :func:`parse_rating`."""
    from .llm import ChatRequest

    return ChatRequest(judge_messages(row, answer), dict(JUDGE_PARAMS if params is None else params), JUDGE_VERSION)


_BRACKETED = re.compile(r"\[\[\s*(-?\d+(?:\.\d+)?)\s*(?:/\s*10\s*)?\]\]")
_LABELLED = re.compile(
    r"(?:rating|score|評価|得点|スコア)\s*[:：]?\s*\**\s*\[?\s*(-?\d+(?:\.\d+)?)\s*(?:/\s*10)?", re.I
)


def parse_rating(text: str | None) -> tuple[float | None, str | None]:
    """``(rating, None)``, or ``(None, reason)`` with reason ``missing``, ``out of range`` or
    ``several ratings``. Reads ``Rating: [[7]]``, ``[[7/10]]``, ``**Rating:** 7``,
    ``評価：[[8]]``, full-width digits; an integral rating comes back as an ``int``."""
    if not text:
        return None, "missing"
    text = unicodedata.normalize("NFKC", text)
    found = _BRACKETED.findall(text) or _LABELLED.findall(text)
    values = {float(v) for v in found}
    if not values:
        return None, "missing"
    if len(values) > 1:
        return None, "several ratings"
    value = values.pop()
    if not 1 <= value <= 10:
        return None, "out of range"
    return (int(value) if value.is_integer() else value), None
