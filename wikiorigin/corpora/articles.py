"""Rows of ``articles.parquet`` from pages: the text with its footnotes, or one section of it."""

from __future__ import annotations

import re
import urllib.parse
from dataclasses import asdict

from ..dumps.pages import PageText
from ..wikitext import Article, Reference, Section, convert

__all__ = ["article_row", "section_of", "page_url"]

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
    end = next((i for i in range(start + 1, len(article.sections))
                if 0 < article.sections[i].level <= level), len(article.sections))
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
    refs = []
    for key, number in renumber.items():
        ref = Reference(**{**asdict(by_key[key]), "number": number})
        refs.append(ref)
    refs.sort(key=lambda r: (r.group or "", r.number))
    text = "\n\n".join(f"{'=' * s.level} {s.heading} {'=' * s.level}\n{s.text}".strip() for s in sections)
    return Article(text, sections, refs, article.categories)


def article_row(page: PageText, wiki: str, domain: str, namespaces: dict,
                anchor: str | None = None, qid: str | None = None) -> tuple[dict | None, Article]:
    """An ``articles`` row for ``page`` (or its section ``anchor``; None if there is none)."""
    article = convert(page.text, namespaces)
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
        "sections": [asdict(s) for s in article.sections],
        "references": [asdict(r) for r in article.references],
        "categories": article.categories,
    }
    return row, article
