"""The articles of the items that originate in one edition (WikiOriginQA), with what Wikidata
says of each item: its English label, its English Wikipedia title, its names and aliases in
English and in the edition's language (the answers of the free-form questions), and its
region: the first-level administrative division it lies in (:mod:`~wikiorigin.corpora.regions`:
its current best-rank P131 values followed up to the country), labelled in the edition's
language (the multiple-choice builder's ``origin`` labels take it from here). An item whose
P131 values end in different divisions has none, and is listed in the report
(``several_regions``), never given one of them.

Items come from ``wikiorigin subset`` (the ``origins`` schema); their pages are fetched by id
from the edition's multistream dump, stream by stream in the dump's order (each stream
decompressed once), and put aside on disk (:class:`~.pagespill.PageSpill`) until they are
converted in the items' order, so that memory stays flat whatever the number of pages.
Wikidata comes offline from an entities file that one pass of the JSON dump made for the
items of any number of wikis (``wikiorigin wikidata extract``, :mod:`.entities`), from the
JSON dump itself (the same one pass, for these items alone), or online from a SPARQL
endpoint. The region walks read the entities file (or the pass's
temporary one), never the dump again.

A page id means something only in the dump it came from, so the dump is checked against the
items before it is trusted:

- **the wiki**: the dump's dbname (its ``<siteinfo>``, else its file name) must be the wiki of
  some of the items; otherwise nothing is done (:class:`~wikiorigin.errors.WikioriginError`).
- **each title**: the page the dump has under the item's page id must carry the title the
  items record (their edition of the dump's wiki), as MediaWiki normalizes titles. A page whose
  title differs is kept only as an evident **rename**: same page id, not a redirect, and the
  dump's page under the recorded title is a redirect to the page's new title (what a page
  move leaves behind). Any other difference (a move without a redirect left, or a page that is
  now itself a redirect) is left out and listed; no other page is ever put in its place.
- **the whole**: if none of the items' pages is in the dump, or more than half of those found
  carry another title (renames not counted), the dump is not the one the items were made
  from, and the run stops with an error before Wikidata is read or the output is written
  (the pages read for the check, put aside beside the output, are removed).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from ..dumps.pages import Multistream, PageText
from ..dumps.wikidata import Entity, EntityStats, query_entities
from ..errors import ParameterError, WikioriginError
from ..files import ParquetSink, check_output, provenance, read_input
from ..languages import lookup
from ..progress import Progress
from ..render.sources import text_source
from ..schemas import ORIGIN_ARTICLES
from .articles import ARTICLE_GROUP_ROWS, ArticleTask, convert_articles
from .entities import EntityTable, one_pass
from .pagespill import PageSpill
from .regions import RegionReading, resolve_regions

__all__ = ["OriginCorpusReport", "build_origin_corpus", "names_of", "dump_wiki", "check_pages"]

_COLUMNS = ["qid", "origin_wiki", "n_wikis", "editions"]
_FILE_WIKI = re.compile(r"([a-z0-9_]+?)-(?:\d{8}|latest)-")


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


def names_of(entity: Entity, languages: list[str]) -> list[str]:
    """The item's labels and aliases in ``languages``, each once, labels first."""
    names = [entity.labels[lang] for lang in languages if lang in entity.labels]
    for lang in languages:
        names += entity.aliases.get(lang, [])
    return list(dict.fromkeys(n for n in names if n))


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
    rows = table.filter(pc.field("origin_wiki") == wiki).to_pylist()
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
    with closing(dump.each([e["page_id"] for e in editions])) as found_pages:  # its threads end, whatever fails
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


def _regions(entities: dict, qids: list[str], parents, languages: list[str], report: OriginCorpusReport) -> dict:
    """The items' regions, their P131 ancestors fetched level by level with ``parents`` (from
    the entities table, or a SPARQL query per level)."""

    def fetch(wanted: set[str]) -> dict:
        report.region_fetches += 1
        return parents(wanted)

    found = {q: entities[q] for q in qids if q in entities}
    readings: dict[str, RegionReading] = {}
    regions = resolve_regions(found, fetch, [languages[-1], "en"], readings)
    report.with_region = sum(r is not None for r in regions.values())
    report.several_regions = [f"{q}: {', '.join(r.divisions)}" for q, r in readings.items() if r.outcome == "several"]
    if report.several_regions:
        report.notes.append(
            f"{len(report.several_regions)} items lie in several regions (P131 values in "
            f"different first-level divisions), so have none: "
            f"{'; '.join(report.several_regions[:5])}"
        )
    return regions


def _from_table(
    path, qids: list[str], wiki: str, items, languages: list[str], report: OriginCorpusReport
) -> tuple[dict, dict]:
    """The items' entities and regions from an entities file (checked against the items)."""
    with EntityTable(path) as table:
        entities = table.items(qids, wiki, items)
        return entities, _regions(entities, qids, table.fetch, languages, report)


def _wikidata(
    qids: list[str],
    wiki: str,
    items,
    out,
    languages: list[str],
    report: OriginCorpusReport,
    *,
    wikidata,
    sparql,
    entities_file,
) -> tuple[dict, dict]:
    """The items' entities and their regions: from the entities file; from one pass of the
    JSON dump into a temporary one beside ``out`` (removed after, or by the next run if this
    one is killed); or from SPARQL, a query per level."""
    if sparql is not None:
        entities = query_entities(sparql, qids, languages)
        return entities, _regions(
            entities, qids, lambda wanted: query_entities(sparql, sorted(wanted), languages), languages, report
        )
    if entities_file is not None:
        return _from_table(entities_file, qids, wiki, items, languages, report)
    stats = EntityStats()
    with one_pass(wikidata, qids, wiki, out, stats) as path:
        report.bad_wikidata_lines, report.notes = stats.bad_lines, stats.notes
        return _from_table(path, qids, wiki, items, languages, report)


def build_origin_corpus(
    items,
    dump: Multistream,
    out,
    *,
    wikidata=None,
    entities_file=None,
    sparql: str | None = None,
    jobs: int = 1,
    scheduler=None,
    text: str | None = None,
    html_dump=None,
) -> OriginCorpusReport:
    """Write the articles of ``items`` that originate in the dump's wiki to ``out``.

    The dump's wiki and each page's title are checked against the items first (see the
    module's docstring): a dump of another wiki, or a dump in which most pages carry other
    titles, is an error before anything is read from Wikidata or the output is written.

    The pages wait for their conversion on disk, in a folder beside ``out`` removed at the
    end: about a third of the size of their wikitext (zlib) must be free there.

    The articles are converted on ``jobs`` processes (or a Dask cluster: ``scheduler``) and
    written as they come, in the items' order: the same file for any ``jobs``
    (:func:`~wikiorigin.corpora.articles.convert_articles`). ``text`` names where their text
    comes from (:func:`~wikiorigin.render.sources.text_source`: ``"wikitext"``,
    ``"mediawiki"``, ``"html-dump"`` with ``html_dump``; None: the most faithful this machine
    has; its note, if any, in the report's ``notes``)."""
    if sum(source is not None for source in (wikidata, sparql, entities_file)) != 1:
        raise ParameterError(
            "entities_file",
            "give one of an entities file ({entities_file}), the Wikidata JSON "
            "dump ({wikidata}) or a SPARQL endpoint ({sparql})",
            also=("wikidata", "sparql"),
        )
    check_output(out, inputs=[items, dump.dump, dump.index, wikidata, entities_file])  # before any work
    if entities_file is not None:
        EntityTable(entities_file).close()  # a file of the right kind, before any work
    started = time.perf_counter()
    wiki = dump_wiki(dump)
    table, rows = _read_items(items, wiki, dump)
    report = OriginCorpusReport(wiki=wiki, items=table.num_rows, other_wiki=table.num_rows - len(rows))
    with PageSpill(out) as spill:  # the pages' texts on disk between their check and their conversion
        kept = check_pages(rows, wiki, dump, items, report, keep=spill.put)
        languages = list(dict.fromkeys(["en", lookup(wiki).language]))
        qids = [item["qid"] for item, _ in kept]
        entities, regions = _wikidata(
            qids, wiki, items, out, languages, report, wikidata=wikidata, sparql=sparql, entities_file=entities_file
        )
        domain = lookup(wiki).domain
        source, note = text_source(
            text, dump, out, html_dump=html_dump, processes=max(1, (os.cpu_count() or 1) // jobs)
        )
        report.text = source.describe()
        report.notes += [note] if note else []

        def tasks():  # each item let go of once given out, its page read back from the spill then
            for i in range(len(kept)):
                (item, ref), kept[i] = kept[i], None
                entity, region = entities.get(item["qid"]), regions.get(item["qid"])
                if entity is None or not (entity.labels or entity.sitelinks):
                    report.missing_entities.append(item["qid"])
                    entity = Entity(item["qid"])
                yield ArticleTask(
                    spill.take(ref),
                    qid=item["qid"],
                    key=item["qid"],
                    more=dict(
                        label_en=entity.labels.get("en"),
                        aliases=names_of(entity, languages),
                        enwiki_title=entity.sitelinks.get("enwiki"),
                        origin_wiki=wiki,
                        n_wikis=item["n_wikis"],
                        region=None if region is None else region.label,
                        region_qid=None if region is None else region.qid,
                    ),
                )

        meta = provenance(
            stage="corpus",
            corpus="origin",
            text=report.text,
            wiki=wiki,
            items=Path(items).name,  # files by name: no local path of this machine
            wikidata=Path(wikidata).name if wikidata else None,
            sparql=sparql,
            dump=dump.dump.name,
            entities=Path(entities_file).name if entities_file else None,
            renamed=len(report.renamed),
            mismatched=len(report.mismatched),
            several_regions=len(report.several_regions),
            region_rule="current best-rank P131 (no end time) up to the item's P17 country's "
            "first-level division; several divisions: none",
        )
        with (
            ParquetSink(out, ORIGIN_ARTICLES, meta, row_group_rows=ARTICLE_GROUP_ROWS) as sink,
            closing(
                convert_articles(
                    tasks(),
                    wiki,
                    domain,
                    dump.site.namespaces,
                    ORIGIN_ARTICLES,
                    jobs=jobs,
                    scheduler=scheduler,
                    source=source,
                )
            ) as converted,
            Progress("corpus", unit="article") as progress,
        ):
            for batch, outcomes in converted:
                sink.write(batch)
                progress.update(len(outcomes))
                report.articles += len(outcomes)
                for outcome in outcomes:
                    for kind, n in (outcome.left_out or {}).items():
                        report.furniture[kind] = report.furniture.get(kind, 0) + n
    report.seconds = time.perf_counter() - started
    return report
