"""CARE and its judge: the question files, a rubric per CARE category, and the LLM judge that
rates an answer 1-10 against the reference answer. One judge for the whole package: the
preference builder (:mod:`wikiorigin.builders.preference`) rates answers with it to choose
pairs, the judge evaluator (:mod:`wikiorigin.evaluators.judge`) to score a model.

The judge sees the question, the reference answer written by a person of the culture, the
rubric of the question's category and the answer to grade; it explains briefly and ends with
``Rating: [[n]]``, the format of CARE's published judge outputs, so our ratings and theirs are
read by one parser. :func:`parse_rating` reads that line and its common variants; a rating that
is missing, out of 1-10 or given twice with different values is unreadable, never guessed.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata

from .errors import WikioriginError
from .files import read_rows

__all__ = ["read_care", "judge_messages", "rating_request", "parse_rating", "RUBRICS", "DEFAULT_RUBRIC",
           "JUDGE_PROMPT", "JUDGE_VERSION", "JUDGE_PARAMS", "JUDGE_RULES", "JUDGE_SHA1"]

# What matters for each CARE category (``culture_type``), in our words.
RUBRICS = {
    "Cultural entities": "Is the named person, place, work or thing the right one, with correct facts about it?",
    "Opinion": "Does it reflect the views commonly held in this culture, fairly and without stereotypes?",
    "Social norms": "Does it describe the norms, manners and customs of this culture accurately?",
    "Cultural commonsense": "Is the everyday knowledge that people of this culture share stated correctly?",
    "Literacy": "Is the knowledge of this culture's literature, language and writing correct?",
}
"""What matters for each CARE category (``culture_type``), in our words: category -> rubric."""
DEFAULT_RUBRIC = "Is it correct and fitting for this culture?"
"""The rubric of a category that :data:`RUBRICS` does not name."""

JUDGE_PROMPT = (
    "task: rate\n"
    "You are grading an answer to a question about a culture ({culture}). A person of that "
    "culture wrote the reference answer. What matters for this kind of question ({category}): "
    "{rubric} Weigh, in this order: agreement with the reference on the facts, fit to the "
    "culture, helpfulness, clarity. An answer may differ in wording or add correct detail; "
    "wrong facts or stereotypes cost the most.\n"
    "Explain your grade in two or three sentences, then give it on the last line exactly as "
    "`Rating: [[n]]`, n an integer from 1 (wrong or harmful) to 10 (as good as the reference "
    "or better)."
)
"""The judge's instructions, a format string with ``{culture}``, ``{category}`` and
``{rubric}``; the judge answers ``Rating: [[n]]`` (read by :func:`parse_rating`)."""
# The request cache's version of a rating request, and its sampling.
JUDGE_VERSION = "care-rate"
"""The request cache's prompt version of a rating request."""
JUDGE_PARAMS = {"temperature": 0}
"""The sampling of a rating request (greedy)."""
# Everything that changes a rating but the models, and its hash: a preference file's provenance
# carries the hash, a judged run's signature its first 8 digits (``jprompt``).
JUDGE_RULES = JUDGE_PROMPT + json.dumps([RUBRICS, DEFAULT_RUBRIC], sort_keys=True, ensure_ascii=False)
"""Everything that changes a rating but the models: the prompt and the rubrics."""
JUDGE_SHA1 = hashlib.sha1(JUDGE_RULES.encode("utf-8")).hexdigest()
"""The SHA-1 of :data:`JUDGE_RULES`: a preference file's provenance carries it, a judged
run's signature its first 8 digits (``jprompt``)."""


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


def judge_messages(row: dict, answer: str) -> list[dict]:
    """The chat that asks the judge to rate ``answer`` to the CARE ``row``: the instructions
    with the rubric of the row's category, then the question, reference and answer."""
    category = row.get("culture_type") or ""
    system = JUDGE_PROMPT.format(culture=row.get("associated_culture") or "unspecified",
                                 category=category or "general", rubric=RUBRICS.get(category, DEFAULT_RUBRIC))
    user = f"Question: {row['question']}\n\nReference answer: {row['answer']}\n\nAnswer to grade: {answer}"
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def rating_request(row: dict, answer: str):
    """:func:`judge_messages` as a :class:`~wikiorigin.llm.ChatRequest` (greedy, free text:
    read the reply with :func:`parse_rating`)."""
    from .llm import ChatRequest

    return ChatRequest(judge_messages(row, answer), dict(JUDGE_PARAMS), JUDGE_VERSION)


_BRACKETED = re.compile(r"\[\[\s*(-?\d+(?:\.\d+)?)\s*(?:/\s*10\s*)?\]\]")
_LABELLED = re.compile(r"(?:rating|score|評価|得点|スコア)\s*[:：]?\s*\**\s*\[?\s*(-?\d+(?:\.\d+)?)\s*(?:/\s*10)?",
                       re.I)


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
