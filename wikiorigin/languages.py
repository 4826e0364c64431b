"""The registry of Wikipedia editions: dbname, content language, domain, and whether it is open.

Built from Wikimedia's site configuration lists shipped in ``wikiorigin/data/wikimedia-config``
(see ``SOURCE.md`` there: commit and date). An edition is **open** when it is in
``wikipedia.dblist`` and in none of ``closed``, ``private``, ``deleted``, ``fishbowl``,
``special`` or ``testwikis``, and is not ``test2wiki``.

Look-up accepts a dbname (``jawiki``, ``zh_min_nanwiki``), a subdomain (``ja``, ``zh-min-nan``,
``be-tarask``, ``simple``), a domain or URL (``ja.wikipedia.org``) or a content language code
(``nan``, ``gsw``, ``nb``); an unknown name raises :class:`~wikiorigin.errors.UnknownWikiError`
with the closest names.

**Candidate languages of WikiOriginQA** (:func:`single_country_languages`, ``wikiorigin
languages --single-country``). The paper's rule is a language "official (de jure or de facto)
in exactly one UN member state". Made exact here: a language counts as official in one of the
193 member states (``data/un/members.txt``) when CLDR's territory data (through babel) marks it
there

- ``official`` or ``de_facto_official``; or
- ``official_regional``, *and* the state's constitution makes it an official language of the
  state as a whole: the sourced table ``data/un/national-official.txt`` (status
  ``national_by_constitution``). It was drawn up by checking every ``official_regional`` entry
  of CLDR for the member states, and holds the eleven official languages of South Africa
  (constitution s. 6(1): Afrikaans, Zulu, Xhosa, ...; CLDR marks all but English regional),
  Kurdish (``ckb``) in Iraq, Albanian in North Macedonia and Romansh in Switzerland.

Every other regional status counts for nothing, neither to make a language a candidate nor to
rule one out: Catalan (official in Andorra, regional in Spain), Slovak and Ukrainian (regional
in Vojvodina, Serbia), Uzbek and Turkmen (regional in Afghanistan) stay single-country;
Welsh, Frisian, Sami or India's state languages are no candidates. A "national language" that
is not official (Lingala in the DR Congo) does not count. Scripts are dropped (``sr_Latn`` ->
``sr``); non-members (Kosovo, Palestine, Taiwan) never count. A status that CLDR does not list
at all is not added: Zimbabwe's constitution recognises 16 languages (Xhosa, Venda, Tsonga,
Chewa, ...) of which CLDR lists three, so Xhosa, Venda and Tsonga are candidates (South
Africa only) and Chewa stays Malawi's. With the shipped data: 90 languages, 80 of them with an
open edition (79 editions: ``no`` and ``nb`` are both ``nowiki``); CLDR's national statuses
alone gave 85 and 75 (the paper: 75). The table turns Setswana, Sesotho and siSwati
(official in Botswana, Lesotho, Eswatini, and in South Africa, where most of their speakers
live) and Albanian (Albania and North Macedonia) into two-country languages.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path

from ._single_country import (
    SingleCountryLanguage,
    national_by_constitution,
    official_countries,
    single_country_languages,
    un_members,
)
from .errors import ParameterError, UnknownWikiError, WikioriginError

__all__ = [
    "Wiki",
    "Registry",
    "registry",
    "lookup",
    "open_wikis",
    "language_name",
    "wiki_language",
    "open_language",
    "language_parameter",
    "SingleCountryLanguage",
    "single_country_languages",
    "un_members",
    "official_countries",
    "national_by_constitution",
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
        """The edition's host name (``ja.wikipedia.org``)."""
        return f"{self.subdomain}.wikipedia.org"

    @property
    def is_open(self) -> bool:
        """Whether the edition is open (not closed, private or fishbowl)."""
        return self.status == "open"

    def as_dict(self) -> dict:
        """The wiki as a dict for JSON: dbname, language, domain, whether it is open, and status."""
        return {
            "dbname": self.dbname,
            "language": self.language,
            "domain": self.domain,
            "open": self.is_open,
            "status": self.status,
        }


_DATA = Path(__file__).parent / "data"  # the package's own files (not importlib.resources: 3 ms of start-up)


def _dblist(name: str) -> list[str]:
    text = (_DATA / "wikimedia-config" / name).read_text(encoding="utf-8")
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
    def from_config(cls) -> Registry:
        """Build the registry from the shipped Wikimedia configuration lists."""
        php = _DATA / "wikimedia-config" / "wgLanguageCode.php.txt"
        codes = dict(_LANGUAGE_CODE.findall(php.read_text(encoding="utf-8")))
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
            import difflib

            close = difflib.get_close_matches(key, list(self._names), n=6, cutoff=0.6)
            names = list(dict.fromkeys([*self._of_country(key), *(self._names[k].dbname for k in close)]))[:4]
            hint = f"; did you mean {', '.join(names)}?" if names else ""
            raise UnknownWikiError(f"not a Wikipedia edition: {name!r}{hint}")
        return found

    def _of_country(self, key: str) -> list[str]:
        """The editions of the official languages of a country whose code ``key`` is (``jp``
        is Japan: ``jawiki``), for a country code given where a language code belongs."""
        if not re.fullmatch(r"[a-z]{2}", key):
            return []
        from babel.languages import get_official_languages

        codes = [c.split("_")[0] for c in get_official_languages(key.upper(), de_facto=True)]
        return [self._names[c].dbname for c in dict.fromkeys(codes) if c in self._names]


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


# English names of the open Wikipedias' content languages that CLDR names neither as a locale
# nor among its English display names (48 with babel 2.18; found by running language_name over
# open_wikis() without this table, as tests/test_languages.py does). Each is the ISO 639-3
# reference name (SIL, iso639-3.sil.org; a qualifier dropped: "Russia Buriat" -> Buryat), or,
# marked "wm", the name of meta.wikimedia.org's List of Wikipedias, for codes outside ISO 639-3
# or that Wikimedia uses in another sense (nrm: Norman on Wikipedia, Narom in ISO 639-3).
_NAMES = {
    "ami": "Amis",
    "azb": "South Azerbaijani",
    "bcl": "Central Bikol",
    "bdr": "West Coast Bajau",
    "blk": "Pa'o Karen",
    "bol": "Bole",
    "btm": "Batak Mandailing",
    "bxr": "Buryat",
    "cbk": "Chavacano",
    "cdo": "Min Dong Chinese",
    "dag": "Dagbani",
    "dga": "Southern Dagaare",
    "diq": "Zazaki",
    "dty": "Dotyali",
    "eml": "Emilian-Romagnol",  # wm (a retired ISO 639-3 code)
    "gcr": "Guianese Creole French",
    "gom": "Goan Konkani",
    "gpe": "Ghanaian Pidgin English",
    "guw": "Gun",
    "hyw": "Western Armenian",  # wm (an IANA subtag, not ISO 639-3)
    "igl": "Igala",
    "isv": "Interslavic",  # wm
    "kai": "Karekare",
    "kbp": "Kabiye",
    "kge": "Komering",
    "knc": "Central Kanuri",
    "kus": "Kusaal",
    "lbe": "Lak",
    "lld": "Ladin",
    "map-bms": "Banyumasan",  # wm
    "mhr": "Eastern Mari",
    "mnw": "Mon",
    "nah": "Nahuatl",
    "nrm": "Norman",  # wm
    "nup": "Nupe",
    "olo": "Livvi-Karelian",
    "pnb": "Western Punjabi",
    "ppl": "Pipil",
    "pwn": "Paiwan",
    "rki": "Rakhine",
    "rmy": "Vlax Romani",
    "roa-tara": "Tarantino",  # wm
    "rsk": "Pannonian Rusyn",  # wm
    "skr": "Saraiki",
    "syl": "Sylheti",
    "szy": "Sakizaya",
    "tay": "Atayal",
    "tdd": "Tai Nua",
}


def _cldr_name(code: str) -> str | None:
    from babel import Locale
    from babel.core import UnknownLocaleError

    key = code.replace("-", "_")
    name = Locale("en").languages.get(key)  # CLDR's English display names
    if name is None:
        try:
            locale = Locale.parse(key)  # kept only when it is that code: zh_classical parses as zh_Hans
            name = locale.english_name if str(locale).lower() == key.lower() else None
        except (UnknownLocaleError, ValueError):
            name = None
    return name or _NAMES.get(code)


@cache
def language_name(code: str) -> str:
    """The English name of a content language code (``el`` -> ``Greek``, ``arz`` -> ``Egyptian
    Arabic``, ``cdo`` -> ``Min Dong Chinese``): CLDR's through babel (a locale's name, else
    CLDR's English display name), else a small sourced table for the open Wikipedias CLDR does
    not name; a Wikipedia's subdomain or dbname (``bat-smg``, ``zh-min-nan``) is named by its
    content language. A one-line :class:`~wikiorigin.errors.WikioriginError` when no name is
    known, so that no prompt ever says "in xx". Each code is looked up once (the builders ask
    for every row)."""
    name = _cldr_name(code)
    if name is None:
        try:
            language = lookup(code).language
        except UnknownWikiError:
            language = None
        name = _cldr_name(language) if language and language != code else None
    if name is None:
        raise WikioriginError(
            f"language {code!r}: no English name known for it (not in CLDR nor in "
            "wikiorigin.languages' table of Wikipedia languages)"
        )
    return name


def open_language(code: str) -> str:
    """The content language of ``code``, a language code, subdomain or dbname of an open
    Wikipedia (``el``, ``elwiki``, ``simple`` -> ``en``); a one-line error otherwise."""
    try:
        wiki = lookup(code)
    except UnknownWikiError as exc:
        raise WikioriginError(f"language {code!r}: {exc}") from None
    if not wiki.is_open:
        raise WikioriginError(f"language {code!r}: {wiki.dbname} is {wiki.status}, not an open Wikipedia")
    return wiki.language


def language_parameter(code: str, parameter: str = "language") -> str:
    """:func:`open_language` for a value a caller gave as ``parameter``: a refused code is a
    :class:`~wikiorigin.errors.ParameterError` that names the parameter (``language='xx'``;
    the command line words it as its flag)."""
    try:
        return open_language(code)
    except WikioriginError as exc:
        said = str(exc).removeprefix(f"language {code!r}")
        raise ParameterError(parameter, "{" + parameter + "}" + said, code) from None


_PROJECTS = ("wikivoyage", "wiktionary", "wikibooks", "wikinews", "wikiquote", "wikisource", "wikiversity", "wiki")


def wiki_language(dbname: str) -> str | None:
    """The content language of a wiki's dbname: a Wikipedia's from the registry, a sister
    project's (``elwikivoyage``, ``frwiktionary``) from the Wikipedia of the same prefix; None
    when it cannot be told."""
    for suffix in _PROJECTS:
        if dbname.endswith(suffix):
            try:
                return lookup(dbname.removesuffix(suffix) + "wiki").language
            except UnknownWikiError:
                return None
    return None
