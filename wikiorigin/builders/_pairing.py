"""How rated responses become preference pairs (the rule of each ``pairs`` setting, the
least gap) and how a pair is written (each ``format``); the questions' language. Used by
:mod:`~wikiorigin.builders.preference` for judged and recorded ratings alike."""

from __future__ import annotations

import math
from itertools import combinations

from ..errors import ParameterError, WikioriginError
from ..languages import language_parameter
from ..schemas import PREFERENCES, PREFERENCES_CONVERSATIONAL
from .result import BuildReport

PAIRS = {"best-worst": 0.0, "all": 2.0}
"""The pairing rules and the default ``min_gap`` of each (see the module's docstring)."""


def _plain(question: str, chosen: str, rejected: str) -> dict:
    return {"prompt": question, "chosen": chosen, "rejected": rejected}


def _conversational(question: str, chosen: str, rejected: str) -> dict:
    return {
        "prompt": [{"role": "user", "content": question}],
        "chosen": [{"role": "assistant", "content": chosen}],
        "rejected": [{"role": "assistant", "content": rejected}],
    }


FORMATS = {"standard": (PREFERENCES, _plain), "conversational": (PREFERENCES_CONVERSATIONAL, _conversational)}
"""The output formats: name -> (schema, the function that writes a pair's texts)."""


def _settings(pairs: str, min_gap: float | None, format: str) -> float:
    """The pairing's ``min_gap`` (the rule's default for None), once the arguments are checked."""
    if pairs not in PAIRS:
        raise WikioriginError(f"pairs must be one of {', '.join(PAIRS)}, not {pairs!r}")
    if format not in FORMATS:
        raise WikioriginError(f"format must be one of {', '.join(FORMATS)}, not {format!r}")
    gap = PAIRS[pairs] if min_gap is None else float(min_gap)
    if not math.isfinite(gap) or gap < 0:
        raise WikioriginError(f"min_gap must be a finite number >= 0, not {min_gap!r}")
    return gap


def _choose(responses: list[tuple], pairs: str, min_gap: float) -> list[tuple]:
    """The (chosen, rejected) pairs of one question's rated responses, each ``(model, text,
    rating)``, by the rule ``pairs``."""
    ordered = sorted(responses, key=lambda r: r[0])  # by model name: the tie rule
    if pairs == "best-worst":
        if not ordered:
            return []
        best = max(ordered, key=lambda r: r[2])  # max and min keep the first of equals
        worst = min(ordered, key=lambda r: r[2])
        gap = best[2] - worst[2]
        return [(best, worst)] if gap > 0 and gap >= min_gap else []
    return [
        (a, b) if a[2] > b[2] else (b, a)
        for a, b in combinations(ordered, 2)
        if a[2] != b[2] and abs(a[2] - b[2]) >= min_gap
    ]


def _unpaired(responses: list[tuple], min_gap: float) -> str | None:
    """Why a question's rated responses gave no pair (None when it had none rated)."""
    ratings = {r[2] for r in responses}
    if not responses:
        return None
    if len(responses) == 1:
        return "one rated response"
    if len(ratings) == 1:
        return "all ratings tied"
    return f"ratings less than min_gap {min_gap:g} apart"


def _pairs_of(report: BuildReport, question: str, row: dict, responses: list[tuple], config, gap: float, language):
    """The output rows of one question (:func:`_records`); a question rated but unpaired is
    counted in ``report.unpaired`` by why."""
    records = _records(question, row, responses, config.pairs, gap, config.format, language)
    why = None if records else _unpaired(responses, gap)
    if why:
        report.unpaired[why] = report.unpaired.get(why, 0) + 1
    return records


def _records(
    question: str, row: dict, responses: list[tuple], pairs: str, min_gap: float, format: str, language: str
) -> list[dict]:
    """The output rows of one question: its pairs, in ``format``, with CARE's columns."""
    texts = FORMATS[format][1]
    return [
        {
            **texts(question, c[1], r[1]),
            "score_chosen": c[2],
            "score_rejected": r[2],
            "culture": row.get("associated_culture"),
            "category": row.get("culture_type"),
            "language": language,
            "chosen_model": c[0],
            "rejected_model": r[0],
        }
        for c, r in _choose(responses, pairs, min_gap)
    ]


def _language(rows: list[dict], given: str | None, source) -> str:
    """The language of the questions and answers: the one given (an open Wikipedia's code),
    else the rows' own ``language`` when they all say the same; else a
    :class:`~wikiorigin.errors.ParameterError` asking for ``language=`` (CARE's files say none)."""
    if given is not None:
        return language_parameter(given)
    found = {r.get("language") for r in rows}
    if len(found) == 1 and None not in found:
        return str(found.pop())
    said = "say no language" if found <= {None} else "are in several languages"
    raise ParameterError(
        "language",
        f"{source}: the questions {said}: give {{language}} (the language of the "
        "questions and answers, written into every pair)",
    )
