"""What a corpus run returns (:class:`CorpusResult`: the articles file, the counts of its report,
the settings and a signature of the inputs; :meth:`~wikiorigin._stage.StageResult.save`), the
report of an origin corpus (:class:`OriginCorpusReport`), and :func:`guarded_corpus`, which
holds a corpus function's whole run under :func:`~wikiorigin.runs.guarded_run`.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from .._stage import StageResult

__all__ = ["CorpusResult", "OriginCorpusReport", "guarded_corpus", "corpus_result"]

P = ParamSpec("P")
R = TypeVar("R")


@dataclass(slots=True)
class OriginCorpusReport:
    """What :func:`build_origin_corpus` did. ``renamed``: pages kept under their new title;
    ``mismatched``: pages left out because the dump has them under another title or as a
    redirect (one line each, with the item, the page id and both titles); ``several_regions``:
    items whose P131 values end in different first-level divisions, so without a region (one
    line each: the item and the divisions); ``text``: where the articles' text came from;
    ``furniture``: what a rendered text left out, by kind (:data:`~wikiorigin.render.html.FURNITURE`)."""

    wiki: str = ""
    items: int = 0
    other_wiki: int = 0
    missing_pages: list[str] = field(default_factory=list)
    missing_entities: list[str] = field(default_factory=list)
    renamed: list[str] = field(default_factory=list)
    mismatched: list[str] = field(default_factory=list)
    several_regions: list[str] = field(default_factory=list)
    articles: int = 0
    bad_wikidata_lines: int = 0
    with_region: int = 0
    region_fetches: int = 0
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    text: str = ""
    furniture: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class CorpusResult(StageResult):
    """A corpus run's output: ``path`` (the articles file: :meth:`table` reads it), ``report``
    (what the run found: an :class:`OriginCorpusReport` or a
    :class:`~wikiorigin.corpora.yokai.ListCorpusReport`; :attr:`counts` gives its numbers),
    ``settings`` (the corpus kind, wiki, text source, list page or
    SPARQL endpoint) and ``inputs`` (items, dump and index, Wikidata or entities file, HTML
    dump), signed by :attr:`signature` (each input by name and SHA-256);
    :meth:`save` writes the file elsewhere too."""

    STAGE = "corpus"

    report: Any = None

    @property
    def counts(self) -> dict[str, int]:
        """The report's counts: its numbers, and the length of each of its lists."""
        found = {}
        for f in fields(self.report):
            value = getattr(self.report, f.name)
            if isinstance(value, bool) or not isinstance(value, (int, list)):
                continue
            found[f.name] = len(value) if isinstance(value, list) else value
        return found


def corpus_result(out, report, settings: dict, inputs: dict[str, Any]) -> CorpusResult:
    """The :class:`CorpusResult` of a run that wrote ``out`` and found ``report``: the settings
    that are given, the inputs (parameter name -> path; None: not given) read."""
    files = tuple(Path(p) for p in inputs.values() if p is not None)
    return CorpusResult(Path(out), {k: v for k, v in settings.items() if v is not None}, files, report=report)


def _list_inputs(given: dict) -> dict[str, Any]:
    dump = given["dump"]
    return {"dump": dump.dump, "index": dump.index, "html_dump": given.get("html_dump")}


def list_settings(dump, report, list_page: str, domain: str | None) -> dict:
    """The settings a list corpus run signs: its list page, wiki, domain and text source."""
    return {"corpus": "list", "wiki": dump.site.dbname, "list_page": list_page, "domain": domain, "text": report.text}


def list_inputs(dump, html_dump) -> dict[str, Any]:
    """The files a list corpus run reads, by parameter: the dump, its index, the HTML dump."""
    return {"dump": dump.dump, "index": dump.index, "html_dump": html_dump}


def guarded_corpus(func: Callable[P, R]) -> Callable[P, R]:
    """A list-corpus function (``func(dump, out, list_page, ..., html_dump=)``) held under the
    whole-run guard (:func:`~wikiorigin.runs.guarded_run`: ``out`` checked against the dump,
    what a killed run left swept, ``OUT.lock`` held), whoever calls it."""
    signature = inspect.signature(func)

    @functools.wraps(func)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        from ..files import check_output
        from ..runs import guarded_run

        given = signature.bind(*args, **kwargs)
        given.apply_defaults()
        inputs = {k: v for k, v in list_inputs(given.arguments["dump"], given.arguments.get("html_dump")).items() if v}
        out = given.arguments["out"]
        check_output(out, inputs=list(inputs.values()))  # before any work, in the function's words
        with guarded_run(out, inputs=inputs):
            return func(*args, **kwargs)

    return run
