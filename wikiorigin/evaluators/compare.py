"""Several runs compared (:func:`compare`): in memory (:class:`~wikiorigin.evaluators.results.RunResult`
objects, as a task's ``run`` returns them) or saved (results directories), each run's figure with
its interval, a ranking that marks the neighbours it cannot tell apart, every pair of runs tested
on the questions both answered (:mod:`~wikiorigin.evaluators.paired`), the warnings where the
runs' settings differ, and, given external scores (e.g. JMT-Bench), the correlation with them.
The :class:`Comparison` saves itself (:meth:`Comparison.save`: ``comparison.md``,
``comparison.json``, ``models.png``, ``scatter.png``, as ``wikiorigin eval compare`` writes them);
:func:`compare_runs` compares and saves in one call.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import WikioriginError
from .compare_figures import (
    _ranking_entries,
    _settings_warnings,
    checked_figures,
    correlation,
    external_scores,
    log_findings,
    ranking_table,
)
from .compared import ComparedRun, compared_runs
from .paired import ALPHA, paired_comparisons
from .summaries import markdown_table

__all__ = ["compare", "Comparison", "Record", "compare_runs", "ranking_table"]


class Record(dict):
    """A pair tested or a ranking's entry: the dict ``comparison.json`` holds (the same keys),
    whose keys read as attributes too (``pair.difference``, ``pair["p_value"]``)."""

    __slots__ = ()

    def __getattr__(self, name: str):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"this record has no {name!r}; it has {', '.join(self)}") from None


@dataclass(frozen=True)
class Comparison:
    """Runs compared by :func:`compare`. ``models``: each run's name (a model given twice told
    apart by its directory, or its place); ``figures``: each run's ``value``, ``ci95``,
    ``stderr`` and ``n`` of ``metric`` (over the items every run answered when runs are
    incomplete: ``common``); ``pairs``: each pair of runs tested (:class:`Record`: ``a``, ``b``,
    ``n``, ``difference`` of a minus b, its ``ci95``, ``p_value``, ``p_holm``, ``test``, and for
    0/1 outcomes the ``discordant`` counts); ``unpaired``: the pairs not tested, with the reason;
    ``ranking``: best first, each with its test against the next one down (``vs_next``);
    ``table``: the ranking as a Markdown table (with the external scores beside ours);
    ``warnings``: where the runs' settings differ in more than the model; ``notes``: how runs
    were counted; ``pearson``: the correlation with the external scores (None without two models
    in them). :meth:`save` writes the comparison's files."""

    metric: str
    models: list[str]
    figures: list[dict]
    pairs: list[Record]
    unpaired: list[dict]
    ranking: list[Record]
    table: str
    warnings: list[str]
    notes: list[str]
    seed: int
    resamples: int
    common: dict | None = None
    external: dict[str, float] | None = None
    external_name: str = "external score"
    pearson: float | None = None
    not_in_external: list[str] | None = None
    runs: list[ComparedRun] = field(default_factory=list, repr=False)
    source: str | None = field(default=None, repr=False)  # the external scores' file, an input

    @property
    def summaries(self) -> list[dict]:
        """The runs' summaries, as their ``summary.json`` holds them."""
        return [run.summary for run in self.runs]

    @property
    def ties(self) -> list[list[str]]:
        """The neighbours of the ranking not told apart (Holm-corrected p ≥ 0.05)."""
        return [
            [e["model"], e["vs_next"]["model"]]
            for e in self.ranking
            if e["vs_next"] is not None and not e["vs_next"]["tell_apart"]
        ]

    def as_dict(self) -> dict:
        """What :func:`compare_runs` returns: ``models`` (name -> figure), ``warnings``,
        ``notes``, ``pairs``, ``unpaired``, ``seed``, ``resamples``, ``ties``, ``ranking`` (the
        Markdown table), and with external scores ``not_in_external`` and ``pearson``."""
        found = {
            "models": {m: f["value"] for m, f in zip(self.models, self.figures)},
            "warnings": self.warnings,
            "notes": self.notes,
            "pairs": self.pairs,
            "unpaired": self.unpaired,
            "seed": self.seed,
            "resamples": self.resamples,
            "ties": self.ties,
        }
        if self.not_in_external is not None:
            found["not_in_external"] = self.not_in_external
        if self.pearson is not None:
            found["pearson"] = self.pearson
        return {**found, "ranking": self.table}

    def to_json(self) -> dict:
        """What ``comparison.json`` holds (a saved run's directory; None for a run in memory)."""
        return {
            "metric": self.metric,
            "runs": {m: None if r.directory is None else r.label for m, r in zip(self.models, self.runs)},
            "pairs": self.pairs,
            "unpaired": self.unpaired,
            "seed": self.seed,
            "resamples": self.resamples,
            **({} if self.common is None else {"common": self.common}),
            "ranking": self.ranking,
            "alpha": ALPHA,
            "correction": "holm",
            "warnings": self.warnings,
            "notes": self.notes,
        }

    def save(self, directory, *, lock=None) -> Path:
        """Write ``comparison.md``, ``comparison.json``, ``models.png`` and (with two models in
        the external scores) ``scatter.png`` into ``directory``, together or not at all; returns
        the directory. Checked first (:func:`~wikiorigin.evaluators.results.check_directory`:
        not a file, not the external scores' file, no comparison file there that wikiorigin did
        not write), and held under the whole-run guard while written
        (:func:`~wikiorigin.runs.guarded_run`: ``DIRECTORY.lock``, what a killed run left swept);
        ``lock``: a lock on ``directory`` the caller already holds, used instead."""
        from ..runs import guarded_run
        from .compare_text import write_comparison
        from .results import COMPARISON_FILES, check_directory

        inputs = [self.source] if self.source else []
        directory = check_directory(directory, inputs, COMPARISON_FILES)
        if lock is not None:
            if Path(lock.out) != directory or not lock.held:
                raise WikioriginError(
                    f"{directory}: the lock given is not held on this directory "
                    f"({lock.out}); give none, and one is taken while the files are written"
                )
            return write_comparison(self, directory)
        with guarded_run(directory, inputs=inputs, parameter="directory"):
            return write_comparison(self, directory)


def compare(
    runs,
    *,
    metric: str = "accuracy",
    external=None,
    external_name: str = "external score",
    seed: int | None = None,
    resamples: int | None = None,
    allow_failures: bool = False,
) -> Comparison:
    """Compare several runs on ``metric``: ``runs`` are results in memory
    (:class:`~wikiorigin.evaluators.results.RunResult`, as ``MCQTask(...).run(model)`` returns)
    or saved results directories, mixed as you like. Returns a :class:`Comparison`; nothing is
    written until its :meth:`~Comparison.save`. Every pair of runs is tested on the questions
    both answered (:func:`~wikiorigin.evaluators.paired.paired_comparisons`; ``seed`` and
    ``resamples`` of its bootstraps and permutations), and the ranking marks the neighbours it
    cannot tell apart (Holm-corrected p ≥ 0.05). ``external``: published figures (a CSV file of
    ``model,score``, or a mapping of model names to scores), shown beside ours with the
    difference and Pearson's correlation. Runs whose settings differ in more than the model are
    not comparable: each difference is a line of ``warnings``, logged (:mod:`wikiorigin.log`);
    a run whose recorded responses cover fewer of the same questions is explained in ``notes``.

    Only runs over the same items are compared (the same ids with the same content): others are
    refused (:class:`~wikiorigin.errors.WikioriginError` naming two of them). An incomplete run
    (``complete: false``) is refused (:class:`~wikiorigin.errors.ParameterError` naming it)
    unless ``allow_failures``; then every figure, the ranking and every pair are over the items
    all the runs answered, at least :data:`~wikiorigin.evaluators.paired.MIN_COMMON`. A run
    given twice is refused."""
    if isinstance(runs, (str, os.PathLike)) or not runs:
        raise WikioriginError("compare: give runs= as a list of results or results directories, one at least")
    views, models = compared_runs(list(runs))
    figures, common, notes = checked_figures(views, models, metric, allow_failures)
    summaries = [v.summary for v in views]
    warnings = _settings_warnings([v.label for v in views], summaries)
    tests = paired_comparisons(views, models, metric, seed=seed, resamples=resamples, items=common)
    values = [f["value"] for f in figures]
    theirs = external_scores(external, models, summaries)
    pearson, missing = (None, None) if theirs is None else correlation(models, values, theirs)
    header, rows = ranking_table(models, values, metric, theirs, external_name)
    log_findings(warnings, notes)
    return Comparison(
        metric=metric,
        models=models,
        figures=figures,
        pairs=[Record(p) for p in tests["pairs"]],
        unpaired=tests["unpaired"],
        ranking=[Record(e) for e in _ranking_entries(models, figures, tests["pairs"])],
        table=markdown_table(header, rows),
        warnings=warnings,
        notes=notes,
        seed=tests["seed"],
        resamples=tests["resamples"],
        common=None if common is None else {"n": len(common), "of": summaries[0].get("n")},
        external=theirs,
        external_name=external_name,
        pearson=pearson,
        not_in_external=missing,
        runs=views,
        source=str(external) if isinstance(external, (str, os.PathLike)) else None,
    )


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
    """:func:`compare` the runs and save the comparison into ``out`` (:meth:`Comparison.save`);
    returns :meth:`Comparison.as_dict`. Kept for the callers of before :func:`compare`."""
    comparison = compare(
        runs,
        metric=metric,
        external=external,
        external_name=external_name,
        seed=seed,
        resamples=resamples,
        allow_failures=allow_failures,
    )
    comparison.save(out)
    return comparison.as_dict()
