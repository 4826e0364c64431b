"""Paired tests of runs on the questions both answered (:func:`paired_comparisons`: McNemar's exact
test or a paired permutation test, from :mod:`~wikiorigin.evaluators.stats`), and their Markdown
for ``comparison.md``.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from . import stats
from .itemsets import KEYED, failed_item, item_key
from .summaries import (
    _interval_text,
    _nan,
    markdown_table,
)

__all__ = ["paired_comparisons", "ITEM_COLUMNS", "ALPHA", "MIN_COMMON"]


# The per-question column of items.parquet behind each summary figure that ``eval compare``
# can test in pairs: 0/1 columns get McNemar's test, scores a paired permutation test.
ITEM_COLUMNS = {
    "accuracy": "correct",
    "acc": "correct",
    "acc_norm": "correct_norm",
    "acc_norm_bytes": "correct_bytes",
    "exact": "exact",
    "exact_romanized": "exact_romanized",
    "chrf": "chrf",
    "chrf_best": "chrf_best",
    "mean": "rating",
}
"""Summary figure -> the column of ``items.parquet`` that gives it per question (``mean``: a
judged run's ``rating``), for :func:`paired_comparisons`."""
ALPHA = 0.05
"""The level of the neighbour tests: neighbours whose Holm-corrected p is at least this are not
told apart."""
MIN_COMMON = 6
"""The fewest items every run must have answered for incomplete runs to be compared: on fewer,
no pair could be told apart (McNemar's exact test on n items gives p >= 2 * 0.5**n: 0.0625 at
n = 5, over :data:`ALPHA`), so a ranking would say nothing the runs can back."""


def _item_scores(run, metric: str) -> tuple[dict | None, bool, str | None]:
    """A run's per-question scores for ``metric`` by item (its id and content:
    :func:`~wikiorigin.evaluators.itemsets.item_key`), those whose request failed left out,
    whether they are 0/1, or why there are none."""
    import pyarrow.parquet as pq

    column = ITEM_COLUMNS.get(metric)
    path = Path(run) / "items.parquet"
    if column is None:
        return None, False, f"no per-question column for {metric!r}"
    if not path.exists():
        return None, False, "no items.parquet"
    schema = pq.read_schema(path)
    if column not in schema.names:
        return None, False, f"items.parquet has no column {column!r}"
    if not {"id", "question", "title"} & set(schema.names):
        return None, False, "items.parquet has neither question ids nor questions"
    rows = pq.read_table(path, columns=[n for n in schema.names if n in KEYED or n == column]).to_pylist()
    keys = [item_key(r) for r in rows]
    if len(set(keys)) < len(keys):
        return None, False, "items.parquet repeats an item (id and question)"
    binary = pa.types.is_boolean(schema.field(column).type)
    return {k: r[column] for k, r in zip(keys, rows) if r[column] is not None and not failed_item(r)}, binary, None


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
            (a, binary, why_a), (b, _, why_b) = scores[i], scores[j]
            if a is None or b is None:
                unpaired.append(
                    {
                        "a": models[i],
                        "b": models[j],
                        "reason": f"{models[i if a is None else j]}: {why_a if a is None else why_b}",
                    }
                )
                continue
            common = [k for k in a if k in b and (items is None or k in items)]
            if not common:
                unpaired.append(
                    {
                        "a": models[i],
                        "b": models[j],
                        "reason": "no question in common: runs on different questions are not paired",
                    }
                )
                continue
            test = stats.paired_test(
                [float(a[k]) for k in common],
                [float(b[k]) for k in common],
                binary=binary,
                seed=seed,
                resamples=resamples,
            )
            pair = {"a": models[i], "b": models[j], **test}
            if len(common) < max(len(a), len(b)):
                pair.update(only_a=len(a) - len(common), only_b=len(b) - len(common))
            pairs.append(pair)
    for pair, corrected in zip(pairs, stats.holm([p["p_value"] for p in pairs])):
        pair["p_holm"] = corrected
    return {"pairs": pairs, "unpaired": unpaired, "seed": seed, "resamples": resamples}


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


def _paired_markdown(metric: str, ranking: list[dict], tests: dict) -> str:
    """The ranking with intervals and the neighbour tests, then every pair, for comparison.md."""

    def versus(entry):
        if entry["vs_next"] is None:
            return "not paired" if entry is not ranking[-1] else ""
        nxt = entry["vs_next"]
        return f"{'>' if nxt['tell_apart'] else '≈'} {nxt['model']} (Holm p = {nxt['p_holm']:.3g})"

    lines = [
        "## Paired tests",
        "",
        "Runs joined by question (its id, else its text); each pair tested on the questions both answered. "
        f"`≈`: cannot be told apart from the next model down (Holm-corrected p ≥ {ALPHA} over all "
        f"{len(tests['pairs'])} pairs); † fewer than 30 questions.",
        "",
        markdown_table(
            ["rank", "model", metric, "95% interval", "n", "vs next"],
            [
                [
                    e["rank"],
                    e["model"],
                    _nan(e["value"]),
                    _interval_text(e["ci95"]),
                    f"{e['n']}{'†' if e['small'] else ''}" if e["n"] is not None else "–",
                    versus(e),
                ]
                for e in ranking
            ],
        ),
    ]
    if tests["pairs"]:
        lines += [
            "",
            markdown_table(
                ["a", "b", "n", "a − b", "95% interval", "p", "p (Holm)", "test"],
                [
                    [
                        p["a"],
                        p["b"],
                        p["n"],
                        p["difference"],
                        _interval_text(p["ci95"]),
                        f"{p['p_value']:.3g}",
                        f"{p['p_holm']:.3g}",
                        p["test"],
                    ]
                    for p in tests["pairs"]
                ],
            ),
        ]
        partial = [p for p in tests["pairs"] if "only_a" in p]
        if partial:
            lines += [
                "",
                "Tested on the questions in common only: "
                + "; ".join(
                    f"{p['a']} vs {p['b']}: {p['n']} in common ({p['only_a']} and {p['only_b']} answered by one only)"
                    for p in partial
                )
                + ".",
            ]
    if tests["unpaired"]:
        lines += [
            "",
            "Not paired: " + "; ".join(f"{u['a']} and {u['b']} ({u['reason']})" for u in tests["unpaired"]) + ".",
        ]
    lines += [
        "",
        "Intervals of a model's figure: as in its summary (Wilson for proportions, Student t for means); "
        f"of a difference: paired bootstrap (BCa, {tests['resamples']:,} resamples, seed {tests['seed']}). "
        "Tests: McNemar's exact test for 0/1 outcomes, a paired permutation test (the same resamples) for "
        "scores.",
    ]
    return "\n".join(lines)
