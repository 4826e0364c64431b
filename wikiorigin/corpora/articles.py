"""Rows of ``articles.parquet`` from pages: the text with its footnotes, or one section of it.

:func:`convert_articles` converts a stream of pages (:class:`ArticleTask`) on ``jobs``
processes, or on a Dask cluster, and gives back Arrow batches of rows in the order of the
stream with what became of each page (:class:`Converted`): the same rows, in the same order,
for any number of processes. The stream is read only as pages are given out (a few tasks
ahead), so a corpus writer holds at most :data:`ARTICLE_GROUP_ROWS` rows and a few tasks,
whatever the corpus's size.
"""

from __future__ import annotations

import dataclasses
import re
import urllib.parse
from collections.abc import Generator, Iterable, Iterator
from dataclasses import dataclass

from ..dumps.pages import PageText
from ..wikitext import Article, Reference, Section, convert

__all__ = [
    "article_row",
    "section_of",
    "page_url",
    "ArticleTask",
    "Converted",
    "convert_articles",
    "ARTICLE_GROUP_ROWS",
    "TASK_CHARS",
]

ARTICLE_GROUP_ROWS = 256
"""Rows per row group of an articles file: the rows its writer holds before they go to disk
(a few MB of text), so that writing a corpus of any size takes flat memory."""
TASK_CHARS = 500_000
"""Wikitext per task given to a worker (pages are not split): large enough that sending the
pages and their rows between processes is a small part of the conversion (about 0.5 s of
work per task), small enough that the tasks in flight hold little."""

_MARKER = re.compile(r"\[(?:([^\s\[\]]+) )?(\d+)\]")


def page_url(domain: str, title: str, anchor: str | None = None) -> str:
    """The URL of page ``title`` on ``domain`` (``ja.wikipedia.org``), with ``#anchor`` when
    ``anchor`` is given; spaces become underscores and the rest is percent-encoded."""
    url = f"https://{domain}/wiki/" + urllib.parse.quote(title.replace(" ", "_"), safe="/:()'!,*")
    return url + ("#" + urllib.parse.quote(anchor.replace(" ", "_")) if anchor else "")


def section_of(article: Article, anchor: str) -> Article | None:
    """The section called ``anchor`` (with its subsections), its footnotes renumbered from 1
    in order of first use within it, as if it were a page of its own."""
    want = anchor.replace("_", " ").strip()
    start = next((i for i, s in enumerate(article.sections) if s.level and s.heading == want), None)
    if start is None:
        return None
    level = article.sections[start].level
    end = next(
        (i for i in range(start + 1, len(article.sections)) if 0 < article.sections[i].level <= level),
        len(article.sections),
    )
    chosen = article.sections[start:end]
    by_key = {(r.group, r.number): r for r in article.references}
    renumber: dict[tuple, int] = {}
    counts: dict = {}

    def mark(m: re.Match) -> str:
        key = (m.group(1) or None, int(m.group(2)))
        if key not in by_key:
            return m.group(0)
        if key not in renumber:
            counts[key[0]] = counts.get(key[0], 0) + 1
            renumber[key] = counts[key[0]]
        return f"[{key[0]} {renumber[key]}]" if key[0] else f"[{renumber[key]}]"

    sections = [Section(s.heading, s.level, _MARKER.sub(mark, s.text)) for s in chosen]
    refs = [dataclasses.replace(by_key[key], number=number) for key, number in renumber.items()]
    refs.sort(key=lambda r: (r.group or "", r.number))
    text = "\n\n".join(f"{'=' * s.level} {s.heading} {'=' * s.level}\n{s.text}".strip() for s in sections)
    return Article(text, sections, refs, article.categories)


def article_row(
    page: PageText,
    wiki: str,
    domain: str,
    namespaces: dict,
    anchor: str | None = None,
    qid: str | None = None,
    article: Article | None = None,
) -> tuple[dict | None, Article]:
    """An ``articles`` row for ``page`` (or its section ``anchor``; None if there is none), its
    text ``article`` when given (a text source's), else the wikitext's."""
    article = convert(page.text, namespaces) if article is None else article
    if anchor:
        part = section_of(article, anchor)
        if part is None:
            return None, article
        article = part
    row = {
        "wiki": wiki,
        "page_id": page.page_id,
        "title": page.title,
        "anchor": anchor,
        "qid": qid,
        "revision_id": page.revision_id,
        "revision_timestamp": page.revision_timestamp,
        "url": page_url(domain, page.title, anchor),
        "text": article.text,
        "sections": [_record(s, _SECTION_FIELDS) for s in article.sections],
        "references": [_record(r, _REFERENCE_FIELDS) for r in article.references],
        "categories": article.categories,
    }
    return row, article


_SECTION_FIELDS = tuple(f.name for f in dataclasses.fields(Section))
_REFERENCE_FIELDS = tuple(f.name for f in dataclasses.fields(Reference))


def _record(obj, names: tuple[str, ...]) -> dict:
    """``dataclasses.asdict`` of a flat record (its one list, a reference's authors, is not
    copied: the row goes straight to Arrow), without asdict's deep copy of every value."""
    return {name: getattr(obj, name) for name in names}


@dataclass(slots=True)
class ArticleTask:
    """One page to convert into a row: the ``page``, the section ``anchor`` wanted of it (None:
    the whole page), its item's ``qid``, ``more`` columns of its row (the origin corpus's
    Wikidata fields) and ``key``, the caller's name for it, given back in its
    :class:`Converted`."""

    page: PageText
    anchor: str | None = None
    qid: str | None = None
    more: dict | None = None
    key: object = None


@dataclass(slots=True)
class Converted:
    """What became of one :class:`ArticleTask` (``key`` is its key): ``written`` (False: the
    page has no section ``anchor``), ``fallback`` (converted by the plain fallback), the
    number of ``references`` of its row and the page furniture its text source ``left_out``
    (by kind: :data:`wikiorigin.render.html.FURNITURE`)."""

    key: object
    written: bool
    fallback: bool
    references: int
    left_out: dict | None = None


def _convert_chunk(
    tasks: list[ArticleTask], wiki: str, domain: str, namespaces: dict, schema, source=None
) -> tuple[object, list[Converted]]:
    """The rows of ``tasks`` (:func:`article_row`, each with its ``more`` columns) as one Arrow
    record batch of ``schema``, and what became of each task: the work of one worker call.
    ``source``: the text source (:mod:`wikiorigin.render.sources`), else the wikitext."""
    import pyarrow as pa

    rows, outcomes = [], []
    texts = source.articles([t.page for t in tasks]) if source is not None else [(None, None)] * len(tasks)
    for task, (text, left_out) in zip(tasks, texts):
        row, article = article_row(task.page, wiki, domain, namespaces, task.anchor, task.qid, text)
        if row is not None:
            if task.more:
                row.update(task.more)
            rows.append(row)
        outcomes.append(
            Converted(
                task.key,
                row is not None,
                article.fallback,
                len(row["references"]) if row is not None else 0,
                left_out,
            )
        )
    return pa.RecordBatch.from_pylist(rows, schema=schema), outcomes


def _chunks(tasks: Iterable[ArticleTask], chars: int) -> Iterator[list[ArticleTask]]:
    """Consecutive tasks, about ``chars`` of wikitext each (a page is never split): where the
    cuts fall depends only on the pages, so the batches are the same for any number of jobs."""
    chunk, size = [], 0
    for task in tasks:
        chunk.append(task)
        size += len(task.page.text)
        if size >= chars:
            yield chunk
            chunk, size = [], 0
    if chunk:
        yield chunk


def convert_articles(
    tasks: Iterable[ArticleTask],
    wiki: str,
    domain: str,
    namespaces: dict,
    schema,
    *,
    jobs: int = 1,
    scheduler=None,
    source=None,
) -> Generator[tuple[object, list[Converted]], None, None]:
    """``(batch, converted)`` for consecutive runs of ``tasks``: the rows (Arrow, ``schema``)
    and what became of each task, in the order of ``tasks``, whatever ``jobs`` (local
    processes; 1: here) or ``scheduler`` (a Dask scheduler's address or client). ``tasks`` is
    read only as work is given out, a few tasks ahead of the rows taken: a generator, to be
    closed when left early (``contextlib.closing``), which ends the worker processes.
    ``source``: where the text comes from (:mod:`wikiorigin.render.sources`; None: the wikitext)."""
    from ..parallel import stream_tasks

    calls = ((chunk, wiki, domain, namespaces, schema, source) for chunk in _chunks(tasks, TASK_CHARS))
    yield from stream_tasks(_convert_chunk, calls, jobs=jobs, scheduler=scheduler)
