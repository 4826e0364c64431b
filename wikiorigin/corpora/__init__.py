"""Article corpora: the articles of the items of one origin (`OriginCorpusRun`, or
`build_origin_corpus` in one call) or of the pages a list page links to (`ListCorpusRun`, or
`build_list_corpus`), converted from wikitext to sections and references and written to Parquet
(``wikiorigin.schemas.ORIGIN_ARTICLES``). Each run takes its config and returns a `CorpusResult`
(the file, the report's counts, a signature of the settings and inputs, ``save``).
Names are imported on first use.
"""

from .._lazy import attach as _attach

_EXPORTS = {
    "OriginCorpusConfig": ".origin",
    "OriginCorpusRun": ".origin",
    "ListCorpusConfig": ".list_run",
    "ListCorpusRun": ".list_run",
    "CorpusResult": ".result",
    "build_origin_corpus": ".origin",
    "OriginCorpusReport": ".origin",
    "build_list_corpus": ".yokai",
    "ListCorpusReport": ".yokai",
}
__all__ = list(_EXPORTS)
__getattr__, __dir__ = _attach(__name__, _EXPORTS)
