"""CARE-style preference pairs: several models answer culture questions, each answer is rated
1-10 against the reference (CARE's judge, :mod:`wikiorigin.care`, with a rubric per CARE
category; or imported human ratings), and answers whose scores differ by at least ``min_gap``
become chosen/rejected pairs in TRL's format (``prompt``, ``chosen``, ``rejected``)."""

from __future__ import annotations

import json
from itertools import combinations

import pyarrow as pa

from ..care import JUDGE_SHA1, parse_rating, rating_request, read_care
from ..errors import WikioriginError
from ..files import ParquetSink, check_output, provenance
from ..llm import ChatRequest, LLMClient
from ..schemas import FAILED, PREFERENCES

__all__ = ["build_preferences", "plan_preferences"]

ANSWER_PARAMS = {"temperature": 0.7}


def _answer_request(row: dict) -> ChatRequest:
    """The request that asks a responder to answer the CARE ``row``'s question."""
    return ChatRequest([{"role": "user", "content": row["question"]}], dict(ANSWER_PARAMS), "care-answer")


def _failure(row: dict, model: str, step: str, reason: str, answer: str | None = None) -> dict:
    """A row of the ``FAILED`` schema: the question is its source, the answer its item."""
    return {"step": step, "reason": reason, "source": row["question"], "model": model,
            "item": None if answer is None else json.dumps({"response": answer}, ensure_ascii=False)}


def _rate(rows: list[dict], answers: dict, judge: LLMClient | None, ratings: dict | None,
          counts: dict, failures: list[dict]) -> dict:
    """``{(question, model): score}``: a human rating where ``ratings`` has one, else the
    judge's (``judge`` is None only when ``ratings`` covers every answer: checked before any
    answer is paid for); failed answers and unreadable ratings go to ``failures``."""
    scores, to_judge = {}, []
    for name, results in answers.items():
        for row, result in zip(rows, results):
            if result.error:
                counts["answer_errors"] += 1
                failures.append(_failure(row, name, "answer", result.error))
            elif ratings and (row["question"], name) in ratings:
                scores[(row["question"], name)] = float(ratings[(row["question"], name)])
            else:
                to_judge.append((row, name, result.text))
    verdicts = judge.run([rating_request(row, text) for row, _, text in to_judge]) if to_judge else []
    for (row, name, text), verdict in zip(to_judge, verdicts):
        rating, reason = (None, verdict.error) if verdict.error else parse_rating(verdict.text)
        if rating is None:
            counts["judge_errors"] += 1
            failures.append(_failure(row, name, "judge", reason if verdict.error else f"unreadable rating ({reason})",
                                     text))
        else:
            scores[(row["question"], name)] = float(rating)
    return scores


def _pairs(rows: list[dict], answers: dict, scores: dict, min_gap: float, language: str) -> list[dict]:
    """Every two rated answers to a question whose scores differ by ``min_gap`` or more."""
    pairs = []
    for i, row in enumerate(rows):
        rated = [(name, answers[name][i].text, scores[(row["question"], name)])
                 for name in answers if (row["question"], name) in scores]
        for (a, ta, sa), (b, tb, sb) in combinations(rated, 2):
            if abs(sa - sb) >= min_gap:
                (cm, ct, cs), (rm, rt, rs) = ((a, ta, sa), (b, tb, sb)) if sa > sb else ((b, tb, sb), (a, ta, sa))
                pairs.append({"prompt": row["question"], "chosen": ct, "rejected": rt,
                              "score_chosen": cs, "score_rejected": rs,
                              "culture": row.get("associated_culture"), "category": row.get("culture_type"),
                              "language": language, "chosen_model": cm, "rejected_model": rm})
    return pairs


def build_preferences(questions, out, responders: dict[str, LLMClient], judge: LLMClient | None = None,
                      *, ratings: dict | None = None, min_gap: float = 2.0, language: str = "ja") -> dict:
    """Pairs into ``out`` (the ``preferences`` schema); answers or ratings that failed into
    ``<out>.failed.parquet``. ``ratings`` (``{(question, model): score}``, human ratings)
    replaces the judge for the answers it covers. Returns counts (questions, answer_errors,
    judge_errors, pairs); a :class:`~wikiorigin.errors.WikioriginError` when answers are left
    with no rating and no judge."""
    rows = read_care(questions)
    check_output(out, inputs=[questions])  # before any answer is paid for
    if judge is None:
        unrated = [(r["question"], name) for r in rows for name in responders
                   if (r["question"], name) not in (ratings or {})]
        if unrated:  # said before any answer is paid for
            raise WikioriginError(f"{len(unrated)} answers would have no rating "
                                  f"(first: {unrated[0][1]} on {unrated[0][0][:40]!r}): give a judge model")
    answers = {name: client.run([_answer_request(r) for r in rows]) for name, client in responders.items()}
    counts, failures = {"questions": len(rows), "answer_errors": 0, "judge_errors": 0}, []
    scores = _rate(rows, answers, judge, ratings, counts, failures)
    pairs = _pairs(rows, answers, scores, min_gap, language)
    counts["pairs"] = len(pairs)
    usage = {name: client.usage.as_dict() for name, client in responders.items()}
    if judge is not None:
        usage["judge"] = judge.usage.as_dict()
    meta = provenance(stage="build", builder="preference", questions=str(questions), min_gap=min_gap,
                      responders=sorted(responders), judge=judge.backend.model if judge else None,
                      judge_prompt_sha1=JUDGE_SHA1 if judge else None, usage=usage)
    with ParquetSink(out, PREFERENCES, meta) as sink:
        sink.write(pa.Table.from_pylist(pairs, schema=PREFERENCES))
    with ParquetSink(str(out).removesuffix(".parquet") + ".failed.parquet", FAILED, meta) as sink:
        sink.write(pa.Table.from_pylist(failures, schema=FAILED))
    return counts


def plan_preferences(questions, responders: dict[str, LLMClient]) -> dict:
    """A dry run: the answer calls not in the cache and their input tokens; each answer then
    costs one judge call unless a human rating covers it."""
    rows = read_care(questions)
    plans = [client.dry_run([_answer_request(r) for r in rows]) for client in responders.values()]
    return {"requests": sum(p["requests"] for p in plans), "calls": sum(p["calls"] for p in plans),
            "input_tokens": sum(p["input_tokens"] for p in plans),
            "later_calls_at_most": len(rows) * len(responders)}
