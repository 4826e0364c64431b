"""Evaluation results on disk: ``items.parquet`` (one row per question × model), ``summary.json``,
``report.md`` with tables, and PNG plots (matplotlib, drawn without a display).

:func:`write_results` writes one run's directory. :func:`compare_runs` reads several runs'
summaries and draws per-model bars and, given a table of external scores (CSV ``model,score``,
e.g. JMT-Bench), a scatter of ours against theirs with the correlation.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pyarrow as pa

from ..errors import WikioriginError
from ..files import provenance, write_table

__all__ = ["write_results", "markdown_table", "bar_plot", "compare_runs", "read_summary"]


def _fmt(value) -> str:
    if isinstance(value, float):
        return "–" if math.isnan(value) else f"{value:.3f}"
    return str(value)


def markdown_table(header: list[str], rows: list[list]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_fmt(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def _pyplot():
    try:
        import matplotlib
    except ImportError as exc:
        raise ImportError("plots need matplotlib: pip install 'wikiorigin[eval]'") from exc
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


def bar_plot(path, labels: list[str], values: list[float], title: str, ylabel: str = "accuracy",
             counts: list[int] | None = None) -> Path:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(4.0, 0.6 * len(labels) + 2), 3.6))
    bars = ax.bar(range(len(labels)), [0 if math.isnan(v) else v for v in values], color="#4c72b0")
    ax.set_xticks(range(len(labels)), labels, rotation=45, ha="right", fontsize=8)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    for bar, n in zip(bars, counts or []):
        ax.annotate(f"n={n}", (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                    ha="center", va="bottom", fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return Path(path)


def write_results(out, items: list[dict], summary: dict, report: str, *, schema: pa.Schema | None = None,
                  plots=(), meta: dict | None = None) -> Path:
    """Write one run: ``items.parquet`` (with provenance), ``summary.json``, ``report.md``;
    ``plots`` are ``(file name, function(path))`` pairs drawn into the directory."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pylist(items, schema=schema) if schema is not None else pa.Table.from_pylist(items)
    write_table(table, out / "items.parquet", table.schema, provenance(stage="eval", **(meta or {})))
    (out / "summary.json").write_text(json.dumps(summary, ensure_ascii=False, indent=2, default=_jsonable),
                                      encoding="utf-8")
    for name, draw in plots:
        draw(out / name)
    (out / "report.md").write_text(report.rstrip() + "\n", encoding="utf-8")
    return out


def _jsonable(value):
    if isinstance(value, float) and math.isnan(value):
        return None
    return str(value)


def read_summary(path) -> dict:
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


def compare_runs(runs: list, out, *, metric: str = "accuracy", external=None,
                 external_name: str = "external score") -> dict:
    """Per-model bars of ``metric`` over several runs' directories; with ``external`` (CSV of
    ``model,score``) a scatter of the two and their Pearson correlation. Writes
    ``models.png``, ``scatter.png`` and ``comparison.md`` into ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    summaries = [read_summary(r) for r in runs]
    missing = [str(r) for r, s in zip(runs, summaries) if metric not in s]
    if missing:
        raise WikioriginError(f"{', '.join(missing)}: no {metric!r} in the summary")
    models = [s["model"] for s in summaries]
    values = [float(s[metric]) for s in summaries]
    bar_plot(out / "models.png", models, values, f"{metric} by model", metric)
    rows = [[m, v] for m, v in zip(models, values)]
    result = {"models": dict(zip(models, values))}
    if external:
        theirs = _read_external(external)
        pairs = [(m, v, theirs[m]) for m, v in zip(models, values) if m in theirs]
        result["not_in_external"] = [m for m in models if m not in theirs]
        if len(pairs) >= 2:
            xs, ys = [p[2] for p in pairs], [p[1] for p in pairs]
            result["pearson"] = float(np.corrcoef(xs, ys)[0, 1]) if len(set(xs)) > 1 and len(set(ys)) > 1 \
                else float("nan")
            plt = _pyplot()
            fig, ax = plt.subplots(figsize=(4.5, 4))
            ax.scatter(xs, ys)
            for m, y, x in pairs:
                ax.annotate(m, (x, y), fontsize=7)
            ax.set_xlabel(external_name)
            ax.set_ylabel(metric)
            ax.set_title(f"r = {result['pearson']:.2f}")
            fig.tight_layout()
            fig.savefig(out / "scatter.png", dpi=120)
            plt.close(fig)
        rows = [[m, v, theirs.get(m, float("nan"))] for m, v in zip(models, values)]
    header = ["model", metric] + ([external_name] if external else [])
    text = f"# Models compared\n\n{markdown_table(header, rows)}\n"
    if "pearson" in result:
        text += f"\nPearson r = {result['pearson']:.3f} over {len(rows) - len(result['not_in_external'])} models.\n"
    (out / "comparison.md").write_text(text, encoding="utf-8")
    return result
