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
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa

from ..errors import MissingExtra, WikioriginError
from ..files import atomic, provenance, write_table, write_text

__all__ = ["write_results", "summary_json", "markdown_table", "bar_plot", "compare_runs", "read_summary",
           "ranking_table"]


def _fmt(value) -> str:
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


def bar_plot(path, labels: list[str], values: list[float], title: str, ylabel: str = "accuracy",
             counts: list[int] | None = None) -> Path:
    """Draw a bar chart of ``values`` by ``labels`` (NaN drawn as 0, ``counts`` written over
    the bars) to the image file ``path``; returns ``path``. Needs matplotlib (a dependency)."""
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
                  plots=(), meta: dict | None = None, settings: dict | None = None) -> Path:
    """Write one run: ``items.parquet`` (with provenance), ``summary.json``, ``report.md``;
    ``plots`` are ``(file name, function(path))`` pairs drawn into the directory. ``settings``
    (see :mod:`~wikiorigin.evaluators.signature`) go into the summary as ``settings`` and
    ``signature``, into the report as its signature line, and into the Parquet provenance.
    The summary is strict JSON: NaN and infinities are written as ``null``."""
    from .signature import signature

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    if settings is not None:
        line = signature(settings)
        summary = {**summary, "settings": settings, "signature": line}
        report = f"{report.rstrip()}\n\nSignature: `{line}`"
        meta = {**(meta or {}), "signature": line}
    table = pa.Table.from_pylist(items, schema=schema) if schema is not None else pa.Table.from_pylist(items)
    write_table(table, out / "items.parquet", table.schema, provenance(stage="eval", **(meta or {})))
    write_text(out / "summary.json", summary_json(summary))
    for name, draw in plots:
        with atomic(out / name) as tmp:
            draw(tmp)
    write_text(out / "report.md", report.rstrip() + "\n")
    return out


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


def _settings_warnings(runs: list[str], summaries: list[dict]) -> list[str]:
    """One line per run whose settings differ from the first run's in more than the model
    (which fields, with both values), and one for the runs that record no settings."""
    from .signature import differences

    bare = [run for run, s in zip(runs, summaries) if s.get("settings") is None]
    lines = [f"{', '.join(bare)}: no settings recorded (older runs?), so comparability is unknown"] if bare else []
    dressed = [(run, s["settings"]) for run, s in zip(runs, summaries) if s.get("settings") is not None]
    for run, settings in dressed[1:]:
        diff = differences(dressed[0][1], settings)
        if diff:
            said = "; ".join(f"{k}: {b!r} vs {a!r}" for k, (a, b) in diff.items())
            lines.append(f"{run} differs from {dressed[0][0]} in {', '.join(diff)} ({said})")
    return lines


def _order(value: float) -> tuple:
    return (math.isnan(value), -value if not math.isnan(value) else 0.0)


def ranking_table(models: list[str], values: list[float], metric: str, theirs: dict[str, float] | None = None,
                  external_name: str = "external score") -> tuple[list[str], list[list]]:
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
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(4.5, 4))
    xs, ys = [p[2] for p in pairs], [p[1] for p in pairs]
    ax.scatter(xs, ys)
    for m, y, x in pairs:
        ax.annotate(m, (x, y), fontsize=7)
    ax.set_xlabel(external_name)
    ax.set_ylabel(metric)
    ax.set_title(f"r = {pearson:.2f}")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def compare_runs(runs: list, out, *, metric: str = "accuracy", external=None,
                 external_name: str = "external score", quiet: bool = False) -> dict:
    """Per-model bars of ``metric`` over several runs' directories and their ranking; with
    ``external`` (CSV of ``model,score``, e.g. a paper's published figures) the ranking shows
    them beside ours with the difference, and a scatter gives the Pearson correlation.
    Runs whose settings differ in more than the model are not comparable: each such
    difference is printed to stderr and written into ``comparison.md``. Unless ``quiet``,
    the ranking is printed. Writes ``models.png``, ``scatter.png`` and ``comparison.md``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    summaries = [read_summary(r) for r in runs]
    missing = [str(r) for r, s in zip(runs, summaries) if metric not in s]
    if missing:
        raise WikioriginError(f"{', '.join(missing)}: no {metric!r} in the summary")
    names = [s["model"] for s in summaries]
    # a model run twice (another setting, another data file) is told apart by its directory
    models = [n if names.count(n) == 1 else f"{n} ({Path(r).name})" for n, r in zip(names, runs)]
    values = [float("nan") if s[metric] is None else float(s[metric]) for s in summaries]
    bar_plot(out / "models.png", models, values, f"{metric} by model", metric)
    warnings = _settings_warnings([str(r) for r in runs], summaries)
    result = {"models": dict(zip(models, values)), "warnings": warnings}
    published = _read_external(external) if external else None
    theirs = None if published is None else {m: published[n] for m, n in zip(models, names) if n in published}
    if theirs is not None:
        pairs = [(m, v, theirs[m]) for m, v in zip(models, values) if m in theirs]
        result["not_in_external"] = [m for m in models if m not in theirs]
        if len(pairs) >= 2:
            xs, ys = [p[2] for p in pairs], [p[1] for p in pairs]
            result["pearson"] = float(np.corrcoef(xs, ys)[0, 1]) if len(set(xs)) > 1 and len(set(ys)) > 1 \
                else float("nan")
            _scatter(out / "scatter.png", pairs, metric, external_name, result["pearson"])
    header, rows = ranking_table(models, values, metric, theirs, external_name)
    result["ranking"] = markdown_table(header, rows)
    text = "# Models compared\n\n"
    if warnings:
        text += "**Not comparable as they stand:** these runs' settings differ in more than the model.\n\n"
        text += "".join(f"- {w}\n" for w in warnings) + "\n"
    text += f"{result['ranking']}\n"
    if "pearson" in result:
        text += f"\nPearson r = {result['pearson']:.3f} over {len(rows) - len(result['not_in_external'])} models.\n"
    signatures = [(m, s["signature"]) for m, s in zip(models, summaries) if s.get("signature")]
    if signatures:
        text += "\n## Signatures\n\n" + "".join(f"- {m}: `{line}`\n" for m, line in signatures)
    write_text(out / "comparison.md", text)
    for line in warnings:
        print(f"warning: {line}", file=sys.stderr)
    if not quiet:
        print(result["ranking"])
    return result
