"""The calls of a judged preference build: each responder's answer request, the judge's
ratings of the answers (failed answers and unreadable ratings kept as dropped rows), and the
parameters as they were sent."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..care import parse_rating, rating_request
from .result import FailedRows

if TYPE_CHECKING:  # the rated path loads no LLM client
    from ..llm import ChatRequest, LLMClient


def _failure(failed: FailedRows, question: str, model: str | None, step: str, reason: str, item: dict | None = None):
    """A dropped row: the question is its source, the response its item."""
    failed.add(step, reason, source=question, model=model, item=item)


def _answer_request(row: dict, params: dict) -> ChatRequest:
    """The request that asks a responder to answer the CARE ``row``'s question."""
    from ..llm import ChatRequest

    return ChatRequest([{"role": "user", "content": row["question"]}], dict(params), "care-answer")


def _rate(rows: list[dict], answers: dict, judge: LLMClient, params: dict, failed: FailedRows) -> dict:
    """``{(row index, model): rating}`` by the judge; failed answers (step ``answer``) and
    unreadable ratings (``judge``) go to ``failed``."""
    scores, to_judge = {}, []
    for name, results in answers.items():
        for i, (row, result) in enumerate(zip(rows, results)):
            if result.error:
                _failure(failed, row["question"], name, "answer", result.error)
            else:
                to_judge.append((i, name, result.text))
    failed.report.generated = len(to_judge)
    verdicts = judge.run([rating_request(rows[i], text, params) for i, _, text in to_judge]) if to_judge else []
    for (i, name, text), verdict in zip(to_judge, verdicts):
        rating, reason = (None, verdict.error) if verdict.error else parse_rating(verdict.text)
        if rating is None:
            _failure(
                failed,
                rows[i]["question"],
                name,
                "judge",
                verdict.error or f"unreadable rating ({reason})",
                {"response": text},
            )
        else:
            scores[(i, name)] = float(rating)
    return scores


def _sent(responders: dict, params: dict) -> dict:
    """The answers' parameters as sent: one dict when every responder sent the same, else one
    per responder's name."""
    sent = {name: client.params(params) for name, client in responders.items()}
    distinct = {repr(sorted(p.items())) for p in sent.values()}
    return next(iter(sent.values())) if len(distinct) == 1 else sent
