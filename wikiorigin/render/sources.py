"""Where an article's text comes from: the sources a corpus chooses from (``text=``).

- :class:`WikitextText`: our own reading of the wikitext (:func:`wikiorigin.wikitext.convert`):
  templates dropped, no engine needed.
- :class:`MediaWikiText`: the page rendered by MediaWiki with the wiki's own templates and
  modules (:mod:`~wikiorigin.render.mediawiki`), then read by :func:`~wikiorigin.render.html.html_article`.
- :class:`HtmlDumpText`: the page's HTML from a Wikimedia Enterprise HTML dump, read the same way.

Each gives an :class:`~wikiorigin.wikitext.Article` per page with the furniture left out of it
by kind (:meth:`articles`; :data:`~wikiorigin.render.html.FURNITURE`) and says what
it is (:meth:`describe`, the corpus's provenance). A page the engine fails on, or one the HTML
dump lacks, takes the wikitext path (``Article.fallback``). :func:`text_source` picks one by
name; with none named, the most faithful the machine has.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from ..dumps.pages import Multistream, PageText
from ..errors import ParameterError
from ..log import logger
from ..wikitext import Article, convert
from .html import html_article
from .htmldump import HtmlDumpIndex
from .mediawiki import EXTENSIONS, INSTALL, MediaWiki, find_mediawiki, renderer, require_mediawiki

__all__ = ["TEXT_SOURCES", "WikitextText", "MediaWikiText", "HtmlDumpText", "text_source"]

TEXT_SOURCES = ("wikitext", "mediawiki", "html-dump")
"""Names of the text sources, as ``text=`` takes them."""


@dataclass(frozen=True)
class WikitextText:
    """Text from the wikitext itself, templates dropped (``namespaces``: the wiki's)."""

    namespaces: dict

    def describe(self) -> str:
        """What this source is, as the corpus\'s provenance records it."""
        return "wikitext (wikiorigin's reader, templates dropped)"

    def articles(self, pages: list[PageText]) -> list[tuple[Article, dict]]:
        """The text of each of ``pages``, in order, with the furniture left out of it by kind."""
        return [(convert(p.text, self.namespaces), {}) for p in pages]


def _fallback(page: PageText, namespaces: dict) -> Article:
    return replace(convert(page.text, namespaces), fallback=True)


@dataclass(frozen=True)
class MediaWikiText:
    """Text of pages rendered by ``engine`` with the ``store`` of their dump, on ``processes``."""

    engine: MediaWiki
    store: Path
    namespaces: dict
    processes: int | None = None

    def describe(self) -> str:
        """What this source is, as the corpus\'s provenance records it."""
        return f"mediawiki (MediaWiki {self.engine.version} with {', '.join(EXTENSIONS)}; store {self.store.name})"

    def articles(self, pages: list[PageText]) -> list[tuple[Article, dict]]:
        """The text of each of ``pages``, in order, with the furniture left out of it by kind."""
        pool = renderer(self.engine, self.store, self.processes)
        answers = pool.render([(p.title, p.text, p.revision_timestamp.strftime("%Y-%m-%dT%H:%M:%SZ")) for p in pages])
        out: list[tuple[Article, dict]] = []
        for page, answer in zip(pages, answers):
            if "html" not in answer:
                logger.warning("%s: MediaWiki failed (%s): its wikitext taken", page.title, answer.get("error"))
                out.append((_fallback(page, self.namespaces), {}))
            else:
                templates = ("Template", self.namespaces.get(10) or "Template", pool.template)
                article, found = html_article(answer["html"], answer.get("categories"), templates)
                out.append((article, found.left_out))
        return out


@dataclass(frozen=True)
class HtmlDumpText:
    """Text of pages from the HTML dump ``index`` has (:class:`HtmlDumpIndex`)."""

    index: HtmlDumpIndex
    namespaces: dict

    def describe(self) -> str:
        """What this source is, as the corpus\'s provenance records it."""
        return f"html-dump ({self.index.dump.name})"

    def articles(self, pages: list[PageText]) -> list[tuple[Article, dict]]:
        """The text of each of ``pages``, in order, with the furniture left out of it by kind."""
        out: list[tuple[Article, dict]] = []
        for page in pages:
            html = self.index.get(page.title)
            templates = ("Template", self.namespaces.get(10) or "Template")
            if html is None:
                out.append((_fallback(page, self.namespaces), {}))
            else:
                article, found = html_article(html, None, templates)
                out.append((article, found.left_out))
        return out


def text_source(
    text: str | None, dump: Multistream, out, *, html_dump=None, processes: int | None = None
) -> tuple[object, str | None]:
    """The text source called ``text`` (:data:`TEXT_SOURCES`; None: MediaWiki when installed,
    else the wikitext) for the pages of ``dump``, its files kept beside ``out`` (MediaWiki's
    store, the HTML dump's index), and a note when the default fell back to the wikitext (no
    MediaWiki here, or a dump without its templates and modules, which MediaWiki would render
    no better). ``processes``: MediaWiki's PHP processes in each converting process (None: one
    per core)."""
    from .store import prepare_store, store_pages

    if text not in (None, *TEXT_SOURCES):
        raise ParameterError("text", f"{{text}} is no text source: one of {', '.join(TEXT_SOURCES)}", text)
    namespaces = dump.site.namespaces
    beside = Path(out).resolve().parent
    if text == "html-dump" or (text is None and html_dump is not None):
        if html_dump is None:
            raise ParameterError("html_dump", "the text source html-dump needs the HTML dump ({html_dump})")
        index = HtmlDumpIndex(html_dump, beside / f"{Path(html_dump).name}.sqlite")
        index.build()
        return HtmlDumpText(index, namespaces), None
    if text == "wikitext":
        return WikitextText(namespaces), None
    engine = require_mediawiki() if text == "mediawiki" else find_mediawiki()
    if engine is None:
        return WikitextText(namespaces), f"text from the wikitext, templates dropped; for MediaWiki's: {INSTALL}"
    if text is None and not store_pages(dump):
        note = f"{dump.dump.name} carries no templates or modules: text from the wikitext, templates dropped"
        return WikitextText(namespaces), note
    store = prepare_store(dump, beside / f"{dump.dump.name}.mediawiki", engine)
    return MediaWikiText(engine, store, namespaces, processes), None
