"""Paired tests of runs on the questions both answered (:func:`paired_comparisons`: McNemar's exact
test or a paired permutation test, from :mod:`~wikiorigin.evaluators.stats`) and the neighbours of
a ranking they tell apart. Statistics only: their Markdown is
:mod:`~wikiorigin.evaluators.compare_text`'s.
"""

from __future__ import annotations

from pathlib import Path

from . import stats
from .compared import ITEM_COLUMNS, ComparedRun, item_scores

__all__ = ["paired_comparisons", "ITEM_COLUMNS", "ALPHA", "MIN_COMMON"]


ALPHA = 0.05
"""The level of the neighbour tests: neighbours whose Holm-corrected p is at least this are not
told apart."""
MIN_COMMON = 6
"""The fewest items every run must have answered for incomplete runs to be compared: on fewer,
no pair could be told apart (McNemar's exact test on n items gives p >= 2 * 0.5**n: 0.0625 at
n = 5, over :data:`ALPHA`), so a ranking would say nothing the runs can back."""


def _item_scores(run, metric: str) -> tuple[dict | None, bool, str | None]:
    """A run's per-question scores (:func:`~wikiorigin.evaluators.compared.item_scores`); ``run``:
    a :class:`~wikiorigin.evaluators.compared.ComparedRun` or a results directory."""
    view = run if isinstance(run, ComparedRun) else ComparedRun(str(run), {}, directory=Path(run))
    return item_scores(view, metric)


def paired_comparisons(
    runs: list,
    models: list[str],
    metric: str,
    *,
    seed: int | None = None,
    resamples: int | None = None,
    items: set | None = None,
) -> dict:
    """Every pair of runs tested on the questions both answered (joined by question id): the
    difference of ``metric`` (first minus second), its 95% interval and p-value
    (:func:`~wikiorigin.evaluators.stats.paired_test`: McNemar's exact test for 0/1 outcomes, a
    paired permutation test for scores), ``n`` and, where the runs' questions differ, how many
    each has alone; ``p_holm``: the p-values Holm-corrected over all the pairs tested. Runs with
    no question in common, or without per-question scores, are listed in ``unpaired`` with the
    reason. ``items``: the item keys (:func:`~wikiorigin.evaluators.itemsets.item_key`) every
    pair is tested on, no other (None: each pair on the items both answered). Returns
    ``{"pairs": [...], "unpaired": [...], "seed": ..., "resamples": ...}``."""
    seed, resamples = stats.SEED if seed is None else seed, stats.RESAMPLES if resamples is None else resamples
    scores = [_item_scores(run, metric) for run in runs]
    pairs, unpaired = [], []
    for i in range(len(runs)):
        for j in range(i + 1, len(runs)):
            found = _pair((scores[i], scores[j]), (models[i], models[j]), items, seed, resamples)
            if isinstance(found, str):
                unpaired.append({"a": models[i], "b": models[j], "reason": found})
            else:
                pairs.append({"a": models[i], "b": models[j], **found})
    for pair, corrected in zip(pairs, stats.holm([p["p_value"] for p in pairs])):
        pair["p_holm"] = corrected
    return {"pairs": pairs, "unpaired": unpaired, "seed": seed, "resamples": resamples}


def _pair(scores: tuple, models: tuple, items: set | None, seed: int, resamples: int) -> dict | str:
    """The paired test of two runs' scores (:func:`_item_scores`), with how many items each
    answered alone where the two differ; or why they are not paired, naming the run (of
    ``models``) without scores."""
    (a, binary, why_a), (b, _, why_b) = scores
    if a is None or b is None:
        return f"{models[0]}: {why_a}" if a is None else f"{models[1]}: {why_b}"
    common = [k for k in a if k in b and (items is None or k in items)]
    if not common:
        return "no question in common: runs on different questions are not paired"
    test = stats.paired_test(
        [float(a[k]) for k in common], [float(b[k]) for k in common], binary=binary, seed=seed, resamples=resamples
    )
    if len(common) < max(len(a), len(b)):
        test.update(only_a=len(a) - len(common), only_b=len(b) - len(common))
    return test


def _neighbours(order: list[str], pairs: list[dict]) -> list[dict | None]:
    """For each model in ranking ``order`` but the last: the test against the next one down
    (``p_holm``, ``tell_apart``: p_holm < :data:`ALPHA`), or None when the two were not paired."""
    found = {frozenset((p["a"], p["b"])): p for p in pairs}
    out = []
    for upper, lower in zip(order, order[1:]):
        pair = found.get(frozenset((upper, lower)))
        out.append(
            None
            if pair is None
            else {
                "model": lower,
                "p_value": pair["p_value"],
                "p_holm": pair["p_holm"],
                "tell_apart": pair["p_holm"] < ALPHA,
            }
        )
    return out + [None] if order else []
