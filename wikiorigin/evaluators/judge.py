"""LLM as judge (CARE): 1-10 ratings of a model's answers against reference answers.

The judge (any :class:`~wikiorigin.llm.LLMClient`: an OpenAI-compatible endpoint, or a local
model through the transformers backend) sees the question, the reference answer written by a
person of the culture, a rubric for the question's CARE category and the answer; it explains
briefly and ends with ``Rating: [[n]]``. :func:`parse_rating` reads that line and its common
variants; a rating that is missing, out of 1-10 or given twice with different values is counted
as unreadable, never guessed.
"""

from __future__ import annotations

import re

from ..errors import WikioriginError
from ..files import read_rows

__all__ = ["RUBRICS", "JUDGE_PROMPT", "parse_rating", "read_care", "judge_answers", "summarize_judged",
           "write_judge_results", "judge_settings"]

RUBRICS = {
    "Cultural entities": "Is the named person, place, work or thing the right one, with correct facts about it?",
    "Opinion": "Does it reflect the views commonly held in this culture, fairly and without stereotypes?",
    "Social norms": "Does it describe the norms, manners and customs of this culture accurately?",
    "Cultural commonsense": "Is the everyday knowledge that people of this culture share stated correctly?",
    "Literacy": "Is the knowledge of this culture's literature, language and writing correct?",
}
DEFAULT_RUBRIC = "Is it correct and fitting for this culture?"

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

_BRACKETED = re.compile(r"\[\[\s*(-?\d+(?:\.\d+)?)\s*(?:/\s*10\s*)?\]\]")
_LABELLED = re.compile(r"(?:rating|score|評価|得点|スコア)\s*[:：]?\s*\**\s*\[?\s*(-?\d+(?:\.\d+)?)\s*(?:/\s*10)?",
                       re.I)


def parse_rating(text: str | None) -> tuple[float | None, str | None]:
    """``(rating, None)``, or ``(None, reason)`` with reason ``missing``, ``out of range`` or
    ``several ratings``. Reads ``Rating: [[7]]``, ``[[7/10]]``, ``**Rating:** 7``,
    ``評価：[[8]]``, full-width digits."""
    if not text:
        return None, "missing"
    import unicodedata

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


def read_care(path) -> list[dict]:
    """CARE test rows (``question``, ``answer`` = the reference, ``culture_type``,
    ``associated_culture``), from the released JSON or a Parquet/JSON of the same fields;
    a ``response`` field, where present, is a recorded answer to be rated."""
    rows = read_rows(path)
    for i, row in enumerate(rows):
        if not isinstance(row, dict) or not row.get("question") or not row.get("answer"):
            raise WikioriginError(f"{path}: row {i} has no question or no reference answer")
    return rows


def judge_answers(rows: list[dict], responses: list[str | None], judge, *, model: str = "") -> list[dict]:
    """One item per question: the answer, the judge's text, the rating or why there is none."""
    from ..llm import ChatRequest

    todo = [i for i, r in enumerate(responses) if r]
    requests = [ChatRequest([
        {"role": "system", "content": JUDGE_PROMPT.format(
            culture=rows[i].get("associated_culture") or "unspecified",
            category=rows[i].get("culture_type") or "general",
            rubric=RUBRICS.get(rows[i].get("culture_type") or "", DEFAULT_RUBRIC))},
        {"role": "user", "content": f"Question: {rows[i]['question']}\n\nReference answer: {rows[i]['answer']}"
                                    f"\n\nAnswer to grade: {responses[i]}"}],
        {"temperature": 0}, "care-rate") for i in todo]
    verdicts = dict(zip(todo, judge.run(requests) if requests else []))
    items = []
    for i, (row, response) in enumerate(zip(rows, responses)):
        verdict = verdicts.get(i)
        if verdict is None:
            rating, reason, text = None, "no answer", None
        elif verdict.error:
            rating, reason, text = None, f"judge failed: {verdict.error}", None
        else:
            (rating, reason), text = parse_rating(verdict.text), verdict.text
        items.append({"model": model, "question": row["question"], "reference": row["answer"],
                      "category": row.get("culture_type") or "", "culture": row.get("associated_culture") or "",
                      "response": response, "judge_text": text,
                      "rating": None if rating is None else float(rating), "unrated": reason})
    return items


def judge_settings(model, judge, *, rows: list[dict] | None = None, **sampling) -> dict:
    """The settings of a judged run (see :mod:`~wikiorigin.evaluators.signature`): the
    answering ``model`` and its sampling (``None``: recorded answers), the ``judge`` client,
    the hash of the judge's instructions and rubrics; ``rows``: the questions and reference
    answers (hashed)."""
    import json

    from .signature import client_name, data_hash, generation_bos, run_settings, text_hash

    rules = JUDGE_PROMPT + json.dumps([RUBRICS, DEFAULT_RUBRIC], sort_keys=True, ensure_ascii=False)
    settings = run_settings("judge", model, sampling=sampling if model is not None else None,
                            bos=generation_bos(model), judge=client_name(judge), judge_prompt=text_hash(rules),
                            data=None if rows is None else data_hash(
                                rows, ("question", "answer", "culture_type", "associated_culture")))
    if model is None:
        settings["model"] = "recorded"
    return settings


def summarize_judged(items: list[dict]) -> dict:
    """Mean rating over the rated answers: overall, by category and by culture, with the
    counts of answers left unrated and why."""
    if not items:
        raise WikioriginError("no items to summarize")

    def block(part):
        rated = [i["rating"] for i in part if i["rating"] is not None]
        return {"n": len(part), "rated": len(rated), "mean": sum(rated) / len(rated) if rated else float("nan")}

    def groups(key):
        out: dict = {}
        for item in items:
            out.setdefault(item[key] or "(none)", []).append(item)
        return {k: block(v) for k, v in sorted(out.items())}

    reasons: dict[str, int] = {}
    for item in items:
        if item["unrated"]:
            key = item["unrated"].split(":")[0]
            reasons[key] = reasons.get(key, 0) + 1
    return {"model": items[0]["model"], "mode": "judge", **block(items), "unrated": reasons,
            "by_category": groups("category"), "by_culture": groups("culture")}


def write_judge_results(out, items: list[dict], summary: dict, meta: dict | None = None,
                        settings: dict | None = None):
    from .report import bar_plot, markdown_table, write_results

    unrated = ", ".join(f"{k} {v}" for k, v in summary["unrated"].items()) or "none"
    lines = [f"# LLM-as-judge ratings: {summary['model']}", "",
             markdown_table(["answers", "rated", "mean rating (1-10)"],
                            [[summary["n"], summary["rated"], summary["mean"]]]),
             "", f"Unrated (not counted in the means): {unrated}."]
    for key, title in (("by_category", "category"), ("by_culture", "culture")):
        lines += ["", f"## By {title}", "", markdown_table(
            [title, "n", "rated", "mean"], [[k, v["n"], v["rated"], v["mean"]] for k, v in summary[key].items()])]
    groups = summary["by_category"]
    plots = [("rating_by_category.png", lambda path: bar_plot(
        path, list(groups), [v["mean"] for v in groups.values()], f"{summary['model']}: rating by category",
        "mean rating", counts=[v["rated"] for v in groups.values()]))]
    return write_results(out, items, summary, "\n".join(lines), plots=plots, meta=meta, settings=settings)
