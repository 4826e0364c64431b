"""A reference of an article (:class:`Reference`) and the fields of a citation template
(:func:`_citation`: authors, title, publisher, year, ISBN, URL, pages), with the template helpers
the converter shares. Moved out of ``wikitext.py``; ``wikiorigin.wikitext`` still exports
:class:`Reference`."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["Reference", "_CITATIONS", "_citation", "_name", "_param", "_params"]

_CITATIONS = {
    "cite book",
    "cite web",
    "cite news",
    "cite journal",
    "citation",
    "cite web2",
    "cite press release",
    "cite report",
    "cite encyclopedia",
    "cite thesis",
    "cite conference",
}
_YEAR = re.compile(r"(1[0-9]{3}|20[0-9]{2})")


@dataclass(slots=True)
class Reference:
    """One reference of an article: its ``number`` in order of first citation, ``name`` and
    ``group`` of the ``<ref>``, its plain ``text``, and, from a citation template, the template
    name, ``authors``, ``title``, ``publisher``, ``year``, ``isbn``, ``url`` and ``pages``."""

    number: int
    name: str | None
    group: str | None
    text: str
    template: str | None = None
    authors: list[str] = field(default_factory=list)
    title: str | None = None
    publisher: str | None = None
    year: str | None = None
    isbn: str | None = None
    url: str | None = None
    pages: str | None = None


def _name(template) -> str:
    return str(template.name).strip().replace("_", " ").lower()


def _params(template) -> dict:
    """A template's parameters by stripped name, a repeated name's last one winning (as
    mwparserfromhell's ``get`` and MediaWiki read them): each name made a string once, not once
    per ``has``/``get`` (a citation asks for some forty names)."""
    return {str(p.name).strip(): p for p in template.params}


def _param(params: dict, key, default=None):
    found = params.get(str(key))
    return str(found.value).strip() if found is not None else default


def _citation(ref: Reference, t, plain: Callable[[object], str]) -> None:
    """Fields of a citation template; ``plain`` renders a parameter's wikitext as text. The
    positional ``和書`` flag of Japanese usage needs nothing: only named parameters count."""
    ref.template = str(t.name).strip()
    params = _params(t)

    def get(key):
        return plain(params[key].value) or None if key in params else None

    authors = []
    for suffix in ("", *map(str, range(1, 10))):
        for key in (f"author{suffix}", f"last{suffix}", *(("authors", "editor") if not suffix else ())):
            name = get(key)
            if name:
                first = get(f"first{suffix}") if key.startswith("last") else None
                authors.append(f"{name}, {first}" if first else name)
    ref.authors = list(dict.fromkeys(authors))
    ref.title = get("title") or get("chapter")
    ref.publisher = next((v for v in map(get, ("publisher", "work", "website", "newspaper", "journal")) if v), None)
    date = _param(params, "year") or _param(params, "date") or ""
    year = _YEAR.search(date)
    ref.year = year.group(1) if year else None
    isbn = _param(params, "isbn") or _param(params, "ISBN")
    if isbn and "{{" in isbn:
        match = re.search(r"\{\{\s*ISBN2?\s*\|\s*([0-9Xx-]+)", isbn)
        isbn = match.group(1) if match else None
    ref.isbn = isbn.replace("-", "") if isbn else None
    ref.url = _param(params, "url") or None
    ref.pages = next((v for v in map(get, ("pages", "page", "p", "pp")) if v), None)
