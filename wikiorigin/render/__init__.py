"""Article text as readers see it: pages rendered by MediaWiki with the wiki's own templates
and modules (:mod:`.mediawiki`, a store per dump: :mod:`.store`), Wikimedia's Enterprise HTML
dumps (:mod:`.htmldump`), one HTML-to-text path (:mod:`.html`), the text sources a corpus
chooses from (:mod:`.sources`) and the measure of how much of the rendered prose a text keeps
(:mod:`.recall`). Names are imported on first use.
"""

from .._lazy import attach as _attach

_EXPORTS = {
    "text_source": ".sources",
    "TEXT_SOURCES": ".sources",
    "html_article": ".html",
    "find_mediawiki": ".mediawiki",
    "prepare_store": ".store",
    "iter_html_dump": ".htmldump",
    "write_html_dump": ".htmldump",
    "token_recall": ".recall",
    "rendered_prose": ".recall",
}
__all__ = list(_EXPORTS)
__getattr__, __dir__ = _attach(__name__, _EXPORTS)
