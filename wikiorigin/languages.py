"""The registry of Wikipedia editions: dbname, content language, domain, and whether it is open.

Built from Wikimedia's site configuration lists shipped in ``wikiorigin/data/wikimedia-config``
(see ``SOURCE.md`` there: commit and date). An edition is **open** when it is in
``wikipedia.dblist`` and in none of ``closed``, ``private``, ``deleted``, ``fishbowl``,
``special`` or ``testwikis``, and is not ``test2wiki``.

Look-up accepts a dbname (``jawiki``, ``zh_min_nanwiki``), a subdomain (``ja``, ``zh-min-nan``,
``be-tarask``, ``simple``), a domain or URL (``ja.wikipedia.org``) or a content language code
(``nan``, ``gsw``, ``nb``); an unknown name raises :class:`~wikiorigin.errors.UnknownWikiError`
with the closest names.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from .errors import UnknownWikiError

__all__ = [
    "Wiki", "Registry", "registry", "lookup", "open_wikis",
    "SingleCountryLanguage", "single_country_languages", "un_members",
]

_EXCLUDED = ("closed", "private", "deleted", "fishbowl", "special", "testwikis")
_NOT_PUBLIC = {"test2wiki": "testwikis"}  # a test wiki that testwikis.dblist does not list
_SUBDOMAIN_EXCEPTIONS = {"be_x_oldwiki": "be-tarask"}
_LANGUAGE_CODE = re.compile(r"'([a-z0-9_]+)'\s*=>\s*'([a-z0-9-]+)'")


@dataclass(frozen=True, slots=True)
class Wiki:
    """One Wikipedia edition."""

    dbname: str
    language: str  # the content language code (wgLanguageCode)
    subdomain: str
    status: str  # "open", or the list that excludes it: "closed", "private", ...

    @property
    def domain(self) -> str:
        return f"{self.subdomain}.wikipedia.org"

    @property
    def is_open(self) -> bool:
        return self.status == "open"

    def as_dict(self) -> dict:
        return {
            "dbname": self.dbname,
            "language": self.language,
            "domain": self.domain,
            "open": self.is_open,
            "status": self.status,
        }


def _dblist(name: str) -> list[str]:
    text = resources.files("wikiorigin").joinpath(f"data/wikimedia-config/{name}").read_text()
    return [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]


def _normal(name: str) -> str:
    return name.strip().lower().replace("_", "-")


class Registry:
    """All Wikipedia editions, with look-up by any of their names."""

    def __init__(self, wikis: list[Wiki]):
        self.wikis = wikis
        self._by_dbname = {w.dbname: w for w in wikis}
        # Precedence: dbname, then subdomain/domain, then language code (first wins).
        self._names: dict[str, Wiki] = {}
        for key_of in (
            lambda w: _normal(w.dbname),
            lambda w: w.subdomain,
            lambda w: _normal(w.dbname[: -len("wiki")]),
            lambda w: w.domain,
            lambda w: w.language,
        ):
            for w in sorted(wikis, key=lambda w: (not w.is_open, w.dbname)):
                self._names.setdefault(key_of(w), w)

    @classmethod
    def from_config(cls) -> "Registry":
        """Build the registry from the shipped Wikimedia configuration lists."""
        php = resources.files("wikiorigin").joinpath("data/wikimedia-config/wgLanguageCode.php.txt")
        codes = dict(_LANGUAGE_CODE.findall(php.read_text()))
        status: dict[str, str] = dict(_NOT_PUBLIC)
        for name in _EXCLUDED:
            for db in _dblist(f"{name}.dblist"):
                status.setdefault(db, name)
        wikis = []
        for db in _dblist("wikipedia.dblist"):
            sub = _SUBDOMAIN_EXCEPTIONS.get(db, db[: -len("wiki")].replace("_", "-"))
            wikis.append(Wiki(db, codes.get(db, sub), sub, status.get(db, "open")))
        return cls(wikis)

    def __len__(self) -> int:
        return len(self.wikis)

    def open(self) -> list[Wiki]:
        """The open editions with public dumps, sorted by dbname."""
        return sorted((w for w in self.wikis if w.is_open), key=lambda w: w.dbname)

    def lookup(self, name: str) -> Wiki:
        """The edition called ``name`` (dbname, subdomain, domain, URL or language code)."""
        if not isinstance(name, str) or not name.strip():
            raise UnknownWikiError(f"not a Wikipedia edition: {name!r}")
        if name in self._by_dbname:
            return self._by_dbname[name]
        key = _normal(name)
        key = re.sub(r"^[a-z]+://", "", key).split("/", 1)[0]
        if key.endswith(".m.wikipedia.org"):
            key = key[: -len(".m.wikipedia.org")] + ".wikipedia.org"
        found = self._names.get(key)
        if found is None:
            close = difflib.get_close_matches(key, list(self._names), n=6, cutoff=0.6)
            names = list(dict.fromkeys(self._names[k].dbname for k in close))[:4]
            hint = f"; did you mean {', '.join(names)}?" if names else ""
            raise UnknownWikiError(f"not a Wikipedia edition: {name!r}{hint}")
        return found


@lru_cache(maxsize=1)
def registry() -> Registry:
    """The registry of the shipped configuration (built once)."""
    return Registry.from_config()


def lookup(name: str) -> Wiki:
    """Shorthand for ``registry().lookup(name)``."""
    return registry().lookup(name)


def open_wikis() -> list[Wiki]:
    """The open Wikipedia editions (348 in the shipped configuration)."""
    return registry().open()


# --- candidate languages of WikiOriginQA: official in exactly one UN member state ------------


@dataclass(frozen=True, slots=True)
class SingleCountryLanguage:
    """A language official (de jure or de facto) in exactly one UN member state."""

    language: str  # CLDR language code, script dropped (sr_Latn -> sr)
    country: str  # ISO 3166-1 alpha-2
    country_name: str
    wiki: str | None  # the open Wikipedia edition in this language, if any

    def as_dict(self) -> dict:
        return {"language": self.language, "country": self.country,
                "country_name": self.country_name, "wiki": self.wiki}


def un_members() -> dict[str, str]:
    """The 193 UN member states: ISO 3166-1 alpha-2 code -> name (shipped list)."""
    text = resources.files("wikiorigin").joinpath("data/un/members.txt").read_text(encoding="utf-8")
    rows = [line.split(" ", 1) for line in text.splitlines() if line and not line.startswith("#")]
    return {code: name for code, name in rows}


def single_country_languages() -> list[SingleCountryLanguage]:
    """Languages official (de jure or de facto, not regional) in exactly one UN member state,
    from CLDR's territory data (via babel), with their Wikipedia edition when one is open."""
    from babel.languages import get_official_languages

    members = un_members()
    countries: dict[str, set[str]] = {}
    for code in members:
        for language in get_official_languages(code, regional=False, de_facto=True):
            countries.setdefault(language.split("_")[0], set()).add(code)
    open_by_language = {"fil": "tlwiki"}  # Filipino is written on the Tagalog Wikipedia
    for wiki in registry().open():
        open_by_language.setdefault(wiki.language, wiki.dbname)
        open_by_language.setdefault(wiki.subdomain, wiki.dbname)
    return sorted(
        (
            SingleCountryLanguage(lang, code, members[code], open_by_language.get(lang))
            for lang, where in countries.items() if len(where) == 1
            for code in where
        ),
        key=lambda s: s.language,
    )
