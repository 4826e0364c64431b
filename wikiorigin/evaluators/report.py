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

from pathlib import Path

import pyarrow as pa

from ..files import provenance, write_all, write_table
from .compare import compare_runs, ranking_table
from .paired import ALPHA as ALPHA, ITEM_COLUMNS, MIN_COMMON as MIN_COMMON, paired_comparisons
from .plots import _pyplot as _pyplot, bar_plot
from .results import REPORT_MARK
from .signature import signature
from .summaries import incomplete_note, interval_tables, markdown_table, read_summary, summary_json

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
