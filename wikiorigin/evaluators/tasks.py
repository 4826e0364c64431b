"""Evaluation tasks as objects: a task holds its questions (or articles) and its settings,
``run(model)`` evaluates a model on them and returns a
:class:`~wikiorigin.evaluators.results.RunResult` (items, a summary that reads as attributes,
the settings that ran and their signature) that saves itself::

    import wikiorigin as wo

    task = wo.MCQTask.from_file("set.parquet", mode="generate")  # the language from the rows
    result = task.run(wo.LocalModel("path/to/model"))          # or wo.EndpointModel(...), wo.Recorded(...)
    result.summary.accuracy, result.signature
    result.save("runs/my-model")                               # as `wikiorigin eval mcq` writes it

:class:`MCQTask` (multiple choice, generation or log-likelihood), :class:`FreeformTask`
(free-form answers), :class:`JudgeTask` (CARE answers rated by an LLM judge) and
:class:`LeakageTask` (articles against their paraphrases). The signature comes from the task's
settings and the model's own description (:mod:`~wikiorigin.evaluators.signature`): nothing is
given twice. No language is assumed: a prompt is written in the language the rows say, or the
one given (``language=``); rows that say none are an error asking for it. A model is anything
with the capability the task needs and a description of itself (one Protocol each:
:class:`~wikiorigin.protocols.GeneratingModel`, :class:`~wikiorigin.protocols.LoglikelihoodModel`,
:class:`~wikiorigin.protocols.TokenLogprobsModel`), or
:class:`~wikiorigin.evaluators.recorded.Recorded` answers; a model without it is refused, in one
line naming the capability, before anything runs. :class:`JudgeTask` and :class:`LeakageTask`
live in :mod:`~wikiorigin.evaluators.judge_task` and :mod:`~wikiorigin.evaluators.leakage_task`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import ParameterError
from ..languages import language_parameter
from ..protocols import GeneratingModel, Judge, LoglikelihoodModel
from . import cues, freeform, mcq
from ._tasks_common import client_of, failures, needs
from .itemsets import check_once, say_if_incomplete
from .judge_task import JudgeTask
from .leakage_task import LeakageTask
from .recorded import Recorded
from .results import RunResult, Summary
from .signature import mcq_settings

__all__ = ["MCQTask", "FreeformTask", "JudgeTask", "LeakageTask", "MODES"]

MODES = ("generate", "loglikelihood")
"""The modes of a multiple-choice task: ``generate`` (the model answers; the answer is read)
and ``loglikelihood`` (every option scored as a continuation, as lm-evaluation-harness)."""


# --- multiple choice ---------------------------------------------------------------------------


@dataclass
class MCQTask:
    """Multiple-choice questions (:func:`~wikiorigin.evaluators.mcq.read_questions`' rows) and
    how to ask them.

    ``mode``: ``generate`` (the model answers after the ``instruction`` line, by default that of
    the language; ``""`` for none, as the released prompts; the answer is read by the
    parser and, with a ``judge`` LLM client, what it cannot read is given to the judge) or
    ``loglikelihood`` (each option scored after the language's answer ``cue``, or the one
    given). ``language``: the prompt's language (an open Wikipedia's code), by default the
    rows' own; rows that say none and a prompt to write are an error asking for it.
    ``temperature``, ``max_new_tokens``, ``seed``: the sampling of generation mode (the
    paper's: 0.1, 128, 0). ``source``: where the rows came from (the provenance, errors).
    A setting that does not belong to the mode is an error, not ignored."""

    rows: list[dict]
    mode: str = "generate"
    language: str | None = None
    instruction: str | None = None
    cue: str | None = None
    judge: Judge | None = None
    temperature: float = 0.1
    max_new_tokens: int = 128
    seed: int = 0
    source: str = "the questions"

    def __post_init__(self):
        if self.mode not in MODES:
            raise ParameterError(
                "mode", "{mode}: a multiple-choice task's mode is generate or loglikelihood", self.mode
            )
        if self.language is not None:
            self.language = language_parameter(self.language)
        if self.mode == "loglikelihood":
            for name in ("instruction", "judge"):
                if getattr(self, name) is not None:
                    raise ParameterError(
                        name,
                        "{" + name + "} is for generation mode; log-likelihood mode scores "
                        "each option after the answer {cue}",
                        also=("cue",),
                    )
        elif self.cue is not None:
            raise ParameterError(
                "cue",
                "{cue} is for log-likelihood mode; generation mode ends the question with its {instruction}",
                also=("instruction",),
            )

    @classmethod
    def from_file(cls, path, **settings) -> MCQTask:
        """The task of the questions in ``path`` (``mcq.parquet``, the released YokaiEval rows,
        a released responses file, ...: :func:`~wikiorigin.evaluators.mcq.read_questions`),
        with ``settings`` (the fields of :class:`MCQTask`), checked before the file is read."""
        task = cls([], source=str(path), **settings)
        task.rows = mcq.read_questions(path)
        check_once(task.rows, path)
        say_if_incomplete(path)
        return task

    def prompt_language(self) -> str:
        """The language the prompts are written in: ``language``, else the rows' own; rows
        that say none are a :class:`~wikiorigin.errors.ParameterError` asking for ``language=``."""
        return mcq.prompt_language(self.rows, self.language, self.source)

    def sampling(self) -> dict:
        """The sampling of generation mode, as a model's ``generate`` takes it."""
        return {"temperature": self.temperature, "max_new_tokens": self.max_new_tokens, "seed": self.seed}

    def run(self, model: GeneratingModel | LoglikelihoodModel | Recorded) -> RunResult:
        """Evaluate ``model`` (a :class:`~wikiorigin.protocols.GeneratingModel` in generation
        mode, a :class:`~wikiorigin.protocols.LoglikelihoodModel` in log-likelihood mode: one
        without is refused before anything runs) or score
        :class:`~wikiorigin.evaluators.recorded.Recorded` answers; returns the run's result
        (:meth:`~wikiorigin.evaluators.results.RunResult.save` writes it), ``complete: false``
        when requests failed after their retries (those questions unanswered, left out of the
        figures)."""
        if self.mode == "loglikelihood":
            model = needs(model, "loglikelihood", "log-likelihood mode")
        elif not isinstance(model, Recorded):
            model = needs(model, "generate", "generation mode")
        clients = (client_of(model), self.judge)
        before = failures(clients)
        return self._run(model).finished(failures(clients) - before)

    def _run(self, model: Any) -> RunResult:
        if isinstance(model, Recorded):
            return self._recorded(model)
        if self.mode == "loglikelihood":
            return self._loglikelihood(model)
        return self._generate(model)

    def _result(self, items, settings, model, join=None, responses=None) -> RunResult:
        summary = mcq.summarize(items)
        if join is not None:
            summary["join"] = join
        meta = {"questions": self.source, "responses": responses, "mode": self.mode}
        return RunResult(
            "mcq", items, Summary(summary), settings, meta, (client_of(model), self.judge), join, mcq.write_mcq_results
        )

    def _recorded(self, model: Recorded) -> RunResult:
        mcq.rows_language(self.rows, self.source)  # rows of several languages are an error here too
        rows, join = model.joined(self.rows, self.source)
        name = model.name_for(self.source)
        items = mcq.evaluate_generate(rows, None, judge=self.judge, recorded=name)
        settings = mcq_settings(None, judge=self.judge, recorded=name, rows=rows)
        settings.update({k: v for k, v in model.describe().items() if k != "model"})  # the file and its hash
        if join is not None and join["missing"]:  # said in the signature; comparisons explain it
            settings["responses"] = f"{join['matched']}/{len(rows)}"
        return self._result(items, settings, None, join, None if model.path is None else str(model.path))

    def _generate(self, model: Any) -> RunResult:
        if self.instruction is None:
            prompt_language = self.prompt_language()
            language: str | None = prompt_language
            instruction = cues.instruction(prompt_language)
        else:
            language, instruction = self.language or mcq.rows_language(self.rows, self.source), self.instruction
        items = mcq.evaluate_generate(self.rows, model, instruction=instruction, judge=self.judge, **self.sampling())
        settings = mcq_settings(
            model,
            language=language,
            instruction=instruction,
            judge=self.judge,
            rows=self.rows,
            **self.sampling(),
        )
        return self._result(items, settings, model)

    def _loglikelihood(self, model: Any) -> RunResult:
        language = self.prompt_language()
        items = mcq.evaluate_loglikelihood(self.rows, model, language=language, cue=self.cue)
        settings = mcq_settings(model, mode="loglikelihood", language=language, rows=self.rows, cue=self.cue)
        return self._result(items, settings, model)


# --- free-form ---------------------------------------------------------------------------------


@dataclass
class FreeformTask:
    """Free-form questions (``freeform.parquet``) asked in English, or with
    ``source_language`` in each item's language (``language``: that of items that say none),
    answered greedily with at most ``max_new_tokens`` tokens (``temperature``, ``seed``), and
    scored by exact match and chrF against the item's names."""

    rows: list[dict]
    source_language: bool = False
    language: str | None = None
    temperature: float = 0.0
    max_new_tokens: int = 32
    seed: int = 0
    source: str = "the questions"

    def __post_init__(self):
        if self.language is not None:
            self.language = language_parameter(self.language)

    @classmethod
    def from_file(cls, path, **settings) -> FreeformTask:
        """The task of the questions in ``path`` (:func:`~wikiorigin.evaluators.freeform.read_freeform`),
        with ``settings`` (the fields of :class:`FreeformTask`), checked before the file is read."""
        task = cls([], source=str(path), **settings)
        task.rows = freeform.read_freeform(path)
        check_once(task.rows, path)
        say_if_incomplete(path)
        return task

    def sampling(self) -> dict:
        """The sampling of the answers, as a model's ``generate`` takes it."""
        return {"temperature": self.temperature, "max_new_tokens": self.max_new_tokens, "seed": self.seed}

    def run(self, model: GeneratingModel) -> RunResult:
        """Ask ``model`` (a :class:`~wikiorigin.protocols.GeneratingModel`; one that cannot
        generate is refused before anything runs) every question and score its answers (those
        whose request failed after its retries: unanswered, out of the figures, ``complete: false``)."""
        model = needs(model, "generate", "a free-form task")
        before = failures((client_of(model),))
        source_language, language = self.source_language, self.language
        items = freeform.evaluate_freeform(
            self.rows, model, source_language=source_language, language=language, **self.sampling()
        )
        settings = freeform.freeform_settings(
            model, rows=self.rows, source_language=source_language, language=language, **self.sampling()
        )
        return RunResult(
            "freeform",
            items,
            Summary(freeform.summarize_freeform(items)),
            settings,
            {"questions": self.source},
            (client_of(model),),
            None,
            freeform.write_freeform_results,
        ).finished(failures((client_of(model),)) - before)
