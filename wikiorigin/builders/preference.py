"""CARE-style preference pairs in TRL's format (``prompt``, ``chosen``, ``rejected``), made
two ways:

- :func:`build_rated_preferences`: from people's ratings of recorded responses (CARE's
  released annotations, read by :func:`~wikiorigin.care.read_rated`). No model is called, and
  a pair's chosen and rejected texts are the very responses that were rated.
- :func:`build_preferences`: several models answer the questions now and CARE's judge
  (:mod:`wikiorigin.care`, a rubric per CARE category) rates each answer 1-10.

Which responses become pairs (``pairs``), per question:

- ``"best-worst"`` (default, CARE's rule): the highest-rated response against the
  lowest-rated one. Among responses with the same rating, the one whose model name sorts
  first (Python's string order) is taken, for the best and for the worst alike. A question
  whose best and worst ratings are equal, or whose gap is under ``min_gap``, gives no pair.
- ``"all"``: every two responses whose ratings differ by ``min_gap`` or more (default 2).

Two ratings that are equal never make a pair. ``format="conversational"`` writes
``prompt``, ``chosen`` and ``rejected`` as lists of chat messages
(:data:`~wikiorigin.schemas.PREFERENCES_CONVERSATIONAL`), so a trainer applies the chat
template; ``"standard"`` (default) writes them as strings
(:data:`~wikiorigin.schemas.PREFERENCES`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..care import (
    JUDGE_PARAMS,
    JUDGE_SHA1,
    RATING_SCALE,
    question_key,
    read_care,
    read_rated,
)
from ..errors import ParameterError, WikioriginError
from ._pairing import FORMATS, PAIRS, _language, _pairs_of, _settings
from ._preference_calls import _answer_request, _failure, _rate, _sent
from .presets import configured
from .result import (
    BuildReport,
    BuildResult,
    FailedRows,
    RequestCount,
    input_file,
    saved_run,
    screen_inputs,
)

if TYPE_CHECKING:  # the rated path loads no LLM client
    pass

__all__ = [
    "PreferenceConfig",
    "PreferenceBuilder",
    "build_preferences",
    "build_rated_preferences",
    "plan_preferences",
    "ANSWER_PARAMS",
    "PAIRS",
    "FORMATS",
]

ANSWER_PARAMS = {"temperature": 0.7, "top_p": 1.0, "max_tokens": 1024}
"""The default sampling of the responders' answers: CARE's (temperature 0.7, top-p 1.0, at
most 1,024 output tokens)."""


@dataclass(slots=True)
class PreferenceConfig:
    """Settings of a preference build, all recorded in the output's provenance: the pairing
    rule (``pairs``, ``min_gap``: see the module), the output ``format``, the ``language`` of the
    questions and answers (None: the questions' own; CARE's files say none, so give it), the
    sampling of the responders' answers (``answer_params``, default :data:`ANSWER_PARAMS`) and
    of the judge (``judge_params``, default :data:`~wikiorigin.care.JUDGE_PARAMS`), and the scale of
    recorded ratings (``rating_scale``: lowest, highest; default CARE's 1-10,
    :data:`~wikiorigin.care.RATING_SCALE`): a rated response outside it is an error naming its
    row, before anything is written. The judge rates on CARE's 1-10 only. :meth:`from_preset`
    makes one with a paper's settings (``care``), which it records as ``preset``."""

    pairs: str = "best-worst"
    min_gap: float | None = None
    format: str = "standard"
    language: str | None = None
    answer_params: dict = field(default_factory=lambda: dict(ANSWER_PARAMS))
    judge_params: dict = field(default_factory=lambda: dict(JUDGE_PARAMS))
    rating_scale: tuple[float, float] = RATING_SCALE
    _preset: str | None = field(default=None, init=False, repr=False)  # set by from_preset only

    @classmethod
    def from_preset(cls, name: str, **overrides) -> PreferenceConfig:
        """The settings of the preset ``name`` (:data:`~wikiorigin.builders.presets.PRESETS`:
        ``care``), the ``overrides`` (any field) winning; a ``ValueError`` for another builder's
        preset or an unknown name."""
        return configured(cls, "preference", name, overrides)

    @property
    def preset(self) -> str | None:
        """The preset this configuration was made from (:meth:`from_preset`), else None."""
        return self._preset

    def gap(self) -> float:
        """The pairing's ``min_gap`` (the rule's default for None), once the settings are checked
        (a :class:`~wikiorigin.errors.WikioriginError` for one out of range)."""
        low, high = self.rating_scale
        if not (math.isfinite(low) and math.isfinite(high) and low < high):
            raise ParameterError(
                "rating_scale",
                f"the rating scale is a lowest and a highest rating, finite, the lowest first, not {low}-{high}: "
                "give {rating_scale}",
            )
        return _settings(self.pairs, self.min_gap, self.format)


# --- the builder -------------------------------------------------------------------------------


def _screened(rows: list[dict], failed: FailedRows) -> list[dict]:
    """The questions, each once: a question asked twice is answered and rated once."""
    return screen_inputs(
        rows,
        lambda row, step, reason: _failure(failed, row["question"], None, step, reason),
        lambda row: [("question", question_key(row["question"]))],
        text="question",
    )


def _grouped(responses: list[dict], known: dict, failed: FailedRows, questions) -> tuple[dict, set]:
    """The rated ``responses`` by question (``(model, response, rating)`` each) for the
    questions ``known``; those of other questions dropped (step ``match``), their keys returned."""
    grouped: dict[str, tuple[str, list]] = {}
    unmatched = set()
    for r in responses:
        key = question_key(r["question"])
        if key not in known:
            unmatched.add(key)
            item = {"response": r["response"], "rating": r["rating"], "row": r["row"]}
            _failure(failed, r["question"], r["model"], "match", f"question not in {Path(questions).name}", item)
            continue
        grouped.setdefault(key, (r["question"], []))[1].append((r["model"], r["response"], r["rating"]))
    return grouped, unmatched


def _meta(config: PreferenceConfig, questions, rated, gap: float, language: str) -> dict:
    """The provenance both ways of building share: the inputs, the pairing and the preset."""
    return dict(
        questions=input_file(questions),
        rated=None if rated is None else input_file(rated),
        pairs=config.pairs,
        min_gap=gap,
        format=config.format,
        language=language,
        preset=config.preset,
    )


class PreferenceBuilder:
    """The preference builder: ``PreferenceBuilder(config).run(questions, responders, judge)``
    has each responder (name -> :class:`~wikiorigin.llm.LLMClient`) answer the CARE questions
    and the judge rate each answer; :meth:`run_rated` pairs people's rated responses, calling
    no model. Both return a :class:`~wikiorigin.builders.result.BuildResult` that saves itself.
    ``config``: :class:`PreferenceConfig`."""

    def __init__(self, config: PreferenceConfig | None = None):
        self.config = config or PreferenceConfig()
        self.config.gap()  # checked before anything is read

    def run(self, questions, responders: dict, judge, *, out=None) -> BuildResult:
        """Pairs of the answers of ``responders`` to the questions of ``questions`` (a CARE file),
        rated by ``judge``; failed answers (step ``answer``) and ratings (``judge``) are the
        dropped rows. ``out``: the pairs saved there, the whole run under ``OUT.lock``
        (:func:`~wikiorigin.builders.result.saved_run`: checked before any call)."""
        if out is not None:
            build = lambda: self.run(questions, responders, judge)  # noqa: E731
            return saved_run(build, out, [questions], [*responders.values(), judge], names=["questions"])
        config = self.config
        gap = config.gap()
        if tuple(config.rating_scale) != RATING_SCALE:
            raise ParameterError(
                "rating_scale",
                "the judge rates on CARE's scale 1-10: give {rating_scale} only with recorded ratings",
            )
        rows = read_care(questions)
        language = _language(rows, config.language, questions)
        report = BuildReport("preference")
        failed = FailedRows(report)
        rows = _screened(rows, failed)
        report.questions = len(rows)
        count = RequestCount([*responders.values(), judge])
        answers = {
            name: client.run([_answer_request(r, config.answer_params) for r in rows])
            for name, client in responders.items()
        }
        scores = _rate(rows, answers, judge, config.judge_params, failed)
        records = []
        for i, row in enumerate(rows):
            rated = [(name, answers[name][i].text, scores[(i, name)]) for name in answers if (i, name) in scores]
            records += _pairs_of(report, row["question"], row, rated, config, gap, language)
        report.kept = len(records)
        count.settle(report)
        report.usage = {
            **{name: client.usage.as_dict() for name, client in responders.items()},
            "judge": judge.usage.as_dict(),
        }
        meta = dict(
            _meta(config, questions, None, gap, language),
            ratings="judge",
            responders=sorted(responders),
            judge=judge.backend.model,
            judge_prompt_sha1=JUDGE_SHA1,
            answer_params=_sent(responders, config.answer_params),  # as sent (no sampling with an effort)
            judge_params=judge.params(config.judge_params),
            usage=report.usage,
            llm={"judge": judge.settings(), **{name: c.settings() for name, c in responders.items()}},
        )
        return BuildResult(
            "preference",
            records,
            FORMATS[config.format][0],
            failed,
            report,
            meta,
            {**responders, "judge": judge},
            inputs=(questions,),
        )

    def run_rated(self, questions, rated, *, out=None) -> BuildResult:
        """Pairs of the rated responses in ``rated`` (:func:`~wikiorigin.care.read_rated`),
        calling no model: chosen and rejected are the rated texts. ``questions`` (a CARE file)
        gives each question's culture and category and chooses the questions: a rated question
        not in it is a dropped row (step ``match``) and counted (``report.unmatched``); when none
        is in it, a :class:`~wikiorigin.errors.WikioriginError` before anything is written.
        ``out``: the pairs saved there, under ``OUT.lock`` (:func:`~wikiorigin.builders.result.saved_run`)."""
        if out is not None:
            build = lambda: self.run_rated(questions, rated)  # noqa: E731
            return saved_run(build, out, [questions, rated], names=["questions", "rated"])
        config = self.config
        gap = config.gap()
        known: dict[str, dict] = {}
        for row in read_care(questions):
            known.setdefault(question_key(row["question"]), row)
        responses = read_rated(rated, config.rating_scale)
        language = _language(list(known.values()), config.language, questions)
        report = BuildReport("preference")
        failed = FailedRows(report)
        grouped, unmatched = _grouped(responses, known, failed, questions)
        if not grouped:
            raise WikioriginError(
                f"{rated}: none of its {len(unmatched)} questions is in {questions} "
                f"(the first: {responses[0]['question'][:40]!r})"
            )
        records = [
            rec
            for key, (question, rs) in grouped.items()
            for rec in _pairs_of(report, question, known[key], rs, config, gap, language)
        ]
        report.questions, report.unmatched, report.kept = len(grouped), len(unmatched), len(records)
        report.generated = sum(len(rs) for _, rs in grouped.values())
        meta = dict(
            _meta(config, questions, rated, gap, language),
            rating_scale=list(config.rating_scale),
            ratings="recorded",
            responders=sorted({r["model"] for r in responses}),
            judge=None,
            judge_prompt_sha1=None,
            answer_params=None,
            judge_params=None,
            usage={},
        )
        return BuildResult(
            "preference", records, FORMATS[config.format][0], failed, report, meta, inputs=(questions, rated)
        )

    def plan(self, questions, responders: dict) -> dict:
        """A dry run: the answer calls not in the cache and their input tokens; each answer
        then costs one judge call."""
        rows = read_care(questions)
        plans = [
            client.dry_run([_answer_request(r, self.config.answer_params) for r in rows])
            for client in responders.values()
        ]
        return {
            "requests": sum(p["requests"] for p in plans),
            "calls": sum(p["calls"] for p in plans),
            "input_tokens": sum(p["input_tokens"] for p in plans),
            "later_calls_at_most": len(rows) * len(responders),
        }


# --- the functions over it ---------------------------------------------------------------------


def _config(preset: str | None, **settings) -> PreferenceConfig:
    """The configuration of ``settings``, from the preset ``preset`` when one is named."""
    return PreferenceConfig.from_preset(preset, **settings) if preset else PreferenceConfig(**settings)


def build_rated_preferences(
    questions,
    rated,
    out,
    *,
    pairs: str = "best-worst",
    min_gap: float | None = None,
    format: str = "standard",
    language: str | None = None,
    preset: str | None = None,
) -> dict:
    """Pairs into ``out`` from the rated responses in ``rated`` (JSON, JSON Lines, CSV or
    Parquet with ``question``, ``model``, ``response``, ``rating``: see
    :func:`~wikiorigin.care.read_rated`), calling no model: :meth:`PreferenceBuilder.run_rated`
    run and saved (rated questions not in ``questions`` listed in ``<out>.failed.parquet``).
    ``language``: of the questions (None: their own; CARE's files say none); ``preset``: the
    paper's settings asked for by name, recorded. Returns counts (questions: rated and matched,
    responses: theirs, unmatched_questions, pairs)."""
    config = _config(preset, pairs=pairs, min_gap=min_gap, format=format, language=language)
    report = PreferenceBuilder(config).run_rated(questions, rated, out=out).report
    return {
        "questions": report.questions,
        "responses": report.generated,
        "unmatched_questions": report.unmatched,
        "pairs": report.kept,
    }


def build_preferences(
    questions,
    out,
    responders: dict,
    judge,
    *,
    pairs: str = "best-worst",
    min_gap: float | None = None,
    format: str = "standard",
    language: str | None = None,
    answer_params: dict | None = None,
    judge_params: dict | None = None,
    preset: str | None = None,
) -> dict:
    """Pairs into ``out``: each of ``responders`` (name -> client) answers every question of
    ``questions`` (sampled with ``answer_params``, default :data:`ANSWER_PARAMS`), ``judge``
    rates each answer (sampled with ``judge_params``, default
    :data:`~wikiorigin.care.JUDGE_PARAMS`): :meth:`PreferenceBuilder.run` run and saved (failed
    answers and ratings in ``<out>.failed.parquet``). ``language``: of the questions (None:
    their own; CARE's files say none). Returns counts (questions, answer_errors, judge_errors,
    pairs)."""
    sampling = {"answer_params": answer_params, "judge_params": judge_params}
    given = {k: dict(v) for k, v in sampling.items() if v is not None}
    config = _config(preset, pairs=pairs, min_gap=min_gap, format=format, language=language, **given)
    report = PreferenceBuilder(config).run(questions, responders, judge, out=out).report
    return {
        "questions": report.questions,
        "answer_errors": report.dropped.get("answer", 0),
        "judge_errors": report.dropped.get("judge", 0),
        "pairs": report.kept,
    }


def plan_preferences(questions, responders: dict, *, answer_params: dict | None = None) -> dict:
    """:meth:`PreferenceBuilder.plan` with the answers sampled by ``answer_params`` (default
    :data:`ANSWER_PARAMS`): the answer calls a build would make first, and their input tokens."""
    params = dict(ANSWER_PARAMS if answer_params is None else answer_params)
    return PreferenceBuilder(PreferenceConfig(answer_params=params)).plan(questions, responders)
