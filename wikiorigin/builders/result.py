"""What every builder returns (:class:`~wikiorigin.builders.mcq.MCQBuilder`,
:class:`~wikiorigin.builders.freeform.FreeformBuilder`,
:class:`~wikiorigin.builders.preference.PreferenceBuilder`): one report type
(:class:`BuildReport`: inputs read, counts by step, kept, usage), one writer of the rows a step
dropped (:class:`FailedRows`, the ``FAILED`` schema of every builder), and a
:class:`BuildResult` that saves the set and its failed rows together, with the build's
provenance, under ``OUT.lock``."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from ..errors import WikioriginError
from ..files import check_output, provenance, write_together
from ..schemas import FAILED

__all__ = ["BuildReport", "FailedRows", "BuildResult", "failed_path"]


def failed_path(out) -> Path:
    """Where a build writes the rows it dropped, with their reasons: ``OUT.failed.parquet``."""
    return Path(str(out).removesuffix(".parquet") + ".failed.parquet")


@dataclass(slots=True)
class BuildReport:
    """What a build did, the same for every builder: ``builder`` (``mcq``, ``freeform``,
    ``preference``), the ``articles`` or ``questions`` it read, what it ``generated`` (questions
    written, answers given; None where a builder does not count them), the count ``dropped`` at
    each step (:meth:`drop`), the rows ``kept`` (questions, or preference pairs), inputs that
    matched nothing (``unmatched``: rated questions not among the questions), and the LLM
    ``usage`` by role (``generator``, ``checker``, ``judge``, each responder)."""

    builder: str
    articles: int = 0
    questions: int = 0
    generated: int | None = None
    kept: int = 0
    dropped: dict[str, int] = field(default_factory=dict)
    unmatched: int = 0
    usage: dict[str, dict] = field(default_factory=dict)

    def drop(self, step: str) -> None:
        """Count one row dropped at ``step``."""
        self.dropped[step] = self.dropped.get(step, 0) + 1

    def dropped_said(self) -> str:
        """The counts dropped, as the command line says them (``check 2, attribute 1``, or ``none``)."""
        return ", ".join(f"{k} {v}" for k, v in self.dropped.items()) or "none"


class FailedRows:
    """The rows a build dropped (the ``FAILED`` schema), each counted in ``report`` at its step.
    ``rows``: the rows, in the order they were dropped."""

    def __init__(self, report: BuildReport):
        self.report = report
        self.rows: list[dict] = []

    def add(
        self,
        step: str,
        reason: str,
        *,
        source: str,
        model: str | None = None,
        wiki: str | None = None,
        page_id: int | None = None,
        qid: str | None = None,
        item: dict | None = None,
    ) -> None:
        """One dropped row: the ``step`` and ``reason``, what it came from (``source``: an
        article's title, or a question; its ``wiki``, ``page_id`` and ``qid``), the ``model``
        that wrote (or failed to write) it, and what had been made of it (``item``, kept as JSON)."""
        self.report.drop(step)
        self.rows.append(
            {
                "step": step,
                "reason": reason,
                "source": source,
                "wiki": wiki,
                "page_id": page_id,
                "qid": qid,
                "model": model,
                "item": None if item is None else json.dumps(item, ensure_ascii=False),
            }
        )

    def table(self) -> pa.Table:
        """The rows as a table of the ``FAILED`` schema."""
        return pa.Table.from_pylist(self.rows, schema=FAILED)


@dataclass
class BuildResult:
    """One build: the ``rows`` of the set (of ``schema``), the rows dropped (``failed``), the
    ``report``, the build's provenance (``meta``: every setting that made it, the inputs, the
    models and their usage; written into both files' schema metadata) and the LLM clients by
    role (``clients``; their usage and failures). ``beside``: a function that writes files
    that go with the set (the free-form builder's translated instructions) given the set's path,
    and returns what the provenance says of them. :meth:`save` writes it."""

    kind: str
    rows: list[dict]
    schema: pa.Schema
    failed: FailedRows
    report: BuildReport
    meta: dict
    clients: dict = field(default_factory=dict)
    beside: Callable[[Path], dict] | None = None
    inputs: tuple = ()

    def save(self, out, *, failed=None, lock=None) -> Path:
        """Write the set to ``out`` (``.parquet``) and its dropped rows to ``failed`` (default
        ``OUT.failed.parquet``), together or not at all, with the provenance; returns ``out``.
        ``out`` may be none of the build's inputs. ``OUT.lock`` is held while they are written (a
        second run writing ``out`` is refused); ``lock``: a
        :class:`~wikiorigin.llm.lock.RunLock` on ``out`` the caller already holds (the command
        line holds one over the whole build)."""
        from ..llm.lock import RunLock

        out = Path(out)
        check_output(out, inputs=list(self.inputs))
        if lock is not None:
            if Path(lock.out) != out or not lock.held:
                raise WikioriginError(
                    f"{out}: the lock given is not held on this output ({lock.out}); give "
                    "none, and one is taken while the files are written"
                )
            return self._write(out, failed)
        with RunLock(out):
            return self._write(out, failed)

    def _write(self, out: Path, failed) -> Path:
        meta = {**self.meta, **(self.beside(out) if self.beside is not None else {})}
        stamp = provenance(stage="build", builder=self.kind, **meta)
        write_together(
            [
                (out, pa.Table.from_pylist(self.rows, schema=self.schema), self.schema, stamp),
                (failed or failed_path(out), self.failed.table(), FAILED, stamp),
            ]
        )
        return out
