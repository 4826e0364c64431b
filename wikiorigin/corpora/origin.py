"""The articles of the items that originate in one edition (WikiOriginQA), with what Wikidata
says of each item: its English label, its English Wikipedia title, and its names and aliases
in English and in the edition's language (the answers of the free-form questions).

Items come from ``wikiorigin subset`` (the ``origins`` schema); their pages are fetched by id
from the edition's multistream dump; Wikidata comes offline from the JSON dump or online from a
SPARQL endpoint.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.parquet as pq

from ..dumps.pages import Multistream
from ..dumps.wikidata import Entity, EntityStats, query_entities, read_entities
from ..errors import WikioriginError
from ..files import ParquetSink, provenance
from ..languages import lookup
from ..schemas import ORIGIN_ARTICLES
from .articles import article_row

__all__ = ["OriginCorpusReport", "build_origin_corpus", "names_of"]


@dataclass(slots=True)
class OriginCorpusReport:
    items: int = 0
    other_wiki: int = 0
    missing_pages: list[str] = field(default_factory=list)
    missing_entities: list[str] = field(default_factory=list)
    articles: int = 0
    bad_wikidata_lines: int = 0
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0


def names_of(entity: Entity, languages: list[str]) -> list[str]:
    """The item's labels and aliases in ``languages``, each once, labels first."""
    names = [entity.labels[lang] for lang in languages if lang in entity.labels]
    for lang in languages:
        names += entity.aliases.get(lang, [])
    return list(dict.fromkeys(n for n in names if n))


def build_origin_corpus(items, dump: Multistream, out, *, wikidata=None, sparql: str | None = None) -> OriginCorpusReport:
    """Write the articles of ``items`` that originate in the dump's wiki to ``out``."""
    if (wikidata is None) == (sparql is None):
        raise WikioriginError("give the Wikidata JSON dump (--wikidata) or a SPARQL endpoint (--sparql)")
    started = time.perf_counter()
    wiki = dump.site.dbname
    table = pq.read_table(items, columns=["qid", "origin_wiki", "n_wikis", "editions"])
    report = OriginCorpusReport(items=table.num_rows)
    rows = [r for r in table.to_pylist() if r["origin_wiki"] == wiki]
    report.other_wiki = table.num_rows - len(rows)
    languages = list(dict.fromkeys(["en", lookup(wiki).language]))
    qids = [r["qid"] for r in rows]
    if wikidata is not None:
        stats = EntityStats()
        entities = {e.qid: e for e in read_entities(wikidata, qids, stats)}
        report.bad_wikidata_lines, report.notes = stats.bad_lines, stats.notes
    else:
        entities = query_entities(sparql, qids, languages)
    pages = dump.get([r["editions"][0]["page_id"] for r in rows])
    domain = lookup(wiki).domain
    out_rows = []
    for item in rows:
        page_id = item["editions"][0]["page_id"]
        page = pages.get(page_id)
        if page is None:
            report.missing_pages.append(f"{item['qid']} (page {page_id})")
            continue
        entity = entities.get(item["qid"])
        if entity is None or not (entity.labels or entity.sitelinks):
            report.missing_entities.append(item["qid"])
            entity = Entity(item["qid"])
        row, _ = article_row(page, wiki, domain, dump.site.namespaces, qid=item["qid"])
        row.update(
            label_en=entity.labels.get("en"),
            aliases=names_of(entity, languages),
            enwiki_title=entity.sitelinks.get("enwiki"),
            origin_wiki=wiki,
            n_wikis=item["n_wikis"],
        )
        out_rows.append(row)
    meta = provenance(stage="corpus", corpus="origin", wiki=wiki, items=str(items),
                      wikidata=str(wikidata) if wikidata else None, sparql=sparql, dump=dump.dump.name)
    with ParquetSink(out, ORIGIN_ARTICLES, meta) as sink:
        sink.write(pa.Table.from_pylist(out_rows, schema=ORIGIN_ARTICLES))
    report.articles = len(out_rows)
    report.seconds = time.perf_counter() - started
    return report
