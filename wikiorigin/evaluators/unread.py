"""The judge of the answers the parser cannot read (multiple choice, generation mode): an LLM
is shown the question, its options, the correct one and the response, and says whether the
response picks exactly the correct option. Its instructions are hashed into the run's
signature (:func:`~wikiorigin.evaluators.signature.mcq_settings`)."""

from __future__ import annotations

__all__ = ["JUDGE_PROMPT", "judge_unread"]

JUDGE_PROMPT = (
    "task: read-answer\n"
    "A model answered a multiple-choice question. Decide which option its response picks. "
    'Reply with JSON only: {"verdict": true} when it picks exactly the correct option, '
    '{"verdict": false} when it picks exactly one other option, {"verdict": null} when it '
    "picks none or several."
)
"""The instructions of the judge of unread answers (the first line names its task)."""

_VERDICT = {"type": "object", "required": ["verdict"], "properties": {"verdict": {"type": ["boolean", "null"]}}}


def judge_unread(rows: list[dict], items: list[dict], judge) -> None:
    """Give the responses the parser could not read (``pred`` None; a ``truncated`` one is no
    answer, to the judge too) to ``judge`` (an :class:`~wikiorigin.llm.LLMClient`): each item
    it answers gets ``judge_verdict`` and ``correct`` (the verdict is True). An item whose
    judge request failed after its retries has no reading at all: ``read_as`` ``failed``,
    ``correct`` None, left out of the figures as an unanswered question is (the run is
    incomplete: its judge's failures count). ``rows`` are the questions, in the items' order."""
    from ..llm import ChatRequest

    todo = [
        i
        for i, item in enumerate(items)
        if item["pred"] is None and item["response"] and item["read_as"] != "truncated"
    ]
    requests = [
        ChatRequest(
            [
                {"role": "system", "content": JUDGE_PROMPT},
                {
                    "role": "user",
                    "content": f"Question: {rows[i]['question']}\nOptions: "
                    + " / ".join(rows[i]["choices"])
                    + f"\nCorrect option: {rows[i]['choices'][rows[i]['answer_index']]}"
                    + f"\nResponse: {items[i]['response']}",
                },
            ],
            {"temperature": 0},
            "mcq-read-answer",
            _VERDICT,
        )
        for i in todo
    ]
    for i, result in zip(todo, judge.run(requests) if requests else []):
        if result.error is None:
            items[i]["judge_verdict"] = result.data["verdict"]
            items[i]["correct"] = result.data["verdict"] is True
        else:  # neither the parser nor the judge read it: no reading, not a wrong one
            items[i]["read_as"] = "failed"
            items[i]["correct"] = None
