"""CARE-style preference pairs in TRL's format (``prompt``, ``chosen``, ``rejected``), made
two ways:

- :func:`build_rated_preferences`: from people's ratings of recorded responses (CARE's
  released annotations, read by :func:`~wikiorigin.care.read_rated`). No model is called, and
  a pair's chosen and rejected texts are the very responses that were rated.
- :func:`build_preferences`: several models answer the questions now and CARE's judge
  (:mod:`wikiorigin.care`, a rubric per CARE category) rates each answer 1-10.

Which responses become pairs (``pairs``), per question:

- ``"best-worst"`` (default, CARE's rule): the highest-rated response against the
  lowest-rated one. Among responses with the same rating, the one whose model name sorts
  first (Python's string order) is taken, for the best and for the worst alike. A question
  whose best and worst ratings are equal, or whose gap is under ``min_gap``, gives no pair.
- ``"all"``: every two responses whose ratings differ by ``min_gap`` or more (default 2).

Two ratings that are equal never make a pair. ``format="conversational"`` writes
``prompt``, ``chosen`` and ``rejected`` as lists of chat messages
(:data:`~wikiorigin.schemas.PREFERENCES_CONVERSATIONAL`), so a trainer applies the chat
template; ``"standard"`` (default) writes them as strings
(:data:`~wikiorigin.schemas.PREFERENCES`).
"""

from __future__ import annotations

import json
import math
from itertools import combinations
from typing import TYPE_CHECKING

import pyarrow as pa

from ..care import JUDGE_PARAMS, JUDGE_SHA1, parse_rating, question_key, rating_request, read_care, read_rated
from ..errors import WikioriginError
from ..files import check_output, provenance, write_together
from ..schemas import FAILED, PREFERENCES, PREFERENCES_CONVERSATIONAL

if TYPE_CHECKING:  # the rated path loads no LLM client
    from ..llm import ChatRequest, LLMClient

__all__ = ["build_preferences", "build_rated_preferences", "plan_preferences", "ANSWER_PARAMS", "PAIRS", "FORMATS"]

ANSWER_PARAMS = {"temperature": 0.7, "top_p": 1.0, "max_tokens": 1024}
"""The default sampling of the responders' answers: CARE's (temperature 0.7, top-p 1.0, at
most 1,024 output tokens)."""
PAIRS = {"best-worst": 0.0, "all": 2.0}
"""The pairing rules and the default ``min_gap`` of each (see the module's docstring)."""


def _plain(question: str, chosen: str, rejected: str) -> dict:
    return {"prompt": question, "chosen": chosen, "rejected": rejected}


def _conversational(question: str, chosen: str, rejected: str) -> dict:
    return {"prompt": [{"role": "user", "content": question}],
            "chosen": [{"role": "assistant", "content": chosen}],
            "rejected": [{"role": "assistant", "content": rejected}]}


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
    return [(a, b) if a[2] > b[2] else (b, a) for a, b in combinations(ordered, 2)
            if a[2] != b[2] and abs(a[2] - b[2]) >= min_gap]


def _records(question: str, row: dict, responses: list[tuple], pairs: str, min_gap: float,
             format: str, language: str) -> list[dict]:
    """The output rows of one question: its pairs, in ``format``, with CARE's columns."""
    texts = FORMATS[format][1]
    return [{**texts(question, c[1], r[1]), "score_chosen": c[2], "score_rejected": r[2],
             "culture": row.get("associated_culture"), "category": row.get("culture_type"),
             "language": language, "chosen_model": c[0], "rejected_model": r[0]}
            for c, r in _choose(responses, pairs, min_gap)]


def _write(out, format: str, records: list[dict], failures: list[dict], meta: dict) -> None:
    """The pairs and the failed rows, written together or not at all."""
    schema = FORMATS[format][0]
    write_together([(out, pa.Table.from_pylist(records, schema=schema), schema, meta),
                    (str(out).removesuffix(".parquet") + ".failed.parquet",
                     pa.Table.from_pylist(failures, schema=FAILED), FAILED, meta)])


def _failure(question: str, model: str, step: str, reason: str, item: dict | None = None) -> dict:
    """A row of the ``FAILED`` schema: the question is its source, the response its item."""
    return {"step": step, "reason": reason, "source": question, "model": model,
            "item": None if item is None else json.dumps(item, ensure_ascii=False)}


# --- pairs from rated responses: no model ------------------------------------------------------

def build_rated_preferences(questions, rated, out, *, pairs: str = "best-worst", min_gap: float | None = None,
                            format: str = "standard", language: str = "ja") -> dict:
    """Pairs into ``out`` from the rated responses in ``rated`` (JSON, JSON Lines, CSV or
    Parquet with ``question``, ``model``, ``response``, ``rating``: see
    :func:`~wikiorigin.care.read_rated`), calling no model: chosen and rejected are the rated
    response texts. ``questions`` (a CARE file) gives each question's culture and category,
    and chooses the questions: a rated question not in it is left out, counted
    (``unmatched_questions``) and listed with its responses in ``<out>.failed.parquet``
    (step ``match``); when none is in it, or the rated file has a bad row, a
    :class:`~wikiorigin.errors.WikioriginError` is raised before anything is written.
    ``pairs``, ``min_gap`` and ``format``: see the module. Returns counts (questions: rated
    and matched, responses: theirs, unmatched_questions, pairs)."""
    gap = _settings(pairs, min_gap, format)
    known = {}
    for row in read_care(questions):
        known.setdefault(question_key(row["question"]), row)
    responses = read_rated(rated)
    check_output(out, inputs=[questions, rated])
    grouped: dict[str, tuple[str, list]] = {}
    failures, unmatched = [], set()
    for r in responses:
        key = question_key(r["question"])
        if key not in known:
            unmatched.add(key)
            failures.append(_failure(r["question"], r["model"], "match", f"question not in {questions}",
                                     {"response": r["response"], "rating": r["rating"], "row": r["row"]}))
            continue
        grouped.setdefault(key, (r["question"], []))[1].append((r["model"], r["response"], r["rating"]))
    if not grouped:
        raise WikioriginError(f"{rated}: none of its {len(unmatched)} questions is in {questions} "
                              f"(the first: {responses[0]['question'][:40]!r})")
    records = [rec for key, (question, rs) in grouped.items()
               for rec in _records(question, known[key], rs, pairs, gap, format, language)]
    meta = provenance(stage="build", builder="preference", questions=str(questions), rated=str(rated),
                      ratings="recorded", pairs=pairs, min_gap=gap, format=format,
                      responders=sorted({r["model"] for r in responses}), judge=None, judge_prompt_sha1=None,
                      answer_params=None, judge_params=None, usage={})
    _write(out, format, records, failures, meta)
    return {"questions": len(grouped), "responses": sum(len(rs) for _, rs in grouped.values()),
            "unmatched_questions": len(unmatched), "pairs": len(records)}


# --- pairs from models' answers rated by the judge ---------------------------------------------

def _answer_request(row: dict, params: dict) -> ChatRequest:
    """The request that asks a responder to answer the CARE ``row``'s question."""
    from ..llm import ChatRequest

    return ChatRequest([{"role": "user", "content": row["question"]}], dict(params), "care-answer")


def _rate(rows: list[dict], answers: dict, judge: LLMClient, params: dict, counts: dict,
          failures: list[dict]) -> dict:
    """``{(row index, model): rating}`` by the judge; failed answers and unreadable ratings
    go to ``failures``."""
    scores, to_judge = {}, []
    for name, results in answers.items():
        for i, (row, result) in enumerate(zip(rows, results)):
            if result.error:
                counts["answer_errors"] += 1
                failures.append(_failure(row["question"], name, "answer", result.error))
            else:
                to_judge.append((i, name, result.text))
    verdicts = judge.run([rating_request(rows[i], text, params) for i, _, text in to_judge]) if to_judge else []
    for (i, name, text), verdict in zip(to_judge, verdicts):
        rating, reason = (None, verdict.error) if verdict.error else parse_rating(verdict.text)
        if rating is None:
            counts["judge_errors"] += 1
            failures.append(_failure(rows[i]["question"], name, "judge",
                                     reason if verdict.error else f"unreadable rating ({reason})", {"response": text}))
        else:
            scores[(i, name)] = float(rating)
    return scores


def build_preferences(questions, out, responders: dict[str, LLMClient], judge: LLMClient, *,
                      pairs: str = "best-worst", min_gap: float | None = None, format: str = "standard",
                      language: str = "ja", answer_params: dict | None = None,
                      judge_params: dict | None = None, preset: str | None = None) -> dict:
    """Pairs into ``out``: each of ``responders`` (name -> client) answers every question of
    ``questions`` (sampled with ``answer_params``, default :data:`ANSWER_PARAMS`), ``judge``
    rates each answer (sampled with ``judge_params``, default
    :data:`~wikiorigin.care.JUDGE_PARAMS`); answers or ratings that failed go to
    ``<out>.failed.parquet``. ``pairs``, ``min_gap`` and ``format``: see the module. The
    sampling, rule, judge's prompt hash and ``preset`` (a name,
    :mod:`~wikiorigin.builders.presets`) are in the output's provenance. Returns counts
    (questions, answer_errors, judge_errors, pairs)."""
    gap = _settings(pairs, min_gap, format)
    answer_params = dict(ANSWER_PARAMS if answer_params is None else answer_params)
    judge_params = dict(JUDGE_PARAMS if judge_params is None else judge_params)
    rows = read_care(questions)
    check_output(out, inputs=[questions])  # before any answer is paid for
    answers = {name: client.run([_answer_request(r, answer_params) for r in rows])
               for name, client in responders.items()}
    counts, failures = {"questions": len(rows), "answer_errors": 0, "judge_errors": 0}, []
    scores = _rate(rows, answers, judge, judge_params, counts, failures)
    records = []
    for i, row in enumerate(rows):
        rated = [(name, answers[name][i].text, scores[(i, name)]) for name in answers if (i, name) in scores]
        records += _records(row["question"], row, rated, pairs, gap, format, language)
    counts["pairs"] = len(records)
    usage = {name: client.usage.as_dict() for name, client in responders.items()}
    usage["judge"] = judge.usage.as_dict()
    meta = provenance(stage="build", builder="preference", questions=str(questions), rated=None, ratings="judge",
                      pairs=pairs, min_gap=gap, format=format, responders=sorted(responders),
                      judge=judge.backend.model, judge_prompt_sha1=JUDGE_SHA1, answer_params=answer_params,
                      judge_params=judge_params, usage=usage, preset=preset,
                      llm={"judge": judge.settings(), **{name: c.settings() for name, c in responders.items()}})
    _write(out, format, records, failures, meta)
    return counts


def plan_preferences(questions, responders: dict[str, LLMClient], *, answer_params: dict | None = None) -> dict:
    """A dry run: the answer calls (sampled with ``answer_params``, default
    :data:`ANSWER_PARAMS`) not in the cache and their input tokens; each answer then costs
    one judge call."""
    rows = read_care(questions)
    params = ANSWER_PARAMS if answer_params is None else answer_params
    plans = [client.dry_run([_answer_request(r, params) for r in rows]) for client in responders.values()]
    return {"requests": sum(p["requests"] for p in plans), "calls": sum(p["calls"] for p in plans),
            "input_tokens": sum(p["input_tokens"] for p in plans),
            "later_calls_at_most": len(rows) * len(responders)}
