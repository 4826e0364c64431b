"""Article corpora: the articles of the items of one origin (`build_origin_corpus`) or of the
pages a list page links to (`build_list_corpus`), converted from wikitext to sections and
references and written to Parquet (``wikiorigin.schemas.ORIGIN_ARTICLES``).
Names are imported on first use.
"""

from .._lazy import attach as _attach

_EXPORTS = {
    "build_origin_corpus": ".origin",
    "OriginCorpusReport": ".origin",
    "build_list_corpus": ".yokai",
    "ListCorpusReport": ".yokai",
    "YOKAI_LIST_PAGE": ".yokai",
}
__all__ = list(_EXPORTS)
__getattr__, __dir__ = _attach(__name__, _EXPORTS)
