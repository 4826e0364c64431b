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
that provides :class:`~wikiorigin.protocols.EvaluatedModel` (the method the task needs), or
:class:`~wikiorigin.evaluators.recorded.Recorded` answers.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..care import RATING_SCALE, read_rated
from ..errors import ParameterError, WikioriginError
from ..languages import language_parameter
from ..log import logger
from . import cues, freeform, judge as judging, leakage, mcq
from .recorded import Recorded
from .results import RunResult, Summary
from .signature import mcq_settings

__all__ = ["MCQTask", "FreeformTask", "JudgeTask", "LeakageTask", "MODES"]

MODES = ("generate", "loglikelihood")
"""The modes of a multiple-choice task: ``generate`` (the model answers; the answer is read)
and ``loglikelihood`` (every option scored as a continuation, as lm-evaluation-harness)."""


def _needs(model, method: str, what: str) -> None:
    """A one-line error, before anything runs, when ``model`` lacks the ``method`` a task needs."""
    if isinstance(model, Recorded):
        raise WikioriginError(
            f"{what} needs a model to ask ({method}): recorded answers cannot be scored so; "
            "give a model (wo.LocalModel, wo.EndpointModel)"
        )
    if not callable(getattr(model, method, None)):
        raise WikioriginError(f"{what} needs a model with {method}(); {type(model).__name__} has none")


def _scoring(model, task: str) -> dict:
    """What an endpoint's scoring adds to the settings (its tokenizer, or the server's special
    tokens and text offsets); nothing for a local model."""
    describe = getattr(model, "scoring_settings", None)
    return describe(task) if callable(describe) else {}


def _client(model):
    return getattr(model, "client", None)


def _failures(clients) -> int:
    """Requests that failed after their retries so far, over the distinct LLM clients given
    (None passed over): the difference before and after a run is the run's own."""
    found = {id(c): c for c in clients if c is not None and hasattr(c, "usage")}
    return sum(c.usage.failures for c in found.values())


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
    judge: object = None
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
        return task

    def prompt_language(self) -> str:
        """The language the prompts are written in: ``language``, else the rows' own; rows
        that say none are a :class:`~wikiorigin.errors.ParameterError` asking for ``language=``."""
        return mcq.prompt_language(self.rows, self.language, self.source)

    def sampling(self) -> dict:
        """The sampling of generation mode, as a model's ``generate`` takes it."""
        return {"temperature": self.temperature, "max_new_tokens": self.max_new_tokens, "seed": self.seed}

    def run(self, model) -> RunResult:
        """Evaluate ``model`` (:class:`~wikiorigin.protocols.EvaluatedModel`; ``generate`` or
        ``loglikelihood`` as the mode needs) or score :class:`~wikiorigin.evaluators.recorded.Recorded`
        answers; returns the run's result (:meth:`~wikiorigin.evaluators.results.RunResult.save`
        writes it), ``complete: false`` when requests failed after their retries (those
        questions unanswered, left out of the figures)."""
        clients = (_client(model), self.judge)
        before = _failures(clients)
        return self._run(model).finished(_failures(clients) - before)

    def _run(self, model) -> RunResult:
        if isinstance(model, Recorded) and self.mode == "generate":
            return self._recorded(model)
        if self.mode == "loglikelihood":
            _needs(model, "loglikelihood", "log-likelihood mode")
            return self._loglikelihood(model)
        _needs(model, "generate", "generation mode")
        return self._generate(model)

    def _result(self, items, settings, model, join=None, responses=None) -> RunResult:
        summary = mcq.summarize(items)
        if join is not None:
            summary["join"] = join
        meta = {"questions": self.source, "responses": responses, "mode": self.mode}
        return RunResult(
            "mcq", items, Summary(summary), settings, meta, (_client(model), self.judge), join, mcq.write_mcq_results
        )

    def _recorded(self, model: Recorded) -> RunResult:
        mcq.rows_language(self.rows, self.source)  # rows of several languages are an error here too
        rows, join = model.joined(self.rows, self.source)
        name = model.name_for(self.source)
        items = mcq.evaluate_generate(rows, None, judge=self.judge, recorded=name)
        settings = mcq_settings(None, judge=self.judge, recorded=name, rows=rows)
        if join is not None and join["missing"]:  # said in the signature; comparisons explain it
            settings["responses"] = f"{join['matched']}/{len(rows)}"
        return self._result(items, settings, None, join, None if model.path is None else str(model.path))

    def _generate(self, model) -> RunResult:
        language = (
            self.prompt_language()
            if self.instruction is None
            else (self.language or mcq.rows_language(self.rows, self.source))
        )
        instruction = cues.instruction(language) if self.instruction is None else self.instruction
        items = mcq.evaluate_generate(self.rows, model, instruction=instruction, judge=self.judge, **self.sampling())
        settings = mcq_settings(
            model,
            language=language,
            instruction=instruction,
            judge=self.judge,
            rows=self.rows,
            thinking=getattr(model, "thinking_mode", None),
            **self.sampling(),
        )
        return self._result(items, settings, model)

    def _loglikelihood(self, model) -> RunResult:
        language = self.prompt_language()
        items = mcq.evaluate_loglikelihood(self.rows, model, language=language, cue=self.cue)
        settings = mcq_settings(model, mode="loglikelihood", language=language, rows=self.rows, cue=self.cue)
        settings.update(_scoring(model, "mcq"))
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
        return task

    def sampling(self) -> dict:
        """The sampling of the answers, as a model's ``generate`` takes it."""
        return {"temperature": self.temperature, "max_new_tokens": self.max_new_tokens, "seed": self.seed}

    def run(self, model) -> RunResult:
        """Ask ``model`` (``generate``) every question and score its answers (those whose
        request failed after its retries: unanswered, out of the figures, ``complete: false``)."""
        _needs(model, "generate", "a free-form task")
        before = _failures((_client(model),))
        options = {"source_language": self.source_language, "language": self.language}
        items = freeform.evaluate_freeform(self.rows, model, **options, **self.sampling())
        settings = freeform.freeform_settings(model, rows=self.rows, **options, **self.sampling())
        return RunResult(
            "freeform",
            items,
            Summary(freeform.summarize_freeform(items)),
            settings,
            {"questions": self.source},
            (_client(model),),
            None,
            freeform.write_freeform_results,
        ).finished(_failures((_client(model),)) - before)


# --- judge -------------------------------------------------------------------------------------


@dataclass
class JudgeTask:
    """CARE questions (with reference answers) whose answers an LLM ``judge`` (an
    :class:`~wikiorigin.llm.LLMClient`) rates 1-10. The answers come from the model run
    (sampled with ``temperature``, ``max_new_tokens``, ``seed``), or are recorded:
    :class:`~wikiorigin.evaluators.recorded.Recorded` takes the rows' own ``response`` s, else
    the responses people rated (``human_ratings``). ``human_ratings``: people's ratings
    (:func:`~wikiorigin.care.read_rated` rows), compared with the judge's (the summary's
    ``agreement``)."""

    rows: list[dict]
    judge: object = None
    human_ratings: list[dict] | None = None
    temperature: float = 0.7
    max_new_tokens: int = 512
    seed: int = 0
    source: str = "the questions"

    def __post_init__(self):
        if self.judge is None:
            raise ParameterError("judge", "a judged task needs its {judge}: the LLM client that rates each answer")

    @classmethod
    def from_file(cls, path, *, judge, human_ratings=None, rating_scale=RATING_SCALE, **settings) -> JudgeTask:
        """The task of the CARE file ``path`` (:func:`~wikiorigin.care.read_care`) rated by
        ``judge``; ``human_ratings``: a file of people's ratings (or its rows), on
        ``rating_scale`` (lowest, highest; default CARE's 1-10; a rating outside it is an
        error naming the row); ``settings``: the other fields of :class:`JudgeTask`."""
        task = cls([], judge=judge, source=str(path), **settings)
        task.rows = judging.read_care(path)
        if human_ratings is not None and not isinstance(human_ratings, list):
            task.human_ratings = read_rated(human_ratings, rating_scale)
        else:
            task.human_ratings = human_ratings
        return task

    def sampling(self) -> dict:
        """The sampling of the model's answers, as its ``generate`` takes it."""
        return {"temperature": self.temperature, "max_new_tokens": self.max_new_tokens, "seed": self.seed}

    def run(self, model) -> RunResult:
        """Have ``model`` (``generate``) answer every question, or take
        :class:`~wikiorigin.evaluators.recorded.Recorded` answers, and have the judge rate them
        (an answer or a rating whose request failed: unrated, ``complete: false``)."""
        clients = (_client(model), self.judge)
        before = _failures(clients)
        return self._run(model).finished(_failures(clients) - before)

    def _run(self, model) -> RunResult:
        rated, rate_rated = self.human_ratings, False
        if isinstance(model, Recorded):
            if model.path is not None:
                raise WikioriginError(
                    "a judged task's recorded answers are its rows' own `response` s (or the "
                    "responses people rated): give Recorded() without a file"
                )
            recorded = all(r.get("response") for r in self.rows)
            rate_rated = rated is not None and not recorded  # the judge rates the people's responses
            if not (recorded or rate_rated):
                raise WikioriginError(
                    f"{self.source}: the rows carry no `response` (nor human_ratings= to rate): give a model"
                )
            asked, name = None, model.given_name or "recorded"
            responses = [r["response"] for r in self.rows] if recorded else None
        else:
            _needs(model, "generate", "a judged task")
            asked = model
            responses, name = model.generate([r["question"] for r in self.rows], **self.sampling()), model.name
        if rate_rated:
            items, alone = judging.judge_rated(self.rows, rated, self.judge)
            unmatched = len(alone)
        else:
            items = judging.judge_answers(self.rows, responses, self.judge, model=name)
            unmatched = judging.attach_human_ratings(items, rated) if rated is not None else 0
        summary = judging.summarize_judged(items)
        if rated is not None:
            summary["agreement"]["unmatched"] = unmatched
            if unmatched:
                logger.info(f"{unmatched} rated responses not compared (no such question and answer here)")
        settings = judging.judge_settings(
            asked, self.judge, rows=self.rows, rated=rated, rated_answers=rate_rated, **self.sampling()
        )
        meta = {"questions": self.source, "judge": self.judge.backend.model}
        return RunResult(
            "judge",
            items,
            Summary(summary),
            settings,
            meta,
            (_client(asked), self.judge),
            None,
            judging.write_judge_results,
        )


# --- leakage -----------------------------------------------------------------------------------


@dataclass
class LeakageTask:
    """Articles (``{title: text}``) against their ``paraphrases`` (the same, or None: written
    by the ``paraphraser`` LLM client): is the model's likelihood of the original wording
    clearly higher? ``sample`` articles drawn at random with ``seed`` (the paper's 20; None:
    every one), or the first ``limit`` in order; each text cut to ``max_chars``; texts longer
    than the model's context scored in ``windows`` of ``stride`` tokens
    (:func:`~wikiorigin.evaluators.leakage.leakage_check`)."""

    articles: dict[str, str]
    paraphrases: dict[str, str] | None = None
    paraphraser: object = None
    max_chars: int = 1500
    sample: int | None = leakage.SAMPLE
    limit: int | None = None
    seed: int = 0
    windows: str = "overlap"
    stride: int | None = None
    source: str = "the articles"

    def __post_init__(self):
        if self.paraphrases is None and self.paraphraser is None:
            raise ParameterError(
                "paraphrases",
                "a leakage task needs the articles' paraphrases: give {paraphrases} "
                "or {paraphraser} (an LLM client that writes them)",
                also=("paraphraser",),
            )
        if self.windows not in leakage.WINDOWS:
            raise ParameterError("windows", "{windows}: windows are " + " or ".join(leakage.WINDOWS), self.windows)
        if self.stride is not None and self.windows == "disjoint":
            raise ParameterError(
                "stride",
                "{stride} is for overlapping windows (disjoint ones predict a whole context each)",
                also=("windows",),
            )

    @classmethod
    def from_file(cls, path, *, paraphrases=None, **settings) -> LeakageTask:
        """The task of the articles in ``path`` (``title``, ``text``); ``paraphrases``: a file
        of ``title``, ``paraphrase`` (or a dict); ``settings``: the other fields of
        :class:`LeakageTask`."""
        given = (
            leakage.read_texts(paraphrases, "paraphrase")
            if paraphrases is not None and not isinstance(paraphrases, dict)
            else paraphrases
        )
        task = cls({}, paraphrases=given, source=str(path), **settings)
        task.articles = leakage.read_texts(path, "text")
        return task

    def drawn(self) -> leakage.Sample:
        """The articles compared: among those with a paraphrase (when the paraphrases are
        given), ``sample`` at random, or the first ``limit``."""
        given = self.paraphrases
        pool = [
            t for t in self.articles if given is None or leakage.passage(given.get(t) or "", self.max_chars).strip()
        ]
        return leakage.draw_sample(pool, self.limit or self.sample, seed=None if self.limit else self.seed)

    def run(self, model) -> RunResult:
        """Score the sampled articles and their paraphrases under ``model``
        (``token_logprobs``), writing the paraphrases first when none were given (the first
        few that failed are logged; their articles are left out of the comparison, and the run
        is ``complete: false``). An article whose texts' scoring requests failed after their
        retries is an item marked ``failed``, out of the figures, and the run is incomplete too."""
        _needs(model, "token_logprobs", "a leakage task")
        clients = (self.paraphraser, _client(model))
        before = _failures(clients)
        sample = self.drawn()
        articles = {t: self.articles[t] for t in sample.titles}
        paraphrases, paraphraser, failed = self.paraphrases, None, {}
        if paraphrases is None:
            passages = {t: leakage.passage(text, self.max_chars) for t, text in articles.items()}
            paraphrases, failed = leakage.paraphrase(passages, self.paraphraser)
            paraphraser = self.paraphraser
            for title, reason in list(failed.items())[:5]:
                logger.warning(f"paraphrase failed: {title}: {reason}")
        options = {"max_chars": self.max_chars, "windows": self.windows, "stride": self.stride, "sample": sample}
        items, summary = leakage.leakage_check(articles, paraphrases, model, **options)
        settings = leakage.leakage_settings(
            model, articles=articles, paraphrases=paraphrases, paraphraser=paraphraser, **options
        )
        settings.update(_scoring(model, "leakage"))
        return RunResult(
            "leakage",
            items,
            Summary(summary),
            settings,
            {"articles": self.source},
            (paraphraser, _client(model)),
            None,
            leakage.write_leakage_results,
        ).finished(_failures(clients) - before, len(failed) + sum(i["failed"] for i in items))
