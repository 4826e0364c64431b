"""LLM as judge (CARE): 1-10 ratings of a model's answers against reference answers.

The judge (any :class:`~wikiorigin.llm.LLMClient`: an OpenAI-compatible endpoint, or a local
model through the transformers backend) is CARE's, in :mod:`wikiorigin.care` (the rubrics, the
prompt, :func:`~wikiorigin.care.parse_rating`), the one the preference builder uses too. A
rating that is missing, out of 1-10 or given twice with different values is counted as
unreadable, never guessed. ``read_care``, ``parse_rating``, ``RUBRICS`` and ``JUDGE_PROMPT``
stay importable from here.
"""

from __future__ import annotations

from ..care import DEFAULT_RUBRIC, JUDGE_PROMPT, JUDGE_RULES, RUBRICS, parse_rating, rating_request, read_care
from ..errors import WikioriginError

__all__ = ["judge_answers", "summarize_judged", "write_judge_results", "judge_settings",
           "RUBRICS", "DEFAULT_RUBRIC", "JUDGE_PROMPT", "parse_rating", "read_care"]


def judge_answers(rows: list[dict], responses: list[str | None], judge, *, model: str = "") -> list[dict]:
    """One item per question: the answer, the judge's text, the rating or why there is none."""
    todo = [i for i, r in enumerate(responses) if r]
    requests = [rating_request(rows[i], responses[i]) for i in todo]
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
    the hash of the judge's instructions and rubrics, how the judge samples; ``rows``: the
    questions and reference answers (hashed)."""
    from .signature import client_name, data_hash, generation_bos, judge_sampling, run_settings, text_hash

    settings = run_settings("judge", model, sampling=sampling if model is not None else None,
                            bos=generation_bos(model), judge=client_name(judge), judge_prompt=text_hash(JUDGE_RULES),
                            judge_sampling=None if judge is None else judge_sampling(judge),
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
    """Write a judged run into the directory ``out`` (see
    :func:`~wikiorigin.evaluators.report.write_results`; returns the directory): the items,
    the summary with ``settings``, ``report.md`` (means by category and by culture, the unrated
    answers and why) and a plot of the mean rating by category."""
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
