"""Generators of synthetic dumps and dump trees with known answers, for tests, benchmarks and
scripts.

Each writes files with the real structure of a Wikimedia dump and returns (or yields) what a
correct reader must find in them. The package reads nothing and nothing in the library
imports it; it imports the records and field lists of :mod:`wikiorigin.dumps`.

- :mod:`.xml`: the one writer of MediaWiki XML export pages and revisions;
- :mod:`.stubs`: random stub / full-history exports and the page creations they encode;
- :mod:`.history`: MediaWiki history TSV dumps;
- :mod:`.sql`: ``page_props`` SQL dumps;
- :mod:`.pages`: pages-articles pages and exports; :mod:`.multistream`: multistream dumps;
- :mod:`.wikidata`: Wikidata JSON dumps; :mod:`.items`: items files (the ``origins`` schema); :mod:`.sets`: multiple-choice sets;
- :mod:`.trees`: multi-wiki trees in the Wikimedia layout and the origins they encode;
- :mod:`.files`: gzip text files whose bytes do not depend on the time.
"""

from .files import gzip_text
from .history import write_history_tsv
from .items import write_items
from .multistream import write_multistream, write_multistream_pages
from .pages import page_xml, write_articles_xml
from .sets import mcq_row, write_mcq
from .sql import page_props_rows, write_page_props_sql
from .stubs import write_history_xml
from .trees import expected_origins, write_dumpstatus, write_origin_tree
from .wikidata import entity_json, write_wikidata_json

__all__ = [
    "write_history_xml",
    "write_history_tsv",
    "write_page_props_sql",
    "page_props_rows",
    "write_origin_tree",
    "expected_origins",
    "write_dumpstatus",
    "page_xml",
    "write_articles_xml",
    "write_multistream",
    "write_multistream_pages",
    "write_wikidata_json",
    "entity_json",
    "write_items",
    "mcq_row",
    "write_mcq",
    "gzip_text",
]
