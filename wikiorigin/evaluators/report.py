"""Evaluation results on disk: ``items.parquet`` (one row per question × model), ``summary.json``,
``report.md`` with tables, and PNG plots (matplotlib, drawn without a display).

:func:`write_results` writes one run's directory, its report ending with the 95% interval of
every figure (:func:`interval_tables`). :func:`compare_runs` reads several runs' summaries and
draws per-model bars with their intervals (best first) and, given a table of external scores (CSV
``model,score``, e.g. JMT-Bench), a scatter of ours against theirs with the correlation; it
tests every pair of runs on the questions both answered (:func:`paired_comparisons`: McNemar's
exact test or a paired permutation test, from :mod:`~wikiorigin.evaluators.stats`) and writes
them to ``comparison.json`` with a ranking that marks the neighbours it cannot tell apart.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pyarrow as pa

from ..errors import MissingExtra, WikioriginError
from ..files import provenance, write_all, write_table
from ..log import logger
from . import stats
from .itemsets import KEYED, check_complete, check_distinct, check_same_items, failed_item, item_key
from .results import COMPARISON_MARK, REPORT_MARK
from .signature import differences, signature
from .stats import SMALL

__all__ = [
    "write_results",
    "summary_json",
    "markdown_table",
    "bar_plot",
    "compare_runs",
    "read_summary",
    "ranking_table",
    "interval_tables",
    "incomplete_note",
    "paired_comparisons",
    "ITEM_COLUMNS",
]


def _fmt(value) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return "–" if math.isnan(value) else f"{value:.3f}"
    return str(value)


def markdown_table(header: list[str], rows: list[list]) -> str:
    """A Markdown table of ``header`` and ``rows`` (floats to 3 decimals, NaN as ``–``)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_fmt(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def _pyplot():
    try:
        import matplotlib
    except ImportError as exc:
        raise MissingExtra("plots need matplotlib: pip install -e '.[eval]' in the wikiorigin checkout") from exc
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib import font_manager

    installed = {f.name for f in font_manager.fontManager.ttflist}
    cjk = [name for name in _CJK_FONTS if name in installed]
    plt.rcParams["font.family"] = ["DejaVu Sans", *cjk]
    return plt


# Fonts with Japanese glyphs, used when installed; the known type and region labels are
# drawn in English anyway (see ``mcq.PLOT_LABELS``) so plots read well without them.
_CJK_FONTS = ("Noto Sans CJK JP", "IPAexGothic", "IPAGothic", "TakaoGothic", "Hiragino Sans", "Yu Gothic")


def bar_plot(
    path,
    labels: list[str],
    values: list[float],
    title: str,
    ylabel: str = "accuracy",
    counts: list[int] | None = None,
    intervals: list | None = None,
    *,
    sort: bool = True,
) -> Path:
    """Draw a bar chart of ``values`` by ``labels`` (NaN drawn as 0, ``counts`` written over
    the bars) to the image file ``path``; returns ``path``. The bars go from the highest value
    to the lowest (NaN last, ties by label) unless ``sort`` is false. ``intervals``: a
    ``[low, high]`` (or None) per bar, drawn as error bars. A bar whose count is under
    :data:`~wikiorigin.evaluators.stats.SMALL` is hatched and pale; the title says what the
    error bars and the hatching mean. Needs matplotlib (a dependency)."""
    if sort:
        order = sorted(range(len(labels)), key=lambda i: (*_order(_number(values[i])), str(labels[i])))
        labels, values = [labels[i] for i in order], [values[i] for i in order]
        counts = None if counts is None else [counts[i] for i in order]
        intervals = None if intervals is None else [intervals[i] for i in order]
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(4.0, 0.6 * len(labels) + 2), 3.6))
    heights = [0 if v is None or math.isnan(v) else v for v in values]
    small = [n is not None and n < SMALL for n in (counts or [None] * len(labels))]
    bars = ax.bar(
        range(len(labels)), heights, color=["#a6bddb" if s else "#4c72b0" for s in small], edgecolor="#2b4a7a"
    )
    for bar, is_small in zip(bars, small):
        if is_small:
            bar.set_hatch("//")
    intervals = intervals if intervals and any(intervals) else [None] * len(labels)
    for x, (height, ci) in enumerate(zip(heights, intervals)):
        if ci:
            ax.errorbar(
                x,
                height,
                yerr=[[max(0.0, height - ci[0])], [max(0.0, ci[1] - height)]],
                fmt="none",
                ecolor="black",
                capsize=3,
                linewidth=1,
            )
    ax.set_xticks(range(len(labels)), labels, rotation=45, ha="right", fontsize=8)
    ax.set_ylabel(ylabel)
    notes = (["bars: 95% intervals"] if any(intervals) else []) + ([f"hatched: n < {SMALL}"] if any(small) else [])
    ax.set_title(title + (f" ({'; '.join(notes)})" if notes else ""), fontsize=10)
    tops = [max(h, ci[1]) if ci else h for h, ci in zip(heights, intervals)]
    for bar, n, top in zip(bars, counts or [], tops):
        ax.annotate(f"n={n}", (bar.get_x() + bar.get_width() / 2, top), ha="center", va="bottom", fontsize=7)
    if tops and max(tops) > 0:
        ax.set_ylim(top=max(tops) * 1.1)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return Path(path)


def write_results(
    out,
    items: list[dict],
    summary: dict,
    report: str,
    *,
    schema: pa.Schema | None = None,
    plots=(),
    meta: dict | None = None,
    settings: dict | None = None,
    intervals: bool = True,
) -> Path:
    """Write one run: ``items.parquet`` (with provenance), ``summary.json``, ``report.md``;
    ``plots`` are ``(file name, function(path))`` pairs drawn into the directory. The files
    are written together or not at all (:func:`~wikiorigin.files.write_all`: a full disk leaves
    the previous run's files as they were), the report ending with
    :data:`~wikiorigin.evaluators.results.REPORT_MARK`; the plots are named in the provenance,
    and a previous run's plots that this one does not draw are removed. ``settings``
    (see :mod:`~wikiorigin.evaluators.signature`) go into the summary as ``settings`` and
    ``signature``, into the report as its signature line, and into the Parquet provenance.
    Unless ``intervals`` is false (a report that shows them itself), the report ends with
    :func:`interval_tables` of the summary. The summary is strict JSON: NaN and infinities are
    written as ``null``. A summary that says ``complete`` (and ``failed``) has it in the
    provenance too; an incomplete run's report opens by saying so (:func:`incomplete_note`)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    extra = interval_tables(summary) if intervals else ""
    if extra:
        report = f"{report.rstrip()}\n\n{extra}"
    if "complete" in summary:
        meta = {**(meta or {}), "complete": summary["complete"], "failed": summary.get("failed", 0)}
        if not summary["complete"]:
            report = f"{incomplete_note(summary)}\n\n{report}"
    if settings is not None:
        line = signature(settings)
        summary = {**summary, "settings": settings, "signature": line}
        report = f"{report.rstrip()}\n\nSignature: `{line}`"
        meta = {**(meta or {}), "signature": line}
    table = pa.Table.from_pylist(items, schema=schema) if schema is not None else pa.Table.from_pylist(items)
    report = f"{report.rstrip()}\n\n{REPORT_MARK}\n"
    drawn, before = [name for name, _ in plots], _plots_written(out)
    meta = {**(meta or {}), "plots": drawn}
    write_all(
        [
            (
                out / "items.parquet",
                lambda tmp: write_table(table, tmp, table.schema, provenance(stage="eval", **(meta or {}))),
            ),
            (out / "summary.json", lambda tmp: tmp.write_text(summary_json(summary), encoding="utf-8")),
            *((out / name, draw) for name, draw in plots),
            (out / "report.md", lambda tmp: tmp.write_text(report, encoding="utf-8")),
        ]
    )
    for name in set(before) - set(drawn):  # a previous run's plots that this one does not draw
        (out / name).unlink(missing_ok=True)
    return out


def _plots_written(out: Path) -> list[str]:
    """The plots the run in ``out`` drew, as its ``items.parquet`` records them (none: no run)."""
    from ..files import read_provenance

    path = out / "items.parquet"
    try:
        found = read_provenance(path).get("plots") if path.is_file() else None
    except (OSError, ValueError):  # not a run's file: nothing of it to remove
        return []
    return [p for p in found or [] if isinstance(p, str) and p.endswith(".png") and "/" not in p and "\\" not in p]


def incomplete_note(summary: dict) -> str:
    """The line an incomplete run's report opens with: how many requests failed, how many items
    they left without an answer (out of the figures), and how to finish the run."""
    failed, requests = summary.get("failed", 0), summary.get("failed_requests", 0)
    left = f"; {failed} items have no answer and are left out of every figure below" if failed else ""
    return (
        f"> **Incomplete run (complete: false):** {requests} requests failed after their retries{left}. "
        "Run the same command again to ask only those (answers paid for come from the cache)."
    )


def _interval_text(pair) -> str:
    return "–" if not pair or pair[0] is None else f"[{pair[0]:.3f}, {pair[1]:.3f}]"


def _metrics(block: dict) -> list[str]:
    """The names in a summary block that carry an interval (``<name>_ci95``), in its order."""
    return [k for k in block if f"{k}_ci95" in block]


def _blocks(groups: dict, prefix: str = "") -> list[tuple[str, dict]]:
    """``(label, block)`` of a summary's group dict, nested groups as ``outer / inner``."""
    found = []
    for key, value in groups.items():
        if not isinstance(value, dict):
            continue
        if "n" in value:
            found.append((f"{prefix}{key}", value))
        else:
            found += _blocks(value, f"{prefix}{key} / ")
    return found


def interval_tables(summary: dict) -> str:
    """Markdown tables of every figure in ``summary`` that has a 95% interval: the overall
    ones (value, interval, standard error), then each ``by_...`` group (n, each figure with its
    interval, and ``†`` where the group has fewer than 30 observations). Empty when the
    summary has no intervals."""
    top = _metrics(summary)
    if not top:
        return ""
    lines = [
        "## 95% intervals",
        "",
        "Proportions: Wilson score interval; means: Student t. Standard error as lm-evaluation-harness's "
        f"`mean_stderr` (n-1). † marks groups of fewer than {SMALL}.",
        "",
        markdown_table(
            ["figure", "value", "95% interval", "stderr"],
            [
                [m, _nan(summary[m]), _interval_text(summary[f"{m}_ci95"]), _nan(summary.get(f"{m}_stderr"))]
                for m in top
            ],
        ),
    ]
    for key, groups in summary.items():
        if not key.startswith("by_") or not isinstance(groups, dict):
            continue
        blocks = [(label, block) for label, block in _blocks(groups) if _metrics(block)]
        if not blocks:
            continue
        names = _metrics(blocks[0][1])
        header = [key.removeprefix("by_").replace("_", " "), "n"]
        for m in names:
            header += [m, f"{m} 95%"]
        rows = []
        for label, block in blocks:
            row = [label, block["n"]]
            for m in names:
                row += [_nan(block.get(m)), _interval_text(block.get(f"{m}_ci95"))]
            rows.append(row + ["†" if block.get("small") else ""])
        lines += ["", f"### {header[0]}", "", markdown_table(header + ["n<30"], rows)]
    return "\n".join(lines)


def _nan(value):
    return float("nan") if value is None else value


def summary_json(summary: dict) -> str:
    """``summary`` as strict JSON (no NaN: not-a-number and infinities become ``null``)."""
    return json.dumps(_finite(summary), ensure_ascii=False, indent=2, allow_nan=False, default=_jsonable)


def _finite(value):
    """``value`` with every float that is NaN or infinite, at any depth, replaced by None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _jsonable(value):
    """A value json cannot write: a numpy scalar or array as Python numbers, else its text."""
    if hasattr(value, "tolist"):
        return _finite(value.tolist())
    return str(value)


def read_summary(path) -> dict:
    """The ``summary.json`` of a run, given the run directory or the file itself. Raises
    :class:`~wikiorigin.errors.WikioriginError` if there is no such file."""
    path = Path(path)
    file = path / "summary.json" if path.is_dir() else path
    try:
        return json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise WikioriginError(f"{file}: no such summary (run `wikiorigin eval ...` first)") from None
    except json.JSONDecodeError as exc:
        raise WikioriginError(f"{file}: not JSON ({exc})") from None


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


def _number(value) -> float:
    return float("nan") if value is None else float(value)


def _order(value: float) -> tuple:
    return (math.isnan(value), -value if not math.isnan(value) else 0.0)


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


def _scatter(path, pairs, metric: str, external_name: str, pearson: float) -> None:
    """Ours against the external scores, one labelled point per model, with the line y = x
    (where ours equals theirs) and the correlation in the title."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 5.2))
    xs, ys = [p[2] for p in pairs], [p[1] for p in pairs]
    low, high = min(xs + ys), max(xs + ys)
    pad = 0.06 * ((high - low) or 1.0)
    low, high = low - pad, high + pad
    ax.plot([low, high], [low, high], color="#999999", linestyle="--", linewidth=1, label="y = x", zorder=1)
    ax.scatter(xs, ys, color="#4c72b0", zorder=2)
    # labels right of their points, nudged apart vertically where points lie close together
    step = 0.045 * (high - low)
    placed: list[float] = []
    for m, y, x in sorted(pairs, key=lambda p: p[1]):
        at = y
        while any(abs(at - other) < step for other in placed):
            at += step / 2
        placed.append(at)
        ax.annotate(
            m,
            (x, y),
            xytext=(x + 0.02 * (high - low), at),
            fontsize=8,
            va="center",
            arrowprops={"arrowstyle": "-", "color": "#bbbbbb", "linewidth": 0.6} if at != y else None,
        )
    ax.set_xlim(low, high + 0.45 * (high - low))  # room for the labels on the right
    ax.set_ylim(low, high)
    ax.set_xlabel(external_name)
    ax.set_ylabel(f"{metric} (ours)")
    ax.set_title(f"ours against {external_name}: Pearson r = {pearson:.3f}", fontsize=10)
    ax.legend(loc="upper left", fontsize=8, frameon=False)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


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
ALPHA = 0.05  # neighbours whose Holm-corrected p is at least this are not told apart
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


def _bars(path, models: list[str], figures: list[dict], metric: str) -> None:
    """models.png: each model's figure with its interval and count."""
    counts = [f["n"] for f in figures]
    bar_plot(
        path,
        models,
        [f["value"] for f in figures],
        f"{metric} by model",
        metric,
        counts=counts if None not in counts else None,
        intervals=[f["ci95"] for f in figures],
    )


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
