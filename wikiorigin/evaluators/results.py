"""What an evaluation task returns (:mod:`~wikiorigin.evaluators.tasks`): the scored items, the
summary, the settings that ran and their signature, and a :meth:`RunResult.save` that writes
the results directory as ``wikiorigin eval`` does, under :func:`~wikiorigin.runs.guarded_run`
(what a killed run left swept, ``DIRECTORY.lock`` held); :func:`saved_run` holds it over a
whole run (model, requests and writing), as the command line does.

:class:`Summary` is the summary as ``summary.json`` holds it (a dict, its keys unchanged) whose
keys read as attributes too: ``result.summary.accuracy``, ``result.summary["by_type"]``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..errors import ParameterError, WikioriginError
from .itemsets import failed_item, item_set
from .signature import signature

__all__ = [
    "Summary",
    "RunResult",
    "check_directory",
    "saved_run",
    "RESULT_FILES",
    "COMPARISON_FILES",
    "REPORT_MARK",
]

RESULT_FILES = ("items.parquet", "summary.json", "report.md")
"""The files every run writes into its results directory (with its plots, ``*.png``)."""
COMPARISON_FILES = ("comparison.md", "comparison.json")
"""The files ``eval compare`` writes into its directory (with ``models.png``, ``scatter.png``)."""
REPORT_MARK = "<!-- wikiorigin eval: this report is replaced by the next run written into this directory -->"
"""The last line of every ``report.md`` a run writes: how a report of ours is told from a
hand-written one, which is never replaced."""
COMPARISON_MARK = "<!-- wikiorigin eval compare: replaced by the next comparison written into this directory -->"


_INPUTS = ("questions", "responses", "articles", "paraphrases", "human_ratings")  # the meta that names files read


def _written_there(source, directory: Path) -> bool:
    """Whether the input ``source`` is ``directory`` itself or a file a run writes into it."""
    path = Path(source).resolve()
    if path == directory:
        return True
    return path.parent == directory and (path.name in RESULT_FILES or path.suffix == ".png")


def _ours(path: Path) -> bool:
    """Whether the file ``path`` in a results directory is one a run (or a comparison) wrote:
    Parquet whose provenance says the eval stage, a summary or comparison with our keys, a
    report with our last line (or, written before it had one, our signature line)."""
    import json

    from ..files import read_provenance

    if not path.is_file():
        return False
    if path.suffix == ".png":  # marked, or drawn by a run before plots were marked (its items say so)
        return _marked_plot(path) or path.name in _recorded_plots(path.parent)
    if path.suffix == ".parquet":
        try:
            return read_provenance(path).get("stage") == "eval"
        except (OSError, ValueError):  # not Parquet, or no provenance: not ours
            return False
    text = path.read_bytes().decode("utf-8", errors="replace")
    if path.suffix == ".md":
        return REPORT_MARK in text or COMPARISON_MARK in text or "\nSignature: `" in text
    try:
        found = json.loads(text)
    except ValueError:
        return False
    return isinstance(found, dict) and bool(
        {"signature", "item_set"} & set(found) or {"metric", "ranking"} <= set(found)
    )


def _marked_plot(path: Path) -> bool:
    from .plots import PLOT_MARK

    with open(path, "rb") as file:
        return PLOT_MARK.encode() in file.read(1 << 16)  # PNG text chunks come before the image


def _recorded_plots(directory: Path) -> list:
    from ..files import read_provenance

    try:
        return read_provenance(directory / "items.parquet").get("plots") or []
    except (OSError, ValueError):  # no run's items there
        return []


_PLOTS = {
    RESULT_FILES: re.compile(r"(accuracy_.+|chrf_by_language|rating_by_category|leakage)\.png"),
    COMPARISON_FILES: re.compile(r"(models|scatter)\.png"),
}
"""The plots a run (or a comparison) writes beside its ``files``: someone's file of such a name is refused."""


def check_directory(directory, inputs=(), files=RESULT_FILES) -> Path:
    """A results directory, checked before any model is loaded or any request sent: not an
    existing file, none of the run's ``inputs`` (paths; other values are passed over) is the
    directory or a file the run writes there (:data:`RESULT_FILES`, a plot), none of ``files``
    there is one the tool did not write (a hand-written ``report.md``, someone's
    ``summary.json``: a previous run's are replaced), and writable (or to be made in a writable
    folder). Nothing is made. Raises :class:`~wikiorigin.errors.ParameterError` naming ``directory``."""
    directory = Path(directory)
    if directory.exists() and not directory.is_dir():
        raise ParameterError("directory", f"{directory}: a file, not a results directory; give another {{directory}}")
    where = directory.resolve()
    for source in inputs:
        if isinstance(source, (str, os.PathLike)) and _written_there(source, where):
            raise ParameterError(
                "directory",
                f"{directory}: the results written there would replace the input {source}; give another {{directory}}",
            )
    foreign = [name for name in files if (where / name).exists() and not _ours(where / name)]
    plot = _PLOTS.get(tuple(files))
    if plot is not None and where.is_dir():
        foreign += [p.name for p in sorted(where.glob("*.png")) if plot.fullmatch(p.name) and not _ours(p)]
    if foreign:
        raise ParameterError(
            "directory",
            f"{directory}: {', '.join(foreign)} not written by wikiorigin eval; the results would replace "
            f"{'them' if len(foreign) > 1 else 'it'}: move {'them' if len(foreign) > 1 else 'it'}, or give another {{directory}}",
        )
    existing = next(p for p in (where, *where.parents) if p.exists())  # what would be made, made in
    if not existing.is_dir():
        raise ParameterError(
            "directory", f"{directory}: {existing} is a file, not a folder; give another {{directory}}"
        )
    if not os.access(existing, os.W_OK):
        raise ParameterError("directory", f"{directory}: {existing} is not writable; give another {{directory}}")
    return directory


class Summary(dict):
    """A run's summary: the dict ``summary.json`` holds (the same keys), whose keys are also
    attributes (``summary.accuracy``; a dict inside reads the same way, ``summary.by_type``).
    An attribute that is no key raises ``AttributeError`` naming the keys there are."""

    __slots__ = ()

    def __getattr__(self, name: str):
        try:
            value = self[name]
        except KeyError:
            raise AttributeError(f"this summary has no {name!r}; it has {', '.join(self)}") from None
        return Summary(value) if isinstance(value, dict) and not isinstance(value, Summary) else value

    def __dir__(self):
        return sorted(set(super().__dir__()) | {k for k in self if isinstance(k, str) and k.isidentifier()})


@dataclass(frozen=True)
class RunResult:
    """One evaluation run: the scored ``items`` (one per question, article or answer), the
    ``summary``, the ``settings`` that ran (:mod:`~wikiorigin.evaluators.signature`: from the
    task's configuration and the model's own description, never given twice), what the results
    files' provenance records (``meta``: the inputs), and the LLM clients the run sent requests
    through (``clients``: an endpoint under evaluation, a judge, a paraphraser; their usage
    and failures). ``join``: how recorded responses joined the questions (None when none were
    joined). :meth:`save` writes the results directory.

    A run whose requests failed after their retries is incomplete: its summary says
    ``complete: false``, ``failed`` (items left without an answer, out of the figures) and
    ``failed_requests`` (every request of the run that failed: the model's, a judge's, a
    paraphraser's), and so do the provenance of ``items.parquet`` and the top of ``report.md``.
    Running it again asks only those (the others are cached)."""

    kind: str
    items: list[dict]
    summary: Summary
    settings: dict
    meta: dict = field(default_factory=dict)
    clients: tuple = ()
    join: dict | None = None
    writer: Callable | None = field(default=None, repr=False)

    @property
    def complete(self) -> bool:
        """Whether every request of the run got an answer (the summary's ``complete``)."""
        return self.summary.get("complete", True) is not False

    def inputs(self) -> list:
        """The files the run read (its provenance's inputs), which :meth:`save` never replaces."""
        return [v for k, v in self.meta.items() if k in _INPUTS and isinstance(v, (str, os.PathLike))]

    def finished(self, requests_failed: int, failed: int | None = None) -> RunResult:
        """This result with its completeness and item set in the summary (first, so that
        ``summary.json`` opens with them): ``requests_failed`` of the run's requests failed after
        their retries; ``failed`` items were left without an answer (None: counted from the
        items, :func:`~wikiorigin.evaluators.itemsets.failed_item`)."""
        if failed is None:
            failed = sum(failed_item(i) for i in self.items)
        head = {"complete": not (failed or requests_failed), "failed": failed, "failed_requests": requests_failed}
        rest = {k: v for k, v in self.summary.items() if k not in head}
        return replace(self, summary=Summary({**head, **rest, "item_set": item_set(self.items)}))

    @property
    def signature(self) -> str:
        """The one-line signature of what ran (:func:`~wikiorigin.evaluators.signature.signature`
        of :attr:`settings`): the one ``summary.json`` and ``report.md`` carry once saved."""
        return signature(self.settings)

    def save(self, directory, *, lock=None) -> Path:
        """Write the results directory: ``items.parquet`` (with provenance), ``summary.json``
        (the summary with ``settings`` and ``signature``), ``report.md`` and the plots, as
        ``wikiorigin eval`` writes them; returns the directory. Written under
        :func:`~wikiorigin.runs.guarded_run`: the directory is none of the run's inputs nor its
        request caches, what a killed run left there is swept, and ``DIRECTORY.lock`` is held
        (:class:`~wikiorigin.lock.RunLock`: a second run writing it is refused). ``lock``: a
        :class:`~wikiorigin.lock.RunLock` on ``directory`` the caller already holds
        (:func:`saved_run` holds one over the whole run), used instead of taking another."""
        from ..runs import guarded_run

        directory = check_directory(directory, self.inputs())
        if lock is not None:
            if Path(lock.out) != directory or not lock.held:
                raise WikioriginError(
                    f"{directory}: the lock given is not held on this directory "
                    f"({lock.out}); give none, and one is taken while the files are written"
                )
            return self._write(directory)
        with guarded_run(directory, inputs=self.inputs(), cache=_caches(self.clients), parameter="directory"):
            return self._write(directory)

    def _write(self, directory: Path) -> Path:
        if self.writer is None:  # made by hand, not by a task
            raise ValueError(f"this {self.kind} result has no writer (a task's run() gives one): it cannot be saved")
        self.writer(directory, self.items, dict(self.summary), self.meta, settings=self.settings)
        return directory


def _caches(clients) -> list[Path]:
    """The request caches of LLM ``clients`` (None, and clients without a cache, passed over)."""
    found = (getattr(getattr(c, "cache", None), "path", None) for c in clients if c is not None)
    return [Path(p) for p in found if p is not None]


def saved_run(directory, run: Callable[[], RunResult], *, inputs=(), cache=None, files=RESULT_FILES) -> RunResult:
    """``run()`` (a task run: ``lambda: task.run(model)``) and its result saved into the results
    ``directory``, the whole run under :func:`~wikiorigin.runs.guarded_run`: the directory
    checked first (:func:`check_directory`: against the ``inputs``, paths or a mapping of
    parameter names to paths, and ``files`` there), then against the request ``cache`` (a path
    or several), what a killed run left swept, and ``DIRECTORY.lock`` held until the results are
    written, so that a second run into it is refused before it loads a model or sends a
    request. Returns the result, saved."""
    from ..runs import cache_paths, guarded_run

    paths = list(inputs.values()) if isinstance(inputs, dict) else list(inputs)
    check_directory(directory, [*paths, *cache_paths(cache)], files)  # the cache: an input too
    with guarded_run(directory, inputs=inputs, cache=cache, parameter="directory") as lock:
        result = run()
        result.save(directory, lock=lock)
    return result
