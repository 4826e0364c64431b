"""Synthetic pages-articles exports (one revision per page, with wikitext).

:func:`page_xml` writes one ``<page>`` of a pages-articles dump from its parts;
:func:`write_articles_xml` writes a whole export of random articles with references,
templates, sections and categories, the input of the multistream benchmark.
"""

from __future__ import annotations

import random

from . import xml

__all__ = ["page_xml", "write_articles_xml"]


def page_xml(
    page_id: int,
    title: str,
    text: str,
    ns: int = 0,
    timestamp: str = "2026-08-01T00:00:00Z",
    revision_id: int | None = None,
    redirect: str | None = None,
) -> bytes:
    """One ``<page>`` element of a pages-articles export (escaped as MediaWiki does);
    ``revision_id`` defaults to ten times the page id, ``redirect`` is the target's title."""
    rid = revision_id if revision_id is not None else page_id * 10
    revision = xml.revision(rid, timestamp, xml.contributor("wikiorigin", 1), xml.text(text), sha1=False)
    return xml.page(title, ns, page_id, [revision], redirect=redirect).encode()


def _article_text(rng: random.Random, page_id: int, text_size: int) -> str:
    words = " ".join(rng.choices(xml.WORDS, k=text_size // 8))
    return (
        f"{{{{Infobox|name={page_id}}}}}\n'''Article {page_id}''' {words[:200]}"
        f'<ref name="a{page_id}">{{{{Cite book|title=Book {page_id}|year=2001}}}}</ref>\n'
        f"== Section ==\n{words[200:]}<ref>Note</ref>\n"
        f"== References ==\n{{{{Reflist}}}}\n[[Category:Cat {page_id % 50}]]"
    )


def write_articles_xml(
    out, target_bytes: int, *, seed: int = 0, dbname: str = "testwiki", text_size: int = 2500
) -> int:
    """A pages-articles export (one revision per page, wikitext with references and
    templates) of about ``target_bytes``, to the binary file ``out``. Returns the pages."""
    rng = random.Random(seed)
    out.write(xml.header(dbname).encode())
    written, page_id = 0, 1
    while written < target_bytes:
        body = _article_text(rng, page_id, text_size)
        title = f"Article {page_id} & {rng.choice(xml.WORDS)}"
        # ``bytes`` is the escaped text's length here (not its UTF-8 size): kept, so that the
        # benchmarks' cached inputs stay the same.
        revision = xml.revision(
            page_id * 10,
            xml.iso(rng.randrange(700_000_000)),
            xml.contributor("U", 1),
            xml.text(body, size=len(xml.escape(body))),
        )
        page = xml.page(title, 0, page_id, [revision]).encode()
        out.write(page)
        written += len(page)
        page_id += 1
    out.write(xml.FOOTER.encode())
    return page_id - 1
