"""The judged task (:class:`JudgeTask`, importable from :mod:`~wikiorigin.evaluators.tasks`):
CARE answers, the model's or recorded, rated by an LLM judge."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..care import JUDGE_PARAMS, RATING_SCALE, read_rated
from ..errors import ParameterError, WikioriginError
from ..log import logger
from ..protocols import GeneratingModel, Judge, model_name
from . import judge as judging
from ._tasks_common import client_of, failures, needs
from .recorded import Recorded
from .results import RunResult, Summary

__all__ = ["JudgeTask"]

_Answers = tuple[GeneratingModel | None, list | None, str, bool]  # who answered, what, their name, rated ones


@dataclass
class JudgeTask:
    """CARE questions (with reference answers) whose answers an LLM ``judge`` (an
    :class:`~wikiorigin.llm.LLMClient`, or any :class:`~wikiorigin.protocols.Judge`) rates
    1-10. The answers come from the model run (sampled with ``temperature``,
    ``max_new_tokens``, ``seed``), or are recorded:
    :class:`~wikiorigin.evaluators.recorded.Recorded` takes the rows' own ``response`` s, else
    the responses people rated (``human_ratings``). ``human_ratings``: people's ratings
    (:func:`~wikiorigin.care.read_rated` rows), compared with the judge's (the summary's
    ``agreement``). ``judge_max_tokens``: the judge's output limit (CARE's
    :data:`~wikiorigin.care.JUDGE_PARAMS`: 1,024; a reasoning judge spends part of it thinking)."""

    rows: list[dict]
    judge: Judge | None = None
    human_ratings: list[dict] | None = None
    temperature: float = 0.7
    max_new_tokens: int = 512
    seed: int = 0
    source: str = "the questions"
    judge_max_tokens: int = int(JUDGE_PARAMS["max_tokens"])

    def __post_init__(self):
        if self.judge is None:
            raise ParameterError("judge", "a judged task needs its {judge}: the LLM client that rates each answer")
        if (
            isinstance(self.judge_max_tokens, bool)
            or not isinstance(self.judge_max_tokens, int)
            or (self.judge_max_tokens < 1)
        ):
            raise ParameterError(
                "judge_max_tokens",
                f"{{judge_max_tokens}} is a number of tokens, 1 or more, not {self.judge_max_tokens!r}",
            )
        if not isinstance(self.judge, Judge):
            raise ParameterError(
                "judge",
                f"{{judge}} is a {type(self.judge).__name__}: a judge runs chat requests (run()), says how "
                "it sends its sampling (params()) and describes itself (describe()), as an LLMClient does",
            )

    @classmethod
    def from_file(cls, path, *, judge: Judge, human_ratings=None, rating_scale=RATING_SCALE, **settings) -> JudgeTask:
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

    def judge_params(self) -> dict:
        """The judge's sampling: CARE's, with the task's output limit."""
        return {**JUDGE_PARAMS, "max_tokens": self.judge_max_tokens}

    def run(self, model: GeneratingModel | Recorded) -> RunResult:
        """Have ``model`` (a :class:`~wikiorigin.protocols.GeneratingModel`) answer every
        question, or take :class:`~wikiorigin.evaluators.recorded.Recorded` answers, and have
        the judge rate them (an answer or a rating whose request failed: unrated, ``complete:
        false``). A model that cannot generate is refused before anything runs."""
        if not isinstance(model, Recorded):
            model = needs(model, "generate", "a judged task")
        clients = (client_of(model), self.judge)
        before = failures(clients)
        return self._run(model).finished(failures(clients) - before)

    def _answers(self, model: GeneratingModel | Recorded) -> _Answers:
        """Who answered (None: recorded), the answers (None: the people's rated responses are
        rated), their name, and whether the rated responses are the answers."""
        if not isinstance(model, Recorded):
            responses = model.generate([r["question"] for r in self.rows], **self.sampling())
            return model, responses, model_name(model), False
        if model.path is not None:
            raise WikioriginError(
                "a judged task's recorded answers are its rows' own `response` s (or the "
                "responses people rated): give Recorded() without a file"
            )
        recorded = all(r.get("response") for r in self.rows)
        rate_rated = self.human_ratings is not None and not recorded  # the judge rates the people's responses
        if not (recorded or rate_rated):
            raise WikioriginError(
                f"{self.source}: the rows carry no `response` (nor human_ratings= to rate): give a model"
            )
        own = [r["response"] for r in self.rows] if recorded else None
        return None, own, model.given_name or "recorded", rate_rated

    def _run(self, model: GeneratingModel | Recorded) -> RunResult:
        rated, judge = self.human_ratings, self.judge
        assert judge is not None  # checked in __post_init__
        asked, responses, name, rate_rated = self._answers(model)
        if rate_rated and rated is not None:
            items, alone = judging.judge_rated(self.rows, rated, judge, self.judge_params())
            unmatched = len(alone)
        else:
            answers = list(responses or [None] * len(self.rows))
            items = judging.judge_answers(self.rows, answers, judge, model=name, params=self.judge_params())
            unmatched = judging.attach_human_ratings(items, rated) if rated is not None else 0
        summary = judging.summarize_judged(items)
        if rated is not None:
            summary["agreement"]["unmatched"] = unmatched
            if unmatched:
                logger.info(f"{unmatched} rated responses not compared (no such question and answer here)")
        settings = judging.judge_settings(
            asked,
            judge,
            rows=self.rows,
            rated=rated,
            rated_answers=rate_rated,
            judge_params=self.judge_params(),
            **self.sampling(),
        )
        meta: dict[str, Any] = {"questions": self.source, "judge": settings["judge"]}
        return RunResult(
            "judge",
            items,
            Summary(summary),
            settings,
            meta,
            (client_of(asked), judge),
            None,
            judging.write_judge_results,
        )
