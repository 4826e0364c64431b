"""A corpus of the articles a list page's entries link to (YokaiEval's starts from its list of
Japanese yokai: :data:`wikiorigin.presets.yokaieval.LIST_PAGE`): :func:`build_list_corpus`
reads the page's entries (:func:`~wikiorigin.corpora.list_entries.list_entries`), keeps section
anchors (``[[Kappa#In Tono]]`` extracts that section), follows redirects, drops duplicates, and
writes one ``articles`` row per article. It works for any list page of any wiki: a list of
folklore creatures in another language is the same job; the list page is always given.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass, field
from typing import Any

from ..dumps.pages import Multistream
from ..errors import WikioriginError
from ..files import ParquetSink, check_output, provenance
from ..progress import Progress
from ..render.sources import text_source
from ..schemas import ARTICLES
from .articles import ARTICLE_GROUP_ROWS, ArticleTask, convert_articles
from .list_entries import BACK_MATTER, ENTRY_RULE, LEFT_OUT, ListEntries, list_entries, list_links
from .result import guarded_corpus

__all__ = [
    "BACK_MATTER",
    "LEFT_OUT",
    "ENTRY_RULE",
    "PAGE_WINDOW",
    "ListEntries",
    "ListCorpusReport",
    "list_entries",
    "list_links",
    "build_list_corpus",
]


@dataclass(slots=True)
class ListCorpusReport:
    """What :func:`build_list_corpus` found: the list page's entries (list items and table
    rows), those whose name is no link, the entries' links (``linked``, without repeats), the
    page's other links left out by reason (:data:`LEFT_OUT`), articles found, redirects
    followed, titles missing, articles without references, duplicates, linked sections missing,
    articles converted by the fallback, articles written and the time taken; ``text``, where
    the text came from, ``note``, how to get a more faithful one when the default fell back, and
    ``furniture``, what a rendered text left out by kind (:data:`~wikiorigin.render.html.FURNITURE`)."""

    entries: int = 0
    unlinked: int = 0
    linked: int = 0
    left_out: dict[str, int] = field(default_factory=dict)
    found: int = 0
    redirected: int = 0
    missing: list[str] = field(default_factory=list)
    without_references: int = 0
    duplicates: int = 0
    sections_missing: list[str] = field(default_factory=list)
    fallback: int = 0
    articles: int = 0
    seconds: float = 0.0
    text: str = ""
    note: str | None = None
    furniture: dict[str, int] = field(default_factory=dict)


PAGE_WINDOW = 128
"""Links whose pages are fetched from the dump together (their streams decompressed once
between them): the pages a list corpus holds at a time, whatever the list's length."""


def _list_tasks(links: list, dump: Multistream, indexed: dict, report: ListCorpusReport) -> Iterator[ArticleTask]:
    """The articles of ``links``, in their order: their pages fetched :data:`PAGE_WINDOW` links
    at a time, each title once (a page linked again in a later window is kept until then), the
    titles found and redirected counted in ``report``; a page already taken for the same
    anchor (two titles, one page) is a duplicate. Each task's key is ``title#anchor``."""
    last = {title: i for i, (title, _) in enumerate(links)}
    kept: dict = {}  # title -> page, of the titles linked again further on
    done = set()
    for start in range(0, len(links), PAGE_WINDOW):
        window = links[start : start + PAGE_WINDOW]
        fetch = [t for t in dict.fromkeys(t for t, _ in window) if indexed[t] and t not in kept]
        pages = dump.get(fetch) if fetch else {}
        report.found += len(pages)
        report.redirected += sum(1 for t, p in pages.items() if p.title != t)
        pages.update(kept)
        for title, anchor in window:
            page = pages.get(title)
            if page is None:
                continue
            if (page.page_id, anchor) in done:
                report.duplicates += 1
                continue
            done.add((page.page_id, anchor))
            yield ArticleTask(page, anchor, key=f"{title}#{anchor}")
        end = start + len(window)
        kept = {t: p for t, p in pages.items() if last[t] >= end}


def _provenance(report: ListCorpusReport, list_page: str, dump: Multistream, revision_id) -> dict:
    """The corpus file's provenance: the list page and its revision, the dump, the entry rule
    and what the page's entries held."""
    counts = {"entries": report.entries, "unlinked": report.unlinked, "linked": report.linked}
    return provenance(
        text=report.text,
        stage="corpus",
        corpus="list",
        list_page=list_page,
        dump=dump.dump.name,
        list_revision_id=revision_id,
        wiki=dump.site.dbname,
        entries=ENTRY_RULE,
        entry_counts={**counts, "left_out": report.left_out},
    )


def _count(outcomes, report: ListCorpusReport) -> None:
    """Count the converted articles' ``outcomes`` in ``report``."""
    for outcome in outcomes:
        report.fallback += outcome.fallback
        for kind, n in (outcome.left_out or {}).items():
            report.furniture[kind] = report.furniture.get(kind, 0) + n
        if not outcome.written:
            report.sections_missing.append(outcome.key)
            continue
        report.without_references += not outcome.references
        report.articles += 1


@guarded_corpus  # the whole run guarded (OUT.lock, what a killed run left swept), whoever calls it
def build_list_corpus(
    dump: Multistream,
    out,
    list_page: str,
    domain: str | None = None,
    *,
    jobs: int = 1,
    scheduler=None,
    text: str | None = None,
    html_dump=None,
) -> ListCorpusReport:
    """Write the ``articles`` of the entries of ``list_page`` (:func:`list_entries`) to ``out``.

    ``text`` names where the articles' text comes from (:func:`~wikiorigin.render.sources.text_source`:
    ``"wikitext"``, ``"mediawiki"``, ``"html-dump"`` with ``html_dump``; None: the most faithful
    this machine has); the report's ``text`` and the file's provenance say which.

    The articles are converted on ``jobs`` processes (or a Dask cluster: ``scheduler``) and
    written as they come, in the order of the list: the same file for any ``jobs``, in flat
    memory (:func:`~wikiorigin.corpora.articles.convert_articles`)."""
    check_output(out, inputs=[dump.dump, dump.index])  # before any work
    started = time.perf_counter()
    listing = dump.get([list_page]).get(list_page)
    if listing is None:
        raise WikioriginError(f"{dump.dump}: no page {list_page!r} (the list page) in this dump")
    found = list_entries(listing.text, dump)
    links = found.links
    report = ListCorpusReport(found.entries, found.unlinked, len(links), found.left_out)
    titles = list(dict.fromkeys(t for t, _ in links))
    indexed = {t: dump.entry(t) is not None for t in titles}  # each title looked up once
    report.missing = [t for t in titles if not indexed[t]]
    domain = domain or f"{dump.site.dbname.removesuffix('wiki').replace('_', '-')}.wikipedia.org"
    source: Any  # a text source: its describe() says what it is
    source, report.note = text_source(
        text, dump, out, html_dump=html_dump, processes=max(1, (os.cpu_count() or 1) // jobs)
    )
    report.text = source.describe()
    meta = _provenance(report, list_page, dump, listing.revision_id)
    tasks = _list_tasks(links, dump, indexed, report)
    site = (dump.site.dbname, domain, dump.site.namespaces, ARTICLES)
    with (
        ParquetSink(out, ARTICLES, meta, row_group_rows=ARTICLE_GROUP_ROWS) as sink,
        closing(convert_articles(tasks, *site, jobs=jobs, scheduler=scheduler, source=source)) as converted,
        Progress("corpus", unit="article") as progress,
    ):
        for batch, outcomes in converted:
            sink.write(batch)
            progress.update(len(outcomes))
            _count(outcomes, report)
    report.seconds = time.perf_counter() - started
    return report


def __getattr__(name: str):
    """``YOKAI_LIST_PAGE``, kept importable from here: YokaiEval's list page lives in
    :mod:`wikiorigin.presets.yokaieval` (``LIST_PAGE``)."""
    if name == "YOKAI_LIST_PAGE":
        from ..presets import culture

        return culture("yokaieval").list_page
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
