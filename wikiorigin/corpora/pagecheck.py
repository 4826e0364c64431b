"""The dump checked against the items before a page id is trusted (see
:mod:`~wikiorigin.corpora.origin` for the rules): the dump's wiki (:func:`dump_wiki`), the items
of that wiki, and each page's title (:func:`check_pages`: kept, kept as an evident rename, or left
out and listed); a dump in which most titles differ is refused.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Generator
from contextlib import closing
from dataclasses import dataclass
from typing import cast

import pyarrow as pa
import pyarrow.compute as pc

from .._inputs import first_repeat
from ..dumps.pages import Multistream, PageText
from ..errors import WikioriginError
from ..files import read_input
from .result import OriginCorpusReport

__all__ = ["dump_wiki", "check_pages"]

_COLUMNS = ["qid", "origin_wiki", "n_wikis", "editions"]
_FILE_WIKI = re.compile(r"([a-z0-9_]+?)-(?:\d{8}|latest)-")


def dump_wiki(dump: Multistream) -> str:
    """The dump's wiki: the dbname of its ``<siteinfo>``, else the one its file name starts
    with (``jawiki-20250601-pages-articles-multistream.xml.bz2``)."""
    if dump.site.dbname:
        return dump.site.dbname
    m = _FILE_WIKI.match(dump.dump.name)
    if m is None:
        raise WikioriginError(
            f"{dump.dump}: no <dbname> in its <siteinfo> and no wiki in its file name "
            "(WIKI-YYYYMMDD-...): cannot tell which wiki's dump it is"
        )
    return m.group(1)


def _read_items(items, wiki: str, dump: Multistream) -> tuple[pa.Table, list[dict]]:
    """All items and those of ``wiki``; items of none of them is an error naming their wikis."""
    table = read_input(items, _COLUMNS, "wikiorigin subset", columns=list(_COLUMNS))
    _check_items(table, items)
    rows = table.filter(pc.field("origin_wiki") == wiki).to_pylist()
    pages: dict = {}
    for item in rows:
        page = _edition(item, wiki)["page_id"]
        if pages.setdefault(page, item["qid"]) != item["qid"]:
            raise WikioriginError(
                f"{items}: items {pages[page]} and {item['qid']} both name page {page} of {wiki}; "
                "a page is one item's (is the items file from `wikiorigin subset`?)"
            )
    if table.num_rows and not rows:
        counts = (
            table.group_by("origin_wiki")
            .aggregate([("qid", "count")])
            .sort_by([("qid_count", "descending")])
            .to_pylist()
        )
        theirs = ", ".join(f"{c['origin_wiki']} ({c['qid_count']})" for c in counts[:5])
        raise WikioriginError(
            f"{items}: none of its {table.num_rows} items originates in {wiki}, the wiki of "
            f"{dump.dump}; they originate in {theirs}: give the multistream dump of their wiki"
        )
    return table, rows


def _check_items(table: pa.Table, items) -> None:
    """Items an origins file could hold: some, each a Wikidata item id, each once (a repeated
    item would be an article twice)."""
    if not table.num_rows:
        raise WikioriginError(f"{items}: no items")
    qids = table.column("qid")
    bad = pc.invert(pc.match_substring_regex(qids, r"^Q[1-9][0-9]*$"))
    if pc.any(bad).as_py():
        n = pc.index(bad, True).as_py()
        raise WikioriginError(f"{items}: row {n}: qid {qids[n].as_py()!r} is not a Wikidata item id (Q1, Q42, ...)")
    if pc.count_distinct(qids).as_py() < len(qids) and (repeat := first_repeat(qids.to_pylist())):
        n, first = repeat
        raise WikioriginError(f"{items}: row {n}: item {qids[n].as_py()} again (first: row {first}); each item once")


def _edition(item: dict, wiki: str) -> dict:
    for edition in item["editions"] or []:
        if edition["wiki"] == wiki:
            return edition
    raise WikioriginError(
        f"item {item['qid']}: originates in {wiki} but has no {wiki} edition "
        "(is the items file from `wikiorigin subset`?)"
    )


@dataclass(slots=True)
class _Found:
    """What the checks need of a page (its title, its redirect), and the page as ``keep`` keeps it."""

    title: str
    redirect: str | None
    kept: object


def check_pages(
    rows: list[dict],
    wiki: str,
    dump: Multistream,
    items,
    report: OriginCorpusReport,
    keep: Callable[[PageText], object] = lambda page: page,
) -> list[tuple[dict, object]]:
    """``(item, page)`` for the items whose page the dump has under the recorded title, or
    under a new title it was evidently moved to (see the module's rules); the others go to
    ``report.missing_pages`` / ``report.mismatched``. Raises if most titles differ. The pages
    are read stream by stream in the dump's order and each passed to ``keep`` as it comes
    (what it returns stands for the page: :class:`~.pagespill.PageSpill` puts it on disk)."""
    editions = [_edition(r, wiki) for r in rows]
    each = cast(Generator, dump.each([e["page_id"] for e in editions]))  # a generator: closed, its threads end
    with closing(each) as found_pages:
        pages = {
            page_id: _Found(page.title, page.redirect, None if page.redirect is not None else keep(page))
            for page_id, page in found_pages
        }
    same = dump.normalize
    moved = [
        e["title"] for e in editions if e["page_id"] in pages and same(pages[e["page_id"]].title) != same(e["title"])
    ]
    old_titles = dump.get(moved, follow_redirects=False) if moved else {}
    kept, found = [], 0
    for item, edition in zip(rows, editions):
        page_id, title = edition["page_id"], edition["title"]
        page = pages.get(page_id)
        where = f"{item['qid']}: page {page_id}"
        if page is None:
            report.missing_pages.append(f"{item['qid']} (page {page_id})")
            continue
        found += 1
        old = old_titles.get(title)
        if page.redirect is not None:
            said = "" if same(page.title) == same(title) else f" (the items say {title!r})"
            report.mismatched.append(f"{where} {page.title!r} is a redirect to {page.redirect!r} in the dump{said}")
        elif same(page.title) == same(title):
            kept.append((item, page.kept))
        elif old is not None and old.redirect is not None and same(old.redirect) == same(page.title):
            report.renamed.append(f"{where}: {title!r} is now {page.title!r} (the old title redirects to it)")
            kept.append((item, page.kept))
        else:
            report.mismatched.append(f"{where} is {page.title!r} in the dump, the items say {title!r}")
    if rows and not found:
        raise WikioriginError(
            f"{dump.dump}: none of the {len(rows)} pages of {items} is in it: the dump is not the "
            f"one the items were made from (another {wiki} dump, or one part of a split dump?)"
        )
    if report.mismatched and 2 * len(report.mismatched) > found:
        raise WikioriginError(
            f"{dump.dump}: {len(report.mismatched)} of the {found} pages of {items} found in it have "
            f"another title (first: {report.mismatched[0]}): the dump is not the one the items were "
            f"made from (another {wiki} dump?); give the {wiki} multistream dump of the items' date"
        )
    return kept
