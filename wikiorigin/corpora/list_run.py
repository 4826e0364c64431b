"""The list corpus as a config and a run, the shape of every stage:
``ListCorpusRun(ListCorpusConfig(list_page=...)).run(dump, out)`` writes the articles the list
page's entries link to (:func:`~wikiorigin.corpora.yokai.build_list_corpus`) and returns a
:class:`~wikiorigin.corpora.result.CorpusResult`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..dumps.pages import Multistream
from .result import CorpusResult, corpus_result, list_inputs, list_settings
from .yokai import build_list_corpus

__all__ = ["ListCorpusConfig", "ListCorpusRun"]


@dataclass(frozen=True)
class ListCorpusConfig:
    """The settings of a list corpus run. ``list_page``: the title of the list page whose entries'
    links are the articles; ``domain``: the wiki's domain in the articles' URLs (None: from the
    dump's dbname); ``text``: where the articles' text comes from
    (:func:`~wikiorigin.render.sources.text_source`; None: the most faithful this machine has);
    ``jobs``: the processes converting articles (or a Dask cluster: ``scheduler``)."""

    list_page: str
    domain: str | None = None
    text: str | None = None
    jobs: int = 1
    scheduler: str | None = None


class ListCorpusRun:
    """``ListCorpusRun(config).run(dump, out)``: the articles of the entries of the config's list
    page in ``dump`` (a :class:`~wikiorigin.dumps.pages.Multistream`) written to ``out``, the
    whole run guarded (:func:`~wikiorigin.runs.guarded_run`)."""

    def __init__(self, config: ListCorpusConfig):
        self.config = config

    def run(self, dump: Multistream, out, *, html_dump=None) -> CorpusResult:
        """Write the corpus to ``out`` (``html_dump``: the Enterprise HTML dump of
        ``text="html-dump"``) and return its :class:`~wikiorigin.corpora.result.CorpusResult`."""
        c = self.config
        report = build_list_corpus(
            dump,
            out,
            list_page=c.list_page,
            domain=c.domain,
            jobs=c.jobs,
            scheduler=c.scheduler,
            text=c.text,
            html_dump=html_dump,
        )
        settings = list_settings(dump, report, c.list_page, c.domain)
        return corpus_result(out, report, settings, list_inputs(dump, html_dump))
