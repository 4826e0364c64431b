"""The articles linked from a list page (「日本の妖怪一覧」 for YokaiEval) with their footnotes.

:func:`build_list_corpus` reads the list page from a multistream dump, collects the article
links in its tables and lists (not files, categories, other namespaces or other languages),
keeps section anchors (``[[Kappa#In Tōno]]`` extracts that section), follows redirects,
drops duplicates, and writes one ``articles`` row per article. It works for any list page of
any wiki: a list of folklore creatures in another language is the same job.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import pyarrow as pa

from ..dumps.pages import Multistream
from ..errors import WikioriginError
from ..files import ParquetSink, check_output, provenance
from ..schemas import ARTICLES
from .articles import article_row

__all__ = ["YOKAI_LIST_PAGE", "ListCorpusReport", "list_links", "build_list_corpus"]

YOKAI_LIST_PAGE = "日本の妖怪一覧"
"""The jawiki list page the YokaiEval corpus starts from (``日本の妖怪一覧``)."""
_INTERWIKI = {"w", "wikt", "wiktionary", "commons", "c", "m", "meta", "s", "q", "b", "n", "v",
              "d", "species", "wikipedia", "mw", "voy"}
_OTHER_NS = {"file", "image", "category", "template", "help", "portal", "user", "talk", "special"}


@dataclass(slots=True)
class ListCorpusReport:
    """What :func:`build_list_corpus` found: links on the list page, articles found,
    redirects followed, titles missing, articles without references, duplicates, linked sections
    missing, articles converted by the fallback, articles written and the time taken."""

    linked: int = 0
    found: int = 0
    redirected: int = 0
    missing: list[str] = field(default_factory=list)
    without_references: int = 0
    duplicates: int = 0
    sections_missing: list[str] = field(default_factory=list)
    fallback: int = 0
    articles: int = 0
    seconds: float = 0.0


def list_links(wikitext: str, dump: Multistream) -> list[tuple[str, str | None]]:
    """(title, anchor) of the article links of a list page, in order, without repeats."""
    import mwparserfromhell

    from ..languages import registry

    article_ns = {name.casefold() for key, name in dump.site.namespaces.items() if key != 0 and name}
    interwiki = {w.subdomain for w in registry().wikis} | _INTERWIKI
    seen, links = set(), []
    for link in mwparserfromhell.parse(wikitext).filter_wikilinks():
        target = str(link.title).strip()
        if not target or target.startswith("#"):
            continue
        title, _, anchor = target.partition("#")
        prefix = title.split(":", 1)[0].strip().casefold() if ":" in title else ""
        if prefix and (prefix in article_ns or prefix in interwiki or prefix in _OTHER_NS):
            continue  # another namespace, or an interlanguage/interwiki link
        key = (dump.normalize(title), anchor.strip() or None)
        if key not in seen:
            seen.add(key)
            links.append(key)
    return links


def build_list_corpus(dump: Multistream, out, list_page: str = YOKAI_LIST_PAGE,
                      domain: str | None = None) -> ListCorpusReport:
    """Write the ``articles`` of the pages linked from ``list_page`` to ``out``."""
    check_output(out, inputs=[dump.dump, dump.index])  # before any work
    started = time.perf_counter()
    listing = dump.get([list_page]).get(list_page)
    if listing is None:
        raise WikioriginError(f"{dump.dump}: no page {list_page!r} (the list page) in this dump")
    links = list_links(listing.text, dump)
    report = ListCorpusReport(linked=len(links))
    titles = list(dict.fromkeys(t for t, _ in links))
    indexed = {t: dump.entry(t) is not None for t in titles}  # each title looked up once
    report.missing = [t for t in titles if not indexed[t]]
    wanted = [t for t in titles if indexed[t]]
    pages = dump.get(wanted)
    report.found = len(pages)
    report.redirected = sum(1 for t, p in pages.items() if p.title != t)
    domain = domain or f"{dump.site.dbname.removesuffix('wiki').replace('_', '-')}.wikipedia.org"
    meta = provenance(stage="corpus", corpus="list", list_page=list_page, dump=dump.dump.name,
                      list_revision_id=listing.revision_id, wiki=dump.site.dbname)
    done = set()
    with ParquetSink(out, ARTICLES, meta) as sink:
        rows = []
        for title, anchor in links:
            page = pages.get(title)
            if page is None:
                continue
            if (page.page_id, anchor) in done:
                report.duplicates += 1
                continue
            done.add((page.page_id, anchor))
            row, article = article_row(page, dump.site.dbname, domain, dump.site.namespaces, anchor)
            report.fallback += article.fallback
            if row is None:
                report.sections_missing.append(f"{title}#{anchor}")
                continue
            report.without_references += not row["references"]
            rows.append(row)
        sink.write(pa.Table.from_pylist(rows, schema=ARTICLES))
        report.articles = len(rows)
    report.seconds = time.perf_counter() - started
    return report
