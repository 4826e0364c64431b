"""LLM as judge (CARE): 1-10 ratings of a model's answers against reference answers.

The judge (any :class:`~wikiorigin.llm.LLMClient`: an OpenAI-compatible endpoint, or a local
model through the transformers backend) is CARE's, in :mod:`wikiorigin.care` (the rubrics, the
prompt, :func:`~wikiorigin.care.parse_rating`), the one the preference builder uses too. A
rating that is missing, out of 1-10 or given twice with different values is counted as
unreadable, never guessed. ``read_care``, ``parse_rating``, ``RUBRICS`` and ``JUDGE_PROMPT``
stay importable from here.

Means carry a Student t interval and standard error (:mod:`~wikiorigin.evaluators.stats`),
overall, by category, culture, geographic scope (CARE's ``geographic_scope``) and culture ×
category (CARE's Table 3). With people's ratings of the same responses
(:func:`~wikiorigin.care.read_rated`), :func:`judge_rated` has the judge rate those responses
and the summary gives the judge's ``agreement`` with the people: Pearson, Spearman and Kendall
with their intervals (:func:`~wikiorigin.evaluators.stats.correlations`).
"""

from __future__ import annotations

import math

from ..care import (
    DEFAULT_RUBRIC,
    JUDGE_PROMPT,
    JUDGE_RULES,
    RUBRICS,
    parse_rating,
    question_key,
    rating_request,
    read_care,
)
from ..errors import WikioriginError
from .report import bar_plot, markdown_table, write_results
from .signature import data_hash, judge_sampling, run_settings, text_hash
from .stats import SMALL, correlations, mean_fields

RATING_SCALE = (1.0, 10.0)  # a mean rating's interval is clipped to the scale

__all__ = [
    "judge_answers",
    "judge_rated",
    "attach_human_ratings",
    "agreement",
    "summarize_judged",
    "write_judge_results",
    "judge_settings",
    "RUBRICS",
    "DEFAULT_RUBRIC",
    "JUDGE_PROMPT",
    "parse_rating",
    "read_care",
]


def judge_answers(
    rows: list[dict], responses: list[str | None], judge, *, model: str = "", params: dict | None = None
) -> list[dict]:
    """One item per question: the answer, the judge's text, the rating or why there is none;
    the judge sampled with ``params`` (default :data:`~wikiorigin.care.JUDGE_PARAMS`)."""
    todo = [i for i, r in enumerate(responses) if r]
    requests = [rating_request(rows[i], responses[i] or "", params) for i in todo]
    verdicts = dict(zip(todo, judge.run(requests) if requests else []))
    items = []
    for i, (row, response) in enumerate(zip(rows, responses)):
        text: str | None
        reason: str | None
        verdict = verdicts.get(i)
        if verdict is None:
            rating, reason, text = None, "no answer", None
        elif verdict.error:
            rating, reason, text = None, f"judge failed: {verdict.error}", None
        else:
            (rating, reason), text = parse_rating(verdict.text), verdict.text
        items.append(
            {
                "model": model,
                "question": row["question"],
                "reference": row["answer"],
                "category": row.get("culture_type") or "",
                "culture": row.get("associated_culture") or "",
                "scope": row.get("geographic_scope") or "",
                "response": response,
                "judge_text": text,
                "rating": None if rating is None else float(rating),
                "unrated": reason,
            }
        )
    return items


def judge_rated(
    rows: list[dict], rated: list[dict], judge, params: dict | None = None
) -> tuple[list[dict], list[dict]]:
    """People's rated responses (:func:`~wikiorigin.care.read_rated`) rated by the ``judge``:
    each joined to its CARE row (the reference answer, category, culture, scope) by its question
    (:func:`~wikiorigin.care.question_key`). Returns the items (:func:`judge_answers`' with the
    response's ``model`` and the people's ``human_rating``) and the rated rows whose question
    the CARE rows do not have (not judged: there is no reference answer)."""
    by_question = {question_key(r["question"]): r for r in rows}
    known = [r for r in rated if question_key(r["question"]) in by_question]
    items = judge_answers(
        [by_question[question_key(r["question"])] for r in known], [r["response"] for r in known], judge, params=params
    )
    for item, row in zip(items, known):
        item.update(model=row["model"], human_rating=float(row["rating"]))
    return items, [r for r in rated if question_key(r["question"]) not in by_question]


def attach_human_ratings(items: list[dict], rated: list[dict]) -> int:
    """Give each judged item the people's rating of its response (``human_rating``: the rated
    row with the same question, by :func:`~wikiorigin.care.question_key`, and the same response,
    outer whitespace aside; the mean where the same response was rated more than once; None
    where it was not rated). Returns how many rated rows matched no item."""
    ratings: dict[tuple, list[float]] = {}
    for row in rated:
        ratings.setdefault((question_key(row["question"]), row["response"].strip()), []).append(float(row["rating"]))
    used = set()
    for item in items:
        key = (question_key(item["question"]), (item["response"] or "").strip())
        found = ratings.get(key)
        item["human_rating"] = None if found is None else sum(found) / len(found)
        if found is not None:
            used.add(key)
    return sum(len(v) for k, v in ratings.items() if k not in used)


def agreement(items: list[dict], *, seed: int | None = None, resamples: int | None = None) -> dict:
    """How the judge's ratings agree with people's (items with both a ``rating`` and a
    ``human_rating``): ``n``, the means of both with intervals, and Pearson, Spearman and
    Kendall (tau-b) with 95% intervals and p-values (:func:`~wikiorigin.evaluators.stats.correlations`)
    over the responses; with three models or more, ``by_model``: the same over the models'
    mean ratings (system level). ``human_rated``: items the people rated; ``judge_unrated``:
    of those, how many the judge gave no rating."""
    human = [i for i in items if i.get("human_rating") is not None]
    both = [i for i in human if i["rating"] is not None]
    judge, people = [i["rating"] for i in both], [i["human_rating"] for i in both]
    out = {
        "human_rated": len(human),
        "judge_unrated": len(human) - len(both),
        **mean_fields("judge_mean", judge, RATING_SCALE),
        **mean_fields("human_mean", people, RATING_SCALE),
        **correlations(judge, people, seed=seed, resamples=resamples),
    }
    models: dict[str, list] = {}
    for item in both:
        models.setdefault(item["model"], []).append(item)
    if len(models) >= 3:
        means = [[sum(i[k] for i in part) / len(part) for part in models.values()] for k in ("rating", "human_rating")]
        out["by_model"] = {"models": sorted(models), **correlations(*means, seed=seed, resamples=resamples)}
    return out


def judge_settings(
    model,
    judge,
    *,
    rows: list[dict] | None = None,
    rated: list[dict] | None = None,
    rated_answers: bool = False,
    judge_params: dict | None = None,
    **sampling,
) -> dict:
    """The settings of a judged run (see :mod:`~wikiorigin.evaluators.signature`): the
    answering ``model`` and its sampling (``None``: recorded answers), the ``judge`` client,
    the hash of the judge's instructions and rubrics, how the judge samples; ``rows``: the
    questions and reference answers (hashed); ``rated``: people's ratings compared with the
    judge's (hashed as ``human_ratings``); ``rated_answers``: the answers judged are those
    rated responses (:func:`judge_rated`; ``model`` is then ``human-rated``); ``judge_params``:
    the judge's sampling (default :data:`~wikiorigin.care.JUDGE_PARAMS`)."""
    settings = run_settings(
        "judge",
        model,
        capability="generate",
        sampling=sampling if model is not None else None,
        judge=None if judge is None else judge.describe()["model"],
        judge_prompt=text_hash(JUDGE_RULES),
        judge_sampling=None if judge is None else judge_sampling(judge, judge_params),
        data=None if rows is None else data_hash(rows, ("question", "answer", "culture_type", "associated_culture")),
    )
    if model is None:
        settings["model"] = "human-rated" if rated_answers else "recorded"
    if rated is not None:
        settings["human_ratings"] = data_hash(rated, ("question", "model", "response", "rating"))
    return settings


def _groups(items: list[dict], key, block) -> dict:
    out: dict = {}
    for item in items:
        out.setdefault(key(item) or "(none)", []).append(item)
    return {k: block(v) for k, v in sorted(out.items())}


def summarize_judged(items: list[dict], *, seed: int | None = None, resamples: int | None = None) -> dict:
    """Mean rating over the rated answers, with its t interval and standard error
    (``mean_ci95``, ``mean_stderr``) and ``small`` when fewer than 30 are rated: overall, by
    category, by culture, by geographic scope (``by_scope``, when the questions give one), by
    culture then category (``by_culture_category``: CARE's Table 3, rows cultures, columns
    categories) and, for answers of several models, by model; the counts of answers left
    unrated and why. Items carrying people's ratings (``human_rating``) add the judge's
    ``agreement`` with them (:func:`agreement`)."""
    if not items:
        raise WikioriginError("no items to summarize")

    def block(part):
        rated = [i["rating"] for i in part if i["rating"] is not None]
        return {
            "n": len(part),
            "rated": len(rated),
            **mean_fields("mean", rated, RATING_SCALE),
            "small": len(rated) < SMALL,
        }

    reasons: dict[str, int] = {}
    for item in items:
        if item["unrated"]:
            key = item["unrated"].split(":")[0]
            reasons[key] = reasons.get(key, 0) + 1
    models = sorted({i["model"] for i in items})
    summary = {
        "model": ", ".join(models),
        "mode": "judge",
        **block(items),
        "unrated": reasons,
        "by_category": _groups(items, lambda i: i["category"], block),
        "by_culture": _groups(items, lambda i: i["culture"], block),
    }
    if any(i.get("scope") for i in items):
        summary["by_scope"] = _groups(items, lambda i: i.get("scope"), block)
    summary["by_culture_category"] = _groups(
        items, lambda i: i["culture"], lambda part: _groups(part, lambda i: i["category"], block)
    )
    if len(models) > 1:
        summary["by_model"] = _groups(items, lambda i: i["model"], block)
    if any("human_rating" in i for i in items):
        summary["agreement"] = agreement(items, seed=seed, resamples=resamples)
    return summary


def _cell(block: dict | None) -> str:
    """A Table 3 cell: mean [low, high] (n), ``n<30`` marked with a dagger."""
    if block is None or block["mean"] is None or math.isnan(block["mean"]):
        return "–"
    interval = block.get("mean_ci95")
    said = f"{block['mean']:.2f}" + (f" [{interval[0]:.2f}, {interval[1]:.2f}]" if interval else "")
    return f"{said} (n={block['rated']}{'†' if block.get('small') else ''})"


def _agreement_lines(found: dict) -> list[str]:
    def rows(part):
        return [
            [
                name,
                _shown(part[name]["r"]),
                _interval(part[name]["ci95"]),
                "–" if part[name]["p_value"] is None else f"{part[name]['p_value']:.3g}",
                part[name]["interval"],
            ]
            for name in ("pearson", "spearman", "kendall")
        ]

    lines = [
        "",
        "## Agreement with people's ratings",
        "",
        f"{found['n']} responses rated by both (people rated {found['human_rated']}; the judge gave no "
        f"rating to {found['judge_unrated']} of them"
        + (
            f"; {found['unmatched']} rated responses not compared: no such question and answer here"
            if found.get("unmatched")
            else ""
        )
        + f"). Mean rating: judge {_mean_text(found, 'judge_mean')}, people {_mean_text(found, 'human_mean')}.",
        "",
        markdown_table(["statistic", "r", "95% interval", "p", "interval by"], rows(found)),
    ]
    if "by_model" in found:
        part = found["by_model"]
        lines += [
            "",
            f"Over the {part['n']} models' mean ratings (system level):",
            "",
            markdown_table(["statistic", "r", "95% interval", "p", "interval by"], rows(part)),
        ]
    return lines


def _interval(pair) -> str:
    return "–" if not pair else f"[{pair[0]:.3f}, {pair[1]:.3f}]"


def _mean_text(found: dict, name: str) -> str:
    value = found[name]
    return "–" if value is None or math.isnan(value) else f"{value:.2f} {_interval(found[name + '_ci95'])}"


def _report_lines(summary: dict) -> list[str]:
    """The lines of a judged run's report before the agreement: the mean rating, the groups
    (category, culture, scope, model) and CARE's culture × category table."""
    unrated = ", ".join(f"{k} {v}" for k, v in summary["unrated"].items()) or "none"
    lines = [
        f"# LLM-as-judge ratings: {summary['model']}",
        "",
        markdown_table(
            ["answers", "rated", "mean rating (1-10)", "95% interval", "stderr"],
            [
                [
                    summary["n"],
                    summary["rated"],
                    summary["mean"],
                    _interval(summary.get("mean_ci95")),
                    _shown(summary.get("mean_stderr")),
                ]
            ],
        ),
        "",
        f"Unrated (not counted in the means): {unrated}. Intervals: Student t; † fewer than {SMALL} rated answers.",
    ]
    for key, title in (
        ("by_category", "category"),
        ("by_culture", "culture"),
        ("by_scope", "geographic scope"),
        ("by_model", "model"),
    ):
        if key in summary:
            lines += [
                "",
                f"## By {title}",
                "",
                markdown_table(
                    [title, "n", "rated", "mean", "95% interval", "n<30"],
                    [
                        [k, v["n"], v["rated"], v["mean"], _interval(v.get("mean_ci95")), "†" if v.get("small") else ""]
                        for k, v in summary[key].items()
                    ],
                ),
            ]
    table = summary.get("by_culture_category") or {}
    categories = sorted({c for cells in table.values() for c in cells})
    lines += [
        "",
        "## By culture and category (CARE's Table 3: mean [95% interval] (rated))",
        "",
        markdown_table(
            ["culture", *categories],
            [[culture, *[_cell(cells.get(c)) for c in categories]] for culture, cells in table.items()],
        ),
    ]
    return lines


def write_judge_results(out, items: list[dict], summary: dict, meta: dict | None = None, settings: dict | None = None):
    """Write a judged run into the directory ``out`` (see
    :func:`~wikiorigin.evaluators.report.write_results`; returns the directory): the items,
    the summary with ``settings``, ``report.md`` (means with 95% intervals by category, culture,
    scope and culture × category, groups under 30 rated answers marked, the unrated answers and
    why, the agreement with people's ratings) and a plot of the mean rating by category with
    error bars."""
    lines = _report_lines(summary)
    if "agreement" in summary:
        lines += _agreement_lines(summary["agreement"])
    groups = summary["by_category"]
    plots = [
        (
            "rating_by_category.png",
            lambda path: bar_plot(
                path,
                list(groups),
                [_shown(v["mean"]) for v in groups.values()],
                f"{summary['model']}: rating by category",
                "mean rating",
                counts=[v["rated"] for v in groups.values()],
                intervals=[v.get("mean_ci95") for v in groups.values()],
            ),
        )
    ]
    return write_results(
        out, items, summary, "\n".join(lines), plots=plots, meta=meta, settings=settings, intervals=False
    )


def _shown(value):
    return float("nan") if value is None else value
