"""CARE-style preference pairs: several models answer culture questions, each answer is rated
1-10 against the reference (an LLM judge with a rubric per CARE category, or imported human
ratings), and answers whose scores differ by at least ``min_gap`` become chosen/rejected pairs
in TRL's format (``prompt``, ``chosen``, ``rejected``)."""

from __future__ import annotations

from itertools import combinations

import pyarrow as pa

from ..errors import WikioriginError
from ..files import ParquetSink, provenance
from ..llm import ChatRequest, LLMClient
from ..evaluators.judge import RUBRICS, read_care
from .prompts import JUDGE_PROMPT

__all__ = ["PREFERENCES", "read_questions", "build_preferences"]

PREFERENCES = pa.schema([
    ("prompt", pa.string()), ("chosen", pa.string()), ("rejected", pa.string()),
    ("score_chosen", pa.float32()), ("score_rejected", pa.float32()), ("culture", pa.string()),
    ("category", pa.string()), ("language", pa.string()), ("chosen_model", pa.string()),
    ("rejected_model", pa.string()),
])
FAILED = pa.schema([("prompt", pa.string()), ("model", pa.string()), ("step", pa.string()),
                    ("reason", pa.string())])
_SCORE = {"type": "object", "required": ["score"],
          "properties": {"score": {"type": "integer", "minimum": 1, "maximum": 10}}}


def read_questions(path) -> list[dict]:
    """Questions with reference answers: a CARE JSON file, or Parquet/JSON with the same
    fields (``question``, ``answer``, ``culture_type``, ``associated_culture``)."""
    return read_care(path)


def build_preferences(questions, out, responders: dict[str, LLMClient], judge: LLMClient | None = None,
                      *, ratings: dict | None = None, min_gap: float = 2.0, language: str = "ja") -> dict:
    """Pairs into ``out`` (the ``preferences`` schema); answers or ratings that failed into
    ``<out>.failed.parquet``. ``ratings`` (``{(question, model): score}``, human ratings)
    replaces the judge for the answers it covers."""
    rows = read_questions(questions)
    prompts = [[{"role": "user", "content": r["question"]}] for r in rows]
    answers = {name: client.run([ChatRequest(p, {"temperature": 0.7}, "care-answer") for p in prompts])
               for name, client in responders.items()}
    scores, counts = {}, {"questions": len(rows), "answer_errors": 0, "judge_errors": 0}
    to_judge, failures = [], []
    for name, results in answers.items():
        for row, result in zip(rows, results):
            if result.error:
                counts["answer_errors"] += 1
                failures.append({"prompt": row["question"], "model": name, "step": "answer",
                                 "reason": result.error})
            elif ratings and (row["question"], name) in ratings:
                scores[(row["question"], name)] = float(ratings[(row["question"], name)])
            else:
                to_judge.append((row, name, result.text))
    if to_judge and judge is None:
        raise WikioriginError(f"{len(to_judge)} answers have no rating: give a judge model")
    verdicts = judge.run([ChatRequest(
        [{"role": "system", "content": JUDGE_PROMPT.format(
            culture=row.get("associated_culture", ""), category=row.get("culture_type", ""),
            rubric=RUBRICS.get(row.get("culture_type", ""), "Is it correct and fitting for this culture?"))},
         {"role": "user", "content": f"Question: {row['question']}\nReference answer: {row['answer']}\n"
                                     f"Answer to grade: {text}"}],
        {"temperature": 0}, "care-judge", _SCORE) for row, _, text in to_judge]) if to_judge else []
    for (row, name, _), verdict in zip(to_judge, verdicts):
        if verdict.error:
            counts["judge_errors"] += 1
            failures.append({"prompt": row["question"], "model": name, "step": "judge",
                             "reason": verdict.error})
        else:
            scores[(row["question"], name)] = float(verdict.data["score"])
    pairs = []
    for i, row in enumerate(rows):
        rated = [(name, answers[name][i].text, scores[(row["question"], name)])
                 for name in responders if (row["question"], name) in scores]
        for (a, ta, sa), (b, tb, sb) in combinations(rated, 2):
            if abs(sa - sb) >= min_gap:
                (cm, ct, cs), (rm, rt, rs) = ((a, ta, sa), (b, tb, sb)) if sa > sb else ((b, tb, sb), (a, ta, sa))
                pairs.append({"prompt": row["question"], "chosen": ct, "rejected": rt,
                              "score_chosen": cs, "score_rejected": rs,
                              "culture": row.get("associated_culture"), "category": row.get("culture_type"),
                              "language": language, "chosen_model": cm, "rejected_model": rm})
    counts["pairs"] = len(pairs)
    usage = {name: client.usage.as_dict() for name, client in responders.items()}
    if judge is not None:
        usage["judge"] = judge.usage.as_dict()
    meta = provenance(stage="build", builder="preference", questions=str(questions), min_gap=min_gap,
                      responders=sorted(responders), judge=judge.backend.model if judge else None,
                      usage=usage)
    with ParquetSink(out, PREFERENCES, meta) as sink:
        sink.write(pa.Table.from_pylist(pairs, schema=PREFERENCES))
    with ParquetSink(str(out).removesuffix(".parquet") + ".failed.parquet", FAILED, meta) as sink:
        sink.write(pa.Table.from_pylist(failures, schema=FAILED))
    return counts


def plan_preferences(questions, responders: dict[str, LLMClient]) -> dict:
    """A dry run: the answer calls not in the cache and their input tokens; each answer then
    costs one judge call unless a human rating covers it."""
    rows = read_questions(questions)
    plans = [client.dry_run([ChatRequest([{"role": "user", "content": r["question"]}],
                                         {"temperature": 0.7}, "care-answer") for r in rows])
             for client in responders.values()]
    return {"requests": sum(p["requests"] for p in plans), "calls": sum(p["calls"] for p in plans),
            "input_tokens": sum(p["input_tokens"] for p in plans),
            "later_calls_at_most": len(rows) * len(responders)}
