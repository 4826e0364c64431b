"""PNG plots of evaluation results (matplotlib, drawn without a display): the bar chart of
:func:`bar_plot`, and the per-model bars and the scatter against external scores that a
comparison's :meth:`~wikiorigin.evaluators.compare.Comparison.save` draws.
"""

from __future__ import annotations

import math
from pathlib import Path

from ..errors import MissingExtra
from .stats import SMALL
from .summaries import (
    _number,
    _order,
)

__all__ = ["bar_plot", "PLOT_MARK", "MARKED"]

PLOT_MARK = "wikiorigin eval plot"
"""Written into every plot's PNG metadata: how a plot of ours is told from someone's."""
MARKED = {"Description": PLOT_MARK}
"""The PNG metadata every plot is saved with (``savefig(..., metadata=MARKED)``)."""


def _pyplot():
    try:
        import matplotlib
    except ImportError as exc:
        raise MissingExtra(
            "plots need matplotlib (in the core install): reinstall wikiorigin (pip install -e . in its checkout)"
        ) from exc
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
    small = [n is not None and n < SMALL for n in (counts if counts is not None else [None] * len(labels))]
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
    fig.savefig(path, dpi=120, metadata=MARKED)
    plt.close(fig)
    return Path(path)


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
    fig.savefig(path, dpi=120, metadata=MARKED)
    plt.close(fig)


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
