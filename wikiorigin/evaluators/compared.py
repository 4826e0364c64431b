"""The runs a comparison reads (:func:`~wikiorigin.evaluators.compare.compare`), seen one way
whether they are results directories on disk or :class:`~wikiorigin.evaluators.results.RunResult`
objects in memory: a :class:`ComparedRun` gives the summary as ``summary.json`` holds it, the items
as ``items.parquet`` holds them, and a label for messages. The checks that every comparison makes
(a run given twice, runs over different items) are here, on those views.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import pyarrow as pa

from ..errors import WikioriginError
from .itemsets import CONTENT, KEYED, failed_item, fingerprint, item_key, unanswered
from .results import RunResult
from .summaries import read_summary, summary_json

__all__ = [
    "ComparedRun",
    "compared_runs",
    "item_scores",
    "check_distinct_runs",
    "check_same_runs",
    "check_summaries",
    "ITEM_COLUMNS",
]

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
judged run's ``rating``): 0/1 columns are tested in pairs by McNemar's test, scores by a paired
permutation test."""

_KEY_COLUMNS = {"id", "question"} | {c for _, columns in CONTENT for c in columns} | {m for m, _ in CONTENT}


@dataclass(frozen=True)
class ComparedRun:
    """One run as a comparison reads it: ``label`` (the directory as given, or the model's name
    and place for a run in memory), its ``summary`` (as ``summary.json`` holds it: with
    ``settings`` and ``signature``), and either its ``directory`` or its ``result``."""

    label: str
    summary: dict
    directory: Path | None = None
    result: RunResult | None = field(default=None, repr=False)

    @cached_property
    def _memory(self) -> dict[str, list]:
        """The in-memory items' columns (the union of their keys, in first-seen order)."""
        assert self.result is not None
        names: dict[str, None] = {}
        for item in self.result.items:
            names.update(dict.fromkeys(item))
        return {n: [item.get(n) for item in self.result.items] for n in names}

    def names(self) -> list[str] | None:
        """The columns of the run's items (None: a directory without ``items.parquet``)."""
        if self.result is not None:
            return list(self._memory)
        path = self._items_path()
        if path is None:
            return None
        import pyarrow.parquet as pq

        return list(pq.read_schema(path).names)

    def table(self, columns: list[str]) -> pa.Table:
        """The items' ``columns`` (those the run has) as ``items.parquet`` holds them."""
        if self.result is not None:
            return pa.table({c: self._memory[c] for c in columns if c in self._memory})
        import pyarrow.parquet as pq

        path = self._items_path()
        assert path is not None
        return pq.read_table(path, columns=[c for c in columns if c in set(self.names() or ())])

    def _items_path(self) -> Path | None:
        path = None if self.directory is None else self.directory / "items.parquet"
        return path if path is not None and path.exists() else None

    def keys(self) -> list[str] | None:
        """The item keys (:func:`~wikiorigin.evaluators.itemsets.item_key`), as
        :func:`~wikiorigin.evaluators.itemsets.run_keys` reads them from a directory; None when
        the run has no items, or no column to key them by."""
        names = self.names()
        if names is None or not set(names) & {"id", "question", "title"}:
            return None
        return [item_key(r) for r in self.table(sorted(set(names) & _KEY_COLUMNS)).to_pylist()]

    def marks(self) -> list[tuple[str, Any]]:
        """What tells this run from another given twice: its directory and its items' bytes, or
        the result object itself."""
        if self.result is not None:
            return [("result", id(self.result))]
        assert self.directory is not None
        marks: list[tuple[str, Any]] = [("directory", self.directory.resolve())]
        path = self._items_path()
        if path is not None:
            marks.append(("items.parquet", hashlib.sha256(path.read_bytes()).hexdigest()))
        return marks


def _memory_summary(result: RunResult) -> dict:
    """A result's summary as its saved ``summary.json`` would hold it (settings and signature
    added, strict JSON)."""
    summary = {**result.summary, "settings": result.settings, "signature": result.signature}
    return json.loads(summary_json(summary))


def compared_runs(runs) -> tuple[list[ComparedRun], list[str]]:
    """The runs (results directories, or :class:`~wikiorigin.evaluators.results.RunResult`
    objects) as :class:`ComparedRun` views, and their model names: a model given twice is told
    apart by its directory's name, or by its place in ``runs``."""
    views = []
    for place, run in enumerate(runs, 1):
        if isinstance(run, ComparedRun):
            views.append(run)
        elif isinstance(run, RunResult):
            summary = _memory_summary(run)
            views.append(ComparedRun(f"{summary.get('model')} (run {place}, in memory)", summary, result=run))
        elif isinstance(run, (str, os.PathLike)):
            views.append(ComparedRun(str(run), read_summary(run), directory=Path(run)))
        else:
            raise WikioriginError(f"compare: {run!r} is not a run; give runs= as results or results directories")
    names = [v.summary.get("model") for v in views]
    models = [
        str(n) if names.count(n) == 1 else f"{n} ({v.directory.name})" if v.directory else f"{n} (run {place})"
        for place, (n, v) in enumerate(zip(names, views), 1)
    ]
    return views, models


def item_scores(run: ComparedRun, metric: str) -> tuple[dict | None, bool, str | None]:
    """A run's per-question scores for ``metric`` by item (its id and content:
    :func:`~wikiorigin.evaluators.itemsets.item_key`), those whose request failed left out,
    whether they are 0/1, or why there are none."""
    column = ITEM_COLUMNS.get(metric)
    if column is None:
        return None, False, f"no per-question column for {metric!r}"
    names = run.names()
    if names is None:
        return None, False, "no items.parquet"
    if column not in names:
        return None, False, f"items.parquet has no column {column!r}"
    if not {"id", "question", "title"} & set(names):
        return None, False, "items.parquet has neither question ids nor questions"
    table = run.table([n for n in names if n in KEYED or n == column])
    rows = table.to_pylist()
    keys = [item_key(r) for r in rows]
    if len(set(keys)) < len(keys):
        return None, False, "items.parquet repeats an item (id and question)"
    binary = pa.types.is_boolean(table.schema.field(column).type)
    return {k: r[column] for k, r in zip(keys, rows) if r[column] is not None and not failed_item(r)}, binary, None


def check_distinct_runs(runs: list[ComparedRun]) -> None:
    """Refuse (:class:`~wikiorigin.errors.WikioriginError`, naming both) a run given twice: the
    same directory or result, or two whose ``items.parquet`` hold the same bytes (a copy)."""
    seen: dict = {}
    for run in runs:
        marks = run.marks()
        for what, mark in marks:
            if mark in seen:
                same = "the same items.parquet" if what == "items.parquet" else "the same run"
                raise WikioriginError(
                    f"{seen[mark]} and {run.label} are {same}: a run is not compared with itself; give each run once"
                )
        seen.update({mark: run.label for _, mark in marks})


def check_same_runs(runs: list[ComparedRun]) -> None:
    """Refuse (:class:`~wikiorigin.errors.WikioriginError`, naming the two runs) runs over
    different item sets. Each run's items are keyed from its items (:meth:`ComparedRun.keys`),
    else taken from its summary's ``item_set``; a run with neither cannot be checked, and is
    refused beside others."""
    known: list[tuple[str, set[str] | None, str]] = []
    for run in runs:
        keys = run.keys()
        if keys is not None:
            known.append((run.label, set(keys), fingerprint(keys)))
        elif (run.summary.get("item_set") or {}).get("fingerprint"):
            known.append((run.label, None, run.summary["item_set"]["fingerprint"]))
        elif len(runs) > 1:
            raise WikioriginError(
                f"{run.label}: neither its items (items.parquet, with ids or questions) nor an item set "
                "in its summary: whether it ran on the same questions as the others cannot be checked; "
                "score it again with this version"
            )
    for label, own, mark in known[1:]:
        first, first_keys, first_mark = known[0]
        if mark == first_mark:
            continue
        if own is not None and first_keys is not None:
            said = f"{len(first_keys)} and {len(own)} items, {len(first_keys & own)} of them the same"
        else:
            said = f"item sets {first_mark} and {mark}"
        raise WikioriginError(
            f"{first} and {label} ran on different items ({said}): runs over different item sets are "
            "not ranked or tested together; score them on the same questions"
        )


def check_summaries(runs: list[ComparedRun], metric: str) -> None:
    """Refuse (:class:`~wikiorigin.errors.WikioriginError`, naming the file) a saved run whose
    ``summary.json`` says other than its ``items.parquet``: items without an answer under a
    summary that counts no failed request, or a ``metric`` its answered items do not give (a
    summary edited by hand, or another run's). Runs in memory and runs without items are not
    checked."""
    for run in runs:
        names = run.names() if run.directory is not None else None
        if names is None:
            continue
        assert run.directory is not None
        column = ITEM_COLUMNS.get(metric)
        rows = run.table([n for n in names if n in KEYED or n == column]).to_pylist()
        failed = sum(failed_item(r) for r in rows)
        told = run.summary.get(metric)
        where = run.directory / "summary.json"
        if failed and not unanswered(run.summary):
            raise WikioriginError(
                f"{where}: counts no failed request, but {failed} items of its items.parquet have no answer: "
                "the summary was edited or is another run's; run the eval again"
            )
        scores = [r[column] for r in rows if column in r and r[column] is not None and not failed_item(r)]
        if not scores or isinstance(told, bool) or not isinstance(told, (int, float)):
            continue
        given = sum(scores) / len(scores)
        if abs(given - told) > 1e-9 * max(1.0, abs(given)):
            raise WikioriginError(
                f"{where}: {metric} {told:g}, but its items.parquet gives {given:g}: the summary was edited "
                "or is another run's; run the eval again"
            )
