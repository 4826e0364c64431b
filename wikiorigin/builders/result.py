"""What every builder returns (:class:`~wikiorigin.builders.mcq.MCQBuilder`,
:class:`~wikiorigin.builders.freeform.FreeformBuilder`,
:class:`~wikiorigin.builders.preference.PreferenceBuilder`): one report type
(:class:`BuildReport`: inputs read, counts by step, kept, usage), one writer of the rows a step
dropped (:class:`FailedRows`, the ``FAILED`` schema of every builder), and a
:class:`BuildResult` that saves the set and its failed rows together, with the build's
provenance, under ``OUT.lock``; :func:`saved_run` runs a build and saves it holding the
whole-run lock (:func:`~wikiorigin.runs.guarded_run`), as ``Builder.run(..., out=)`` does.

Every file a build writes beside its set (:data:`SIBLINGS`: the failed rows, the translated
instructions, the lock) is checked against the build's inputs as the set itself is
(:func:`check_build_output`), before any call. The inputs are named in the provenance by file
name and SHA-256 (:func:`input_file`), never by a path of the machine that built the set. A
build whose LLM requests failed after their retries is ``complete: false`` (its report, its
result, its provenance) with the count failed; a build with no rows says why
(:meth:`BuildResult.why_empty`)."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from ..errors import WikioriginError
from ..files import check_output, provenance, write_together
from ..schemas import FAILED

__all__ = [
    "BuildReport",
    "FailedRows",
    "BuildResult",
    "failed_path",
    "SIBLINGS",
    "sibling_path",
    "written_paths",
    "check_build_output",
    "input_file",
    "RequestCount",
    "screen_inputs",
    "saved_run",
]

SIBLINGS = {"failed": ".failed.parquet", "instructions": ".instructions.json", "lock": ".parquet.lock"}
"""The files a build writes beside ``OUT.parquet``, by what they hold: the rows it dropped
(``OUT.failed.parquet``), the instructions the free-form generator translated
(``OUT.instructions.json``) and, while it runs, the lock (``OUT.parquet.lock``). The one list
both the writers (:func:`sibling_path`) and the check of a build's outputs
(:func:`check_build_output`) go by."""


def sibling_path(out, what: str) -> Path:
    """The file of :data:`SIBLINGS` ``what`` beside the set ``out``."""
    return Path(str(out).removesuffix(".parquet") + SIBLINGS[what])


def failed_path(out) -> Path:
    """Where a build writes the rows it dropped, with their reasons: ``OUT.failed.parquet``."""
    return sibling_path(out, "failed")


def written_paths(out, failed=None) -> list[Path]:
    """Every file a build of ``out`` writes beside it (:data:`SIBLINGS`); ``failed``: the failed
    rows' own path, where one is given."""
    found = [sibling_path(out, what) for what in SIBLINGS]
    return found + ([Path(failed)] if failed is not None else [])


def check_build_output(out, inputs, failed=None) -> Path:
    """``out`` and every file written beside it (:func:`written_paths`) checked as an output
    (:func:`~wikiorigin.files.check_output`): none of them is one of ``inputs``."""
    return check_output(out, inputs=[i for i in inputs if i is not None], siblings=written_paths(out, failed))


_INSTRUCTION_KEYS = {"language", "name", "note", "generate", "refine"}


def check_instructions(path: Path) -> None:
    """A build replaces (or removes) ``OUT.instructions.json``: only one it wrote itself (a JSON
    object of instruction sets by language), never someone's file of that name."""
    if not path.is_file():
        return
    try:
        held = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        held = None
    ours = isinstance(held, dict) and all(isinstance(v, dict) and set(v) == _INSTRUCTION_KEYS for v in held.values())
    if not ours:
        raise WikioriginError(f"{path}: not instructions a build wrote; a run would replace it: move it")


def input_file(path) -> dict | None:
    """An input as the provenance names it: its file name and SHA-256 (``{"file": ...,
    "sha256": ...}``), never the path on the machine that read it; None for None."""
    if path is None:
        return None
    path = Path(path)
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return {"file": path.name, "sha256": digest.hexdigest()}


def screen_inputs(rows: list[dict], fail: Callable, keys: Callable, text: str = "text") -> list[dict]:
    """The rows worth asking about, in order. Before any call, a row whose ``text`` (the column
    the requests are made of) is empty or blank is dropped at step ``input`` (``empty text``), and so is a row that is the same
    article as an earlier one (one of ``keys(row)``, ``(what, key)`` pairs, seen before: it
    would pay for the same requests and give the same rows twice), its reason naming the row
    kept (numbered from 0). ``fail(row, step, reason)`` records a dropped row."""
    seen: dict = {}
    kept = []
    for n, row in enumerate(rows):
        if not (row.get(text) or "").strip():
            fail(row, "input", f"empty {text}")
            continue
        found = [(what, seen[key]) for what, key in keys(row) if key in seen]
        if found:
            what, first = found[0]
            fail(row, "input", f"a duplicate article: the same {what} as row {first}, built once")
            continue
        for _, key in keys(row):
            seen.setdefault(key, n)
        kept.append(row)
    return kept


class RequestCount:
    """The LLM requests a build asks of its ``clients`` (each counted once, None passed over),
    from now on: :meth:`settle` writes how many were asked and how many failed after their
    retries into a report."""

    def __init__(self, clients):
        self.clients = list({id(c): c for c in clients if c is not None}.values())
        self.start = self._now()

    def _now(self) -> tuple[int, int]:
        return (sum(c.usage.requests for c in self.clients), sum(c.usage.failures for c in self.clients))

    def settle(self, report: BuildReport) -> None:
        """``report.requests`` and ``report.failed_requests``: this build's."""
        requests, failures = self._now()
        report.requests, report.failed_requests = requests - self.start[0], failures - self.start[1]


@dataclass(slots=True)
class BuildReport:
    """What a build did, the same for every builder: ``builder`` (``mcq``, ``freeform``,
    ``preference``), the ``articles`` or ``questions`` it read, what it ``generated`` (questions
    written, answers given; None where a builder does not count them), the count ``dropped`` at
    each step (:meth:`drop`), the rows ``kept`` (questions, or preference pairs), inputs that
    matched nothing (``unmatched``: rated questions not among the questions), the questions
    that gave no preference pair though rated, by why (``unpaired``: ``all ratings tied``,
    ...), the rows dropped at a step by kind of reason where the step tells them apart
    (``reasons``: ``{"leak": {"alias in the question": 2, ...}}``), the LLM ``usage`` by role
    (``generator``, ``checker``, ``judge``, each responder), and the LLM ``requests`` asked
    and ``failed_requests`` (failed after their retries: then the build is not
    :attr:`complete`; the same build again asks only those)."""

    builder: str
    articles: int = 0
    questions: int = 0
    generated: int | None = None
    kept: int = 0
    dropped: dict[str, int] = field(default_factory=dict)
    unmatched: int = 0
    usage: dict[str, dict] = field(default_factory=dict)
    unpaired: dict[str, int] = field(default_factory=dict)
    reasons: dict[str, dict[str, int]] = field(default_factory=dict)
    requests: int = 0
    failed_requests: int = 0

    @property
    def complete(self) -> bool:
        """Whether every LLM request got its answer (none failed after its retries)."""
        return not self.failed_requests

    def drop(self, step: str, kind: str | None = None) -> None:
        """Count one row dropped at ``step`` (and under ``kind``, its kind of reason, if given)."""
        self.dropped[step] = self.dropped.get(step, 0) + 1
        if kind is not None:
            kinds = self.reasons.setdefault(step, {})
            kinds[kind] = kinds.get(kind, 0) + 1

    def dropped_said(self) -> str:
        """The counts dropped, as the command line says them (``check 2, leak 3 (alias in the
        question 2, title in the English question 1)``, or ``none``)."""

        def kinds(step: str) -> str:
            found = self.reasons.get(step)
            return " (" + ", ".join(f"{k} {v}" for k, v in found.items()) + ")" if found else ""

        return ", ".join(f"{k} {v}{kinds(k)}" for k, v in self.dropped.items()) or "none"


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
        kind: str | None = None,
    ) -> None:
        """One dropped row: the ``step`` and ``reason``, what it came from (``source``: an
        article's title, or a question; its ``wiki``, ``page_id`` and ``qid``), the ``model``
        that wrote (or failed to write) it, and what had been made of it (``item``, kept as JSON);
        ``kind``: the kind of reason, counted in the report's ``reasons``."""
        self.report.drop(step, kind)
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


_UNITS = {"mcq": ("questions", "articles"), "freeform": ("questions", "articles"), "preference": ("pairs", "questions")}


def _short(text: str, limit: int = 100) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _drops_said(rows: list[dict]) -> str:
    """The rows dropped, by step, each with its commonest reason: ``all 3 dropped at the check
    step (the checker chose 2)``, or ``dropped: check 2 (...), validate 1 (...)``."""
    by_step: dict[str, Counter] = {}
    for row in rows:
        by_step.setdefault(row["step"], Counter())[_short(row["reason"])] += 1
    said = []
    for step, reasons in by_step.items():
        top = reasons.most_common(1)[0][0]
        more = f"; {len(reasons) - 1} other reasons" if len(reasons) > 1 else ""
        said.append((step, sum(reasons.values()), f"{top}{more}"))
    if len(said) == 1:
        step, n, why = said[0]
        return f"all {n} dropped at the {step} step ({why})"
    return "dropped: " + ", ".join(f"{step} {n} ({why})" for step, n, why in said)


@dataclass
class BuildResult:
    """One build: the ``rows`` of the set (of ``schema``), the rows dropped (``failed``), the
    ``report``, the build's provenance (``meta``: every setting that made it, the inputs, the
    models and their usage; written into both files' schema metadata, with whether the build
    is ``complete`` and its ``failed_requests``) and the LLM clients by role (``clients``; their
    usage and failures). ``beside``: a function that writes files that go with the set (the
    free-form builder's translated instructions) given the set's path, and returns what the
    provenance says of them. :meth:`save` writes it; :meth:`why_empty` says why a build made
    no rows."""

    kind: str
    rows: list[dict]
    schema: pa.Schema
    failed: FailedRows
    report: BuildReport
    meta: dict
    clients: dict = field(default_factory=dict)
    beside: Callable[[Path], dict] | None = None
    inputs: tuple = ()

    @property
    def complete(self) -> bool:
        """Whether every LLM request of the build got its answer (:attr:`BuildReport.complete`)."""
        return self.report.complete

    def why_empty(self) -> str | None:
        """None when the build made rows; else one line of why none: ``0 questions from 3
        articles: all 3 dropped at the check step (the checker chose 2)``, ``0 pairs from 12
        questions: all ratings tied in 12 questions``, counting the rows dropped by step and
        their commonest reason."""
        if self.rows:
            return None
        unit, source = _UNITS.get(self.kind, ("rows", "inputs"))
        count = getattr(self.report, source, 0)
        if not count and not self.failed.rows:
            return f"0 {unit}: no {source} to build from"
        parts = [f"{why} in {n} question{'s' * (n != 1)}" for why, n in self.report.unpaired.items()]
        if self.failed.rows:
            parts.append(_drops_said(self.failed.rows))
        if self.report.unmatched:
            parts.append(f"{self.report.unmatched} rated questions not among the questions")
        return f"0 {unit} from {count} {source}: " + ("; ".join(parts) or "nothing made")

    def provenance(self) -> dict:
        """The build's provenance: :attr:`meta` with whether it is ``complete``, the LLM
        ``requests`` it asked and those failed (``failed_requests``)."""
        report = self.report
        return {
            **self.meta,
            "complete": report.complete,
            "requests": report.requests,
            "failed_requests": report.failed_requests,
        }

    def save(self, out, *, failed=None, lock=None) -> Path:
        """Write the set to ``out`` (``.parquet``) and its dropped rows to ``failed`` (default
        ``OUT.failed.parquet``), together or not at all, with the provenance; returns ``out``.
        ``out``, and every file written beside it (:data:`SIBLINGS`), may be none of the build's
        inputs nor its clients' request caches. Written under
        :func:`~wikiorigin.runs.guarded_run`: what a killed run left is swept and ``OUT.lock``
        held (a second run writing ``out`` is refused); ``lock``: a
        :class:`~wikiorigin.lock.RunLock` on ``out`` the caller already holds (``run(out=)``
        holds one over the whole build)."""
        from ..runs import guarded_run

        out = Path(out)
        check_build_output(out, self.inputs, failed)
        if lock is not None:
            if Path(lock.out) != out or not lock.held:
                raise WikioriginError(
                    f"{out}: the lock given is not held on this output ({lock.out}); give "
                    "none, and one is taken while the files are written"
                )
            return self._write(out, failed)
        beside = written_paths(out, failed)
        with guarded_run(out, inputs=self.inputs, cache=caches(self.clients.values()), siblings=beside):
            return self._write(out, failed)

    def _write(self, out: Path, failed) -> Path:
        meta = {**self.provenance(), **(self.beside(out) if self.beside is not None else {})}
        stamp = provenance(stage="build", builder=self.kind, **meta)
        write_together(
            [
                (out, pa.Table.from_pylist(self.rows, schema=self.schema), self.schema, stamp),
                (failed or failed_path(out), self.failed.table(), FAILED, stamp),
            ]
        )
        return out


def caches(clients) -> list[Path]:
    """The request caches of LLM ``clients`` (None, and clients without a cache, passed over)."""
    found = (getattr(getattr(c, "cache", None), "path", None) for c in clients if c is not None)
    return [Path(p) for p in found if p is not None]


def saved_run(build: Callable[[], BuildResult], out, inputs, clients=(), *, failed=None, names=None) -> BuildResult:
    """``build()`` run and its result saved into ``out``, the whole run under
    :func:`~wikiorigin.runs.guarded_run`: ``out`` and the files beside it checked against the
    ``inputs`` (:func:`check_build_output`) and the ``clients``' request caches before any call,
    what a killed run left swept, and ``OUT.lock`` held until the set is written (a second run
    on ``out`` is refused, naming the first). ``names``: the inputs' parameter names, for the
    messages. Returns the result, saved."""
    from ..runs import guarded_run

    given = [i for i in inputs if i is not None]
    check_build_output(out, given, failed)
    named = dict(zip(names, inputs)) if names is not None else given
    with guarded_run(out, inputs=named, cache=caches(clients), siblings=written_paths(out, failed)) as lock:
        result = build()
        result.save(out, failed=failed, lock=lock)
    return result
