"""The figures a comparison ranks and what it says of its runs (:mod:`~wikiorigin.evaluators.compare`):
each run's figure from its summary, or over the items every run answered when runs are
incomplete; the ranking with its neighbour tests; the warnings where settings differ and the
notes on how runs were counted; the external scores. Statistics only, no file written.
"""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Mapping

import numpy as np

from ..errors import WikioriginError
from ..log import logger
from . import stats
from .compared import ComparedRun, check_distinct_runs, check_same_runs, check_summaries, item_scores
from .itemsets import check_complete
from .paired import MIN_COMMON, _neighbours
from .signature import differences
from .stats import SMALL
from .summaries import _number, _order

__all__ = ["ranking_table", "COUNTING"]


def _read_external(path) -> dict[str, float]:
    """The scores of a CSV file of ``model,score``: each a finite number, each model once."""
    scores: dict[str, float] = {}
    first: dict[str, int] = {}
    with open(path, newline="", encoding="utf-8") as f:
        for line, row in enumerate(csv.DictReader(f), 2):
            try:
                model, score = row["model"], float(row["score"])
            except (KeyError, TypeError, ValueError):
                raise WikioriginError(f"{path}: line {line}: expected columns model,score with a number") from None
            if not math.isfinite(score):
                raise WikioriginError(
                    f"{path}: line {line}: the score of {model} is {row['score']}, not a finite number"
                )
            if model in first:
                raise WikioriginError(
                    f"{path}: line {line}: {model} again (first on line {first[model]}): give one score a model"
                )
            scores[model], first[model] = score, line
    if not scores:
        raise WikioriginError(f"{path}: no scores: expected a header line model,score and a line for each model")
    return scores


COUNTING = frozenset({"responses"})
"""Settings that say how a run's answers were counted rather than how they were asked: a run
whose recorded responses cover fewer of the questions ("807/810") answered the same questions as
the others, the rest counting as unanswered. Comparisons explain these; they do not warn."""


def _counting_note(model: str, summary: dict) -> str | None:
    """What a run's recorded responses missing for some of its questions (the ``join`` of its
    summary) mean for its figures, or None when every question had one."""
    missing = (summary.get("join") or {}).get("missing")
    if not missing:
        return None
    total = summary["n"]
    return (
        f"{model}: recorded responses for {total - missing} of the {total} questions; the {missing} without one "
        f"count as unanswered (wrong), so its figures are over the same {total} questions as the others "
        "(a paper that scores every row of its release counts them the same way)"
    )


def _settings_warnings(runs: list[str], summaries: list[dict]) -> list[str]:
    """One line per run whose settings differ from the first run's in more than the model
    and the counting of :data:`COUNTING` (which fields, with both values), and one for the
    runs that record no settings."""
    bare = [run for run, s in zip(runs, summaries) if s.get("settings") is None]
    lines = [f"{', '.join(bare)}: no settings recorded (older runs?), so comparability is unknown"] if bare else []
    dressed = [(run, s["settings"]) for run, s in zip(runs, summaries) if s.get("settings") is not None]
    for run, settings in dressed[1:]:
        diff = {k: v for k, v in differences(dressed[0][1], settings).items() if k not in COUNTING}
        if diff:
            said = "; ".join(f"{k}: {b!r} vs {a!r}" for k, (a, b) in diff.items())
            lines.append(f"{run} differs from {dressed[0][0]} in {', '.join(diff)} ({said})")
    return lines


def ranking_table(
    models: list[str],
    values: list[float],
    metric: str,
    theirs: dict[str, float] | None = None,
    external_name: str = "external score",
) -> tuple[list[str], list[list]]:
    """Header and rows of a ranking (the layout of the papers' Table 8): models sorted by
    ``metric``, best first (NaN last), with the published figure and ours minus it when
    ``theirs`` is given."""
    order = sorted(range(len(models)), key=lambda i: (*_order(values[i]), models[i]))
    header = ["rank", "model", metric]
    rows: list[list] = [[rank, models[i], values[i]] for rank, i in enumerate(order, 1)]
    if theirs is not None:
        header += [external_name, "difference"]
        for row, i in zip(rows, order):
            published = theirs.get(models[i], float("nan"))
            row += [published, values[i] - published]
    return header, rows


def _count(summary: dict, metric: str) -> int | None:
    """How many items a run's figure is over: a judge's rated answers, else the answered
    questions (all of them, in a complete run)."""
    return summary.get("rated") if metric == "mean" else summary.get("answered", summary.get("n"))


def _summary_figures(summaries: list[dict], metric: str) -> list[dict]:
    """Each run's figure as its summary gives it: ``value``, ``ci95``, ``stderr``, ``n``."""
    return [
        {
            "value": float("nan") if s[metric] is None else float(s[metric]),
            "ci95": s.get(f"{metric}_ci95"),
            "stderr": s.get(f"{metric}_stderr"),
            "n": _count(s, metric),
        }
        for s in summaries
    ]


def _common_figures(
    runs: list[ComparedRun], models: list[str], metric: str, total: int | None
) -> tuple[list[dict], set]:
    """Each run's figure over the items every run answered (incomplete runs compared under
    ``allow_failures``), and those items' keys. Refused (:class:`~wikiorigin.errors.WikioriginError`)
    where a run's items cannot be matched, or the runs share fewer than :data:`MIN_COMMON`."""
    scores = [item_scores(run, metric) for run in runs]
    for run, (found, _, why) in zip(runs, scores):
        if found is None:
            raise WikioriginError(f"{run.label}: {why}: its answered items cannot be matched with the other runs'")
    common = set.intersection(*(set(found or ()) for found, _, _ in scores))
    if len(common) < MIN_COMMON:
        answered = ", ".join(f"{m} {len(found or ())}" for m, (found, _, _) in zip(models, scores))
        shared = f"only {len(common)} answered items in common" if common else "no answered item in common"
        raise WikioriginError(
            f"{', '.join(run.label for run in runs)}: the runs have {shared} "
            f"(answered: {answered}{f', of {total}' if total else ''}), fewer than {MIN_COMMON}: no pair "
            "could be told apart on so few; run the incomplete runs' commands again to finish them"
        )
    figures = []
    for found, binary, _ in scores:
        values = [(found or {})[k] for k in sorted(common)]
        estimate = stats.proportion(values) if binary else stats.mean([float(v) for v in values])
        ci = None if estimate.low is None else [estimate.low, estimate.high]
        figures.append({"value": _number(estimate.value), "ci95": ci, "stderr": estimate.stderr, "n": len(common)})
    return figures, common


def _ranking_entries(models: list[str], figures: list[dict], pairs: list[dict]) -> list[dict]:
    order = sorted(range(len(models)), key=lambda i: (*_order(figures[i]["value"]), models[i]))
    neighbours = _neighbours([models[i] for i in order], pairs)
    entries = []
    for rank, (i, nxt) in enumerate(zip(order, neighbours), 1):
        n = figures[i]["n"]
        entries.append(
            {
                "rank": rank,
                "model": models[i],
                **figures[i],
                "small": n is not None and n < SMALL,
                "vs_next": nxt,
            }
        )
    return entries


def _common_note(n: int, total: int | None) -> str:
    """The line that says incomplete runs are compared over the items every one answered."""
    left = f" ({total - n} of the {total} left out)" if total else ""
    return f"figures, ranking and tests over the {n} items every run answered{left}, the same items for every run"


def checked_figures(
    runs: list[ComparedRun], models: list[str], metric: str, allow_failures: bool
) -> tuple[list[dict], set | None, list[str]]:
    """The runs' figures (and the items they are over, None: each run's own) and notes, once
    every check of a comparison has passed: ``metric`` in every summary, no run given twice,
    incomplete runs only with ``allow_failures``, the same items in every run."""
    summaries = [run.summary for run in runs]
    missing = [run.label for run in runs if metric not in run.summary]
    if missing:
        raise WikioriginError(f"{', '.join(missing)}: no {metric!r} in the summary")
    check_distinct_runs(runs)
    check_summaries(runs, metric)
    labels = [run.label for run in runs]
    incomplete = check_complete(labels, summaries, models, allow_failures=allow_failures)
    check_same_runs(runs)
    figures, common = _summary_figures(summaries, metric), None
    if incomplete:
        figures, common = _common_figures(runs, models, metric, summaries[0].get("n"))
        incomplete.append(_common_note(len(common), summaries[0].get("n")))
    notes = [n for n in (_counting_note(m, s) for m, s in zip(models, summaries)) if n] + incomplete
    return figures, common, notes


def external_scores(external, models: list[str], summaries: list[dict]) -> dict[str, float] | None:
    """The external scores of the compared ``models`` (keyed by each run's model name in
    ``external``: a CSV file of ``model,score``, or a mapping), None when none were given."""
    if external is None:
        return None
    if isinstance(external, (str, os.PathLike)):
        published = _read_external(external)
    elif isinstance(external, Mapping):
        published = {str(k): float(v) for k, v in external.items()}
        if not all(map(math.isfinite, published.values())):
            raise WikioriginError(f"compare: external={dict(external)!r}: every score must be a finite number")
    else:
        raise WikioriginError(
            f"compare: external={external!r}: give a CSV file of model,score or a mapping of models to scores"
        )
    names = [s["model"] for s in summaries]
    return {m: published[n] for m, n in zip(models, names) if n in published}


def correlation(models: list[str], values: list[float], theirs: dict[str, float]) -> tuple[float | None, list[str]]:
    """Pearson's r of ours against the external scores (None with fewer than two models in both;
    NaN when either side is constant), and the models the external scores lack."""
    pairs = [(v, theirs[m]) for m, v in zip(models, values) if m in theirs]
    missing = [m for m in models if m not in theirs]
    if len(pairs) < 2:
        return None, missing
    ys, xs = [p[0] for p in pairs], [p[1] for p in pairs]
    r = float(np.corrcoef(xs, ys)[0, 1]) if len(set(xs)) > 1 and len(set(ys)) > 1 else float("nan")
    return r, missing


def log_findings(warnings: list[str], notes: list[str]) -> None:
    """The settings' warnings and the counting notes, to the ``wikiorigin`` logger."""
    for line in warnings:
        logger.warning(line)
    for line in notes:
        logger.info(line)
