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
import time
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from ..dumps.pages import Multistream
from ..dumps.wikidata import Entity, EntityStats, query_entities
from ..errors import ParameterError
from ..files import ParquetSink, check_output, provenance
from ..languages import lookup
from ..progress import Progress
from ..render.sources import text_source
from ..schemas import ORIGIN_ARTICLES
from .articles import ARTICLE_GROUP_ROWS, ArticleTask, convert_articles
from .entities import EntityTable, one_pass
from .pagecheck import _read_items, check_pages, dump_wiki
from .pagespill import PageSpill
from .regions import RegionReading, resolve_regions
from .result import CorpusResult, OriginCorpusReport, corpus_result

__all__ = [
    "OriginCorpusConfig",
    "OriginCorpusRun",
    "OriginCorpusReport",
    "CorpusResult",
    "build_origin_corpus",
    "names_of",
    "dump_wiki",
    "check_pages",
]


def names_of(entity: Entity, languages: list[str]) -> list[str]:
    """The item's labels and aliases in ``languages``, each once, labels first."""
    names = [entity.labels[lang] for lang in languages if lang in entity.labels]
    for lang in languages:
        names += entity.aliases.get(lang, [])
    return list(dict.fromkeys(n for n in names if n))


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


@dataclass(frozen=True)
class OriginCorpusConfig:
    """The settings of an origin corpus run (:class:`OriginCorpusRun`). ``text``: where the
    articles' text comes from (:func:`~wikiorigin.render.sources.text_source`: ``"wikitext"``,
    ``"mediawiki"``, ``"html-dump"``; None: the most faithful this machine has); ``jobs``: the
    processes converting articles (or a Dask cluster: ``scheduler``); the file is the same for
    any ``jobs``."""

    text: str | None = None
    jobs: int = 1
    scheduler: str | None = None


class OriginCorpusRun:
    """The articles of the items that originate in one edition (see the module's docstring):
    ``OriginCorpusRun(config).run(items, dump, out, entities_file=...)`` returns a
    :class:`~wikiorigin.corpora.result.CorpusResult`."""

    def __init__(self, config: OriginCorpusConfig | None = None):
        self.config = config or OriginCorpusConfig()

    def run(
        self, items, dump: Multistream, out, *, wikidata=None, entities_file=None, sparql=None, html_dump=None
    ) -> CorpusResult:
        """Write the articles of ``items`` that originate in the dump's wiki to ``out``, Wikidata
        from one of an entities file (``entities_file``), the JSON dump (``wikidata``) or a
        SPARQL endpoint (``sparql``); ``html_dump``: the Enterprise HTML dump of ``text="html-dump"``.

        The dump's wiki and each page's title are checked against the items first (see the
        module's docstring): a dump of another wiki, or a dump in which most pages carry other
        titles, is an error before anything is read from Wikidata or the output is written.
        The pages wait for their conversion on disk, in a folder beside ``out`` removed at the
        end: about a third of the size of their wikitext (zlib) must be free there. The whole
        run is guarded (:func:`~wikiorigin.runs.guarded_run`: ``out`` none of the inputs, what
        a killed run left swept, ``OUT.lock`` held)."""
        from ..runs import guarded_run

        if sum(source is not None for source in (wikidata, sparql, entities_file)) != 1:
            raise ParameterError(
                "entities_file",
                "give one of an entities file ({entities_file}), the Wikidata JSON "
                "dump ({wikidata}) or a SPARQL endpoint ({sparql})",
                also=("wikidata", "sparql"),
            )
        inputs = {"items": items, "dump": dump.dump, "index": dump.index, "wikidata": wikidata}
        inputs.update(entities_file=entities_file, html_dump=html_dump)
        check_output(out, inputs=[items, dump.dump, dump.index, wikidata, entities_file])  # before any work
        if entities_file is not None:
            EntityTable(entities_file).close()  # a file of the right kind, before any work
        sources = {"wikidata": wikidata, "sparql": sparql, "entities_file": entities_file}
        with guarded_run(out, inputs={k: v for k, v in inputs.items() if v is not None}):
            report = self._write(items, dump, out, sources, html_dump)
        settings = {"corpus": "origin", "wiki": report.wiki, "text": report.text, "sparql": sparql}
        return corpus_result(out, report, settings, inputs)

    def _write(self, items, dump: Multistream, out, sources: dict, html_dump) -> OriginCorpusReport:
        started = time.perf_counter()
        wiki = dump_wiki(dump)
        table, rows = _read_items(items, wiki, dump)
        report = OriginCorpusReport(wiki=wiki, items=table.num_rows, other_wiki=table.num_rows - len(rows))
        with PageSpill(out) as spill:  # the pages' texts on disk between their check and their conversion
            kept = check_pages(rows, wiki, dump, items, report, keep=spill.put)
            languages = list(dict.fromkeys(["en", lookup(wiki).language]))
            qids = [item["qid"] for item, _ in kept]
            entities, regions = _wikidata(qids, wiki, items, out, languages, report, **sources)
            processes = max(1, (os.cpu_count() or 1) // self.config.jobs)
            source, note = text_source(self.config.text, dump, out, html_dump=html_dump, processes=processes)
            report.text = source.describe()  # type: ignore[attr-defined]  # every text source describes itself
            report.notes += [note] if note else []
            tasks = _tasks(kept, entities, regions, languages, wiki, spill, report)
            self._convert(tasks, dump, out, source, _meta(report, items, dump, sources), report)
        report.seconds = time.perf_counter() - started
        return report

    def _convert(self, tasks, dump: Multistream, out, source, meta: dict, report: OriginCorpusReport) -> None:
        """The articles converted (in order, on the config's jobs) and written as they come."""
        wiki = report.wiki
        converted = convert_articles(
            tasks,
            wiki,
            lookup(wiki).domain,
            dump.site.namespaces,
            ORIGIN_ARTICLES,
            jobs=self.config.jobs,
            scheduler=self.config.scheduler,
            source=source,
        )
        with (
            ParquetSink(out, ORIGIN_ARTICLES, meta, row_group_rows=ARTICLE_GROUP_ROWS) as sink,
            closing(converted),
            Progress("corpus", unit="article") as progress,
        ):
            for batch, outcomes in converted:
                sink.write(batch)
                progress.update(len(outcomes))
                report.articles += len(outcomes)
                for outcome in outcomes:
                    for kind, n in (outcome.left_out or {}).items():
                        report.furniture[kind] = report.furniture.get(kind, 0) + n


def _tasks(kept: list, entities: dict, regions: dict, languages: list[str], wiki: str, spill, report):
    """The articles' tasks in the items' order, each item let go of once given out, its page
    read back from the spill then."""
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


def _meta(report: OriginCorpusReport, items, dump: Multistream, sources: dict) -> dict:
    """The articles file's provenance: its inputs by name (no local path of this machine)."""
    wikidata, entities_file = sources["wikidata"], sources["entities_file"]
    return provenance(
        stage="corpus",
        corpus="origin",
        text=report.text,
        wiki=report.wiki,
        items=Path(items).name,
        wikidata=Path(wikidata).name if wikidata else None,
        sparql=sources["sparql"],
        dump=dump.dump.name,
        entities=Path(entities_file).name if entities_file else None,
        renamed=len(report.renamed),
        mismatched=len(report.mismatched),
        several_regions=len(report.several_regions),
        region_rule="current best-rank P131 (no end time) up to the item's P17 country's "
        "first-level division; several divisions: none",
    )


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
    """Write the articles of ``items`` that originate in the dump's wiki to ``out``: the
    settings as :class:`OriginCorpusConfig` takes them, run by :meth:`OriginCorpusRun.run` (see
    there), which returns the :class:`~wikiorigin.corpora.result.CorpusResult` whose report this is."""
    config = OriginCorpusConfig(text=text, jobs=jobs, scheduler=scheduler)
    return (
        OriginCorpusRun(config)
        .run(items, dump, out, wikidata=wikidata, entities_file=entities_file, sparql=sparql, html_dump=html_dump)
        .report
    )
