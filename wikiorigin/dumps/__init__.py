"""Readers of Wikimedia dumps: stub and full-history XML, pages-articles (plain and
multistream), ``page_props`` SQL, MediaWiki history TSV, Wikidata JSON; the dump tree layout and
the download of dumps from a mirror.

Readers are lazy iterators over named records (`PageCreation`, `PageText`, `Entity`); the
scan of a wiki into a Parquet file of page creations is `scan_to_parquet`. Nothing here knows
of origins, corpora or models. Names are imported on first use.
"""

from .._lazy import attach as _attach

_EXPORTS = {
    "scan_to_parquet": ".scan",
    "ENGINES": ".scan",
    "find_inputs": ".layout",
    "wikis_in_tree": ".layout",
    "dump_dates": ".layout",
    "WikiInputs": ".layout",
    "open_dump": ".compression",
    "DumpStream": ".compression",
    "StubScanner": ".scanner",
    "PageCreation": ".creation",
    "ScanStats": ".creation",
    "scan_pages": ".stubs",
    "iter_pages": ".pages",
    "parse_pages": ".pagexml",
    "PageText": ".pagexml",
    "Multistream": ".multistream",
    "SqlDump": ".sql",
    "qids_table": ".sql",
    "history_batches": ".history",
    "read_entities": ".wikidata",
    "query_entities": ".wikidata",
    "Entity": ".wikidata",
    "read_header": ".xmlhead",
    "SiteInfo": ".xmlhead",
    "Client": ".fetch",
    "plan": ".fetch",
    "download": ".fetch",
}
__all__ = list(_EXPORTS)
__getattr__, __dir__ = _attach(__name__, _EXPORTS)
