"""The comparison of several runs (:func:`compare_runs`): per-model bars with their intervals (best
first) and, given a table of external scores (CSV ``model,score``, e.g. JMT-Bench), a scatter of
ours against theirs with the correlation; every pair of runs tested on the questions both
answered (:mod:`~wikiorigin.evaluators.paired`), written to ``comparison.json`` and
``comparison.md`` with a ranking that marks the neighbours it cannot tell apart.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from ..errors import WikioriginError
from ..files import write_all
from ..log import logger
from . import stats
from .itemsets import check_complete, check_distinct, check_same_items
from .paired import ALPHA, MIN_COMMON, _item_scores, _neighbours, _paired_markdown, paired_comparisons
from .plots import _bars, _scatter
from .results import COMPARISON_MARK
from .signature import differences
from .stats import SMALL
from .summaries import (
    _number,
    _order,
    markdown_table,
    read_summary,
    summary_json,
)

__all__ = ["compare_runs", "ranking_table"]


def _read_external(path) -> dict[str, float]:
    scores = {}
    with open(path, newline="", encoding="utf-8") as f:
        for line, row in enumerate(csv.DictReader(f), 2):
            try:
                scores[row["model"]] = float(row["score"])
            except (KeyError, TypeError, ValueError):
                raise WikioriginError(f"{path}: line {line}: expected columns model,score with a number") from None
    return scores


# Settings that say how a run's answers were counted rather than how they were asked: a run
# whose recorded responses cover fewer of the questions ("807/810") answered the same questions
# as the others, the rest counting as unanswered. Comparisons explain these; they do not warn.
COUNTING = frozenset({"responses"})


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
    rows = [[rank, models[i], values[i]] for rank, i in enumerate(order, 1)]
    if theirs is not None:
        header += [external_name, "difference"]
        for row in rows:
            published = theirs.get(row[1], float("nan"))
            row += [published, row[2] - published]
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


def _common_figures(runs: list, models: list[str], metric: str, total: int | None) -> tuple[list[dict], set]:
    """Each run's figure over the items every run answered (incomplete runs compared under
    ``allow_failures``), and those items' keys. Refused (:class:`~wikiorigin.errors.WikioriginError`)
    where a run's items cannot be matched, or the runs share fewer than :data:`MIN_COMMON`."""
    scores = [_item_scores(run, metric) for run in runs]
    for run, (found, _, why) in zip(runs, scores):
        if found is None:
            raise WikioriginError(f"{run}: {why}: its answered items cannot be matched with the other runs'")
    common = set.intersection(*(set(found) for found, _, _ in scores))
    if len(common) < MIN_COMMON:
        answered = ", ".join(f"{m} {len(found)}" for m, (found, _, _) in zip(models, scores))
        shared = f"only {len(common)} answered items in common" if common else "no answered item in common"
        raise WikioriginError(
            f"{', '.join(map(str, runs))}: the runs have {shared} "
            f"(answered: {answered}{f', of {total}' if total else ''}), fewer than {MIN_COMMON}: no pair "
            "could be told apart on so few; run the incomplete runs' commands again to finish them"
        )
    figures = []
    for found, binary, _ in scores:
        values = [found[k] for k in sorted(common)]
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


def _comparison_markdown(result: dict, models: int, paired: str, signatures: list[tuple[str, str]]) -> str:
    """comparison.md: the settings' warnings, the ranking, the correlation with the external
    scores, the paired tests, the runs' signatures."""
    text = "# Models compared\n\n"
    if result["warnings"]:
        text += "**Not comparable as they stand:** these runs' settings differ in more than the model.\n\n"
        text += "".join(f"- {w}\n" for w in result["warnings"]) + "\n"
    text += f"{result['ranking']}\n"
    if result["notes"]:
        text += "\nHow the runs were counted:\n\n" + "".join(f"- {n}.\n" for n in result["notes"])
    if "pearson" in result:
        text += f"\nPearson r = {result['pearson']:.3f} over {models - len(result['not_in_external'])} models.\n"
    text += f"\n{paired}\n"
    if signatures:
        text += "\n## Signatures\n\n" + "".join(f"- {m}: `{line}`\n" for m, line in signatures)
    return text


def _common_note(n: int, total: int | None) -> str:
    """The line that says incomplete runs are compared over the items every one answered."""
    left = f" ({total - n} of the {total} left out)" if total else ""
    return f"figures, ranking and tests over the {n} items every run answered{left}, the same items for every run"


def compare_runs(
    runs: list,
    out,
    *,
    metric: str = "accuracy",
    external=None,
    external_name: str = "external score",
    seed: int | None = None,
    resamples: int | None = None,
    allow_failures: bool = False,
) -> dict:
    """Per-model bars of ``metric`` over several runs' directories and their ranking; with
    ``external`` (CSV of ``model,score``, e.g. a paper's published figures) the ranking shows
    them beside ours with the difference, and a scatter gives the Pearson correlation.
    Every pair of runs is tested on the questions both answered (:func:`paired_comparisons`;
    ``seed`` and ``resamples`` of its bootstraps and permutations), and the ranking marks the
    neighbours it cannot tell apart (Holm-corrected p ≥ 0.05). Runs whose settings differ in
    more than the model are not comparable: each such difference is a line of ``warnings``,
    logged (:mod:`wikiorigin.log`) and written into ``comparison.md``; a run whose recorded
    responses cover fewer of the same questions is explained there instead (``notes``: the
    missing count as unanswered, as a paper scoring every row counts them). The result holds the
    ``ranking`` (a Markdown table) and the ``ties`` (neighbours not told apart). Writes ``models.png`` (95% intervals as error bars),
    ``scatter.png``, ``comparison.md`` and ``comparison.json`` (``pairs``, ``unpaired``,
    ``ranking``, ``warnings``, ``notes``), together or not at all
    (:func:`~wikiorigin.files.write_all`).

    Only runs over the same items are compared: the same ids with the same content
    (:mod:`~wikiorigin.evaluators.itemsets`; a run's ``items.parquet``, else its summary's
    ``item_set``). Runs over different item sets are refused
    (:class:`~wikiorigin.errors.WikioriginError` naming two of them), never ranked on their
    common part: a figure over 400 questions and one over 20 are not the same number. An
    incomplete run (``complete: false``: requests that failed) is refused
    (:class:`~wikiorigin.errors.ParameterError` naming it and its failed count) unless
    ``allow_failures``; then every figure, the ranking and every pair are over the items all
    the runs answered (``common`` in ``comparison.json``; each pair says how many each answered
    alone), and notes say so; fewer than :data:`MIN_COMMON` such items are refused. A run given
    twice (the same directory, or the same ``items.parquet``) is refused. Nothing is written
    before these checks."""
    summaries, models, figures, common, notes = _checked(runs, metric, allow_failures)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    values = [f["value"] for f in figures]
    writers = [(out / "models.png", lambda tmp: _bars(tmp, models, figures, metric))]
    warnings = _settings_warnings([str(r) for r in runs], summaries)
    result = {"models": dict(zip(models, values)), "warnings": warnings, "notes": notes}
    tests = paired_comparisons(runs, models, metric, seed=seed, resamples=resamples, items=common)
    ranking = _ranking_entries(models, figures, tests["pairs"])
    result.update(
        tests,
        ties=[
            [e["model"], e["vs_next"]["model"]]
            for e in ranking
            if e["vs_next"] is not None and not e["vs_next"]["tell_apart"]
        ],
    )
    names = [s["model"] for s in summaries]
    published = _read_external(external) if external else None
    theirs = None if published is None else {m: published[n] for m, n in zip(models, names) if n in published}
    if theirs is not None:
        writers += _external(result, models, values, theirs, metric, external_name, out)
    header, rows = ranking_table(models, values, metric, theirs, external_name)
    result["ranking"] = markdown_table(header, rows)
    text = _comparison_markdown(
        result,
        len(rows),
        _paired_markdown(metric, ranking, tests),
        [(m, s["signature"]) for m, s in zip(models, summaries) if s.get("signature")],
    )
    found = {
        "metric": metric,
        "runs": dict(zip(models, map(str, runs))),
        **tests,
        **({} if common is None else {"common": {"n": len(common), "of": summaries[0].get("n")}}),
        "ranking": ranking,
        "alpha": ALPHA,
        "correction": "holm",
        "warnings": warnings,
        "notes": notes,
    }
    writers += [
        (out / "comparison.md", lambda tmp: tmp.write_text(f"{text}\n{COMPARISON_MARK}\n", encoding="utf-8")),
        (out / "comparison.json", lambda tmp: tmp.write_text(summary_json(found), encoding="utf-8")),
    ]
    write_all(writers)
    for line in warnings:
        logger.warning(line)
    for line in notes:
        logger.info(line)
    return result


def _checked(runs: list, metric: str, allow_failures: bool) -> tuple:
    """The runs' summaries, model names, figures (and the items they are over, None: each run's
    own) and notes, once every check of :func:`compare_runs` has passed."""
    summaries = [read_summary(r) for r in runs]
    missing = [str(r) for r, s in zip(runs, summaries) if metric not in s]
    if missing:
        raise WikioriginError(f"{', '.join(missing)}: no {metric!r} in the summary")
    names = [s["model"] for s in summaries]
    # a model run twice (another setting, another data file) is told apart by its directory
    models = [n if names.count(n) == 1 else f"{n} ({Path(r).name})" for n, r in zip(names, runs)]
    check_distinct([str(r) for r in runs])
    incomplete = check_complete([str(r) for r in runs], summaries, models, allow_failures=allow_failures)
    check_same_items([str(r) for r in runs], summaries)
    figures, common = _summary_figures(summaries, metric), None
    if incomplete:
        figures, common = _common_figures(runs, models, metric, summaries[0].get("n"))
        incomplete.append(_common_note(len(common), summaries[0].get("n")))
    notes = [n for n in (_counting_note(m, s) for m, s in zip(models, summaries)) if n] + incomplete
    return summaries, models, figures, common, notes


def _external(result: dict, models, values, theirs: dict, metric: str, external_name: str, out: Path) -> list:
    """The correlation of ours with the published figures into ``result``; the scatter's writer
    (none with fewer than two models in both)."""
    pairs = [(m, v, theirs[m]) for m, v in zip(models, values) if m in theirs]
    result["not_in_external"] = [m for m in models if m not in theirs]
    if len(pairs) < 2:
        return []
    xs, ys = [p[2] for p in pairs], [p[1] for p in pairs]
    result["pearson"] = float(np.corrcoef(xs, ys)[0, 1]) if len(set(xs)) > 1 and len(set(ys)) > 1 else float("nan")
    return [(out / "scatter.png", lambda tmp: _scatter(tmp, pairs, metric, external_name, result["pearson"]))]
