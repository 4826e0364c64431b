"""The leakage task (:class:`LeakageTask`, importable from :mod:`~wikiorigin.evaluators.tasks`):
articles against their paraphrases under a model that scores every token."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import ParameterError
from ..log import logger
from ..protocols import TokenLogprobsModel
from . import leakage
from ._tasks_common import client_of, failures, needs
from .results import RunResult, Summary

__all__ = ["LeakageTask"]


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
    paraphraser: Any = None
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

    def run(self, model: TokenLogprobsModel) -> RunResult:
        """Score the sampled articles and their paraphrases under ``model`` (a
        :class:`~wikiorigin.protocols.TokenLogprobsModel`; one without is refused before
        anything runs), writing the paraphrases first when none were given (the first few that
        failed are logged; their articles are left out of the comparison, and the run is
        ``complete: false``). An article whose texts' scoring requests failed after their
        retries is an item marked ``failed``, out of the figures, and the run is incomplete too."""
        model = needs(model, "token_logprobs", "a leakage task")
        clients = (self.paraphraser, client_of(model))
        before = failures(clients)
        sample = self.drawn()
        articles = {t: self.articles[t] for t in sample.titles}
        paraphrases, paraphraser = self.paraphrases, None
        failed: dict[str, str] = {}
        if paraphrases is None:
            passages = {t: leakage.passage(text, self.max_chars) for t, text in articles.items()}
            paraphrases, failed = leakage.paraphrase(passages, self.paraphraser)
            paraphraser = self.paraphraser
            for title, reason in list(failed.items())[:5]:
                logger.warning(f"paraphrase failed: {title}: {reason}")
        windows, stride, max_chars = self.windows, self.stride, self.max_chars
        items, summary = leakage.leakage_check(
            articles, paraphrases, model, max_chars=max_chars, windows=windows, stride=stride, sample=sample
        )
        settings = leakage.leakage_settings(
            model,
            articles=articles,
            paraphrases=paraphrases,
            paraphraser=paraphraser,
            sample=sample,
            max_chars=max_chars,
            windows=windows,
            stride=stride,
        )
        return RunResult(
            "leakage",
            items,
            Summary(summary),
            settings,
            {"articles": self.source},
            (paraphraser, client_of(model)),
            None,
            leakage.write_leakage_results,
        ).finished(failures(clients) - before, len(failed) + sum(i["failed"] for i in items))
