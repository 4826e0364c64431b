"""The candidate languages of WikiOriginQA: languages official (de jure or de facto) in exactly
one UN member state, by the rule :mod:`wikiorigin.languages` states (CLDR through babel, and the
constitutional table ``data/un/national-official.txt``). Moved out of ``languages.py``;
``wikiorigin.languages`` still exports these names."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from .errors import WikioriginError

__all__ = [
    "SingleCountryLanguage",
    "single_country_languages",
    "un_members",
    "official_countries",
    "national_by_constitution",
]

_DATA = Path(__file__).parent / "data"  # the package's own files (not importlib.resources: 3 ms of start-up)

# --- candidate languages of WikiOriginQA: official in exactly one UN member state ------------
# (the rule is in the module docstring)

_STATUS_COUNTED = ("official", "de_facto_official")


@dataclass(frozen=True, slots=True)
class SingleCountryLanguage:
    """A language official (de jure or de facto) in exactly one UN member state."""

    language: str  # CLDR language code, script dropped (sr_Latn -> sr)
    country: str  # ISO 3166-1 alpha-2
    country_name: str
    wiki: str | None  # the open Wikipedia edition in this language, if any
    status: str = "official"  # CLDR's status there, or "national_by_constitution" (the table)

    def as_dict(self) -> dict:
        """The record as a dict for JSON."""
        return {
            "language": self.language,
            "country": self.country,
            "country_name": self.country_name,
            "wiki": self.wiki,
            "status": self.status,
        }


def _data_lines(name: str) -> list[str]:
    text = (_DATA / "un" / name).read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line.strip() and not line.startswith("#")]


def un_members() -> dict[str, str]:
    """The 193 UN member states: ISO 3166-1 alpha-2 code -> name (shipped list)."""
    return dict(line.split(" ", 1) for line in _data_lines("members.txt"))


def national_by_constitution() -> dict[tuple[str, str], str]:
    """``(country, language) -> source`` of the languages CLDR marks ``official_regional``
    that the country's constitution makes official in the whole state
    (``data/un/national-official.txt``)."""
    members, table = un_members(), {}
    for n, line in enumerate(_data_lines("national-official.txt"), 1):
        parts = line.split(" ", 2)
        if len(parts) < 3 or parts[0] not in members:
            raise WikioriginError(
                f"national-official.txt: entry {n}: expected 'COUNTRY LANGUAGE SOURCE' "
                f"with a UN member's code, got {line[:60]!r}"
            )
        table[(parts[0], parts[1])] = parts[2]
    return table


def official_countries(
    territories: Mapping[str, Mapping], members: Iterable[str], national: Collection[tuple[str, str]] = ()
) -> dict[str, dict[str, str]]:
    """``language -> {country: status}``: the member states where each language counts as
    official under the rule of the module docstring. ``territories`` is CLDR's ``territory_languages``
    (``{country: {language: {"official_status": ...}}}``); ``national`` the ``(country,
    language)`` pairs whose regional status counts."""
    found: dict[str, dict[str, str]] = {}
    for country in members:
        for code, info in territories.get(country, {}).items():
            status, language = info.get("official_status"), code.split("_")[0]
            if status == "official_regional" and ((country, code) in national or (country, language) in national):
                status = "national_by_constitution"
            elif status not in _STATUS_COUNTED:
                continue
            found.setdefault(language, {}).setdefault(country, status)
    return found


def single_country_languages() -> list[SingleCountryLanguage]:
    """Languages official (de jure or de facto) in exactly one UN member state, by the rule
    of the module docstring (CLDR through babel, plus the constitutional table), with their Wikipedia edition
    when one is open."""
    from babel.core import get_global

    from .languages import registry

    members = un_members()
    where = official_countries(get_global("territory_languages"), members, national_by_constitution())
    open_by_language = {"fil": "tlwiki"}  # Filipino is written on the Tagalog Wikipedia
    for wiki in registry().open():
        open_by_language.setdefault(wiki.language, wiki.dbname)
        open_by_language.setdefault(wiki.subdomain, wiki.dbname)
    return sorted(
        (
            SingleCountryLanguage(lang, code, members[code], open_by_language.get(lang), status)
            for lang, countries in where.items()
            if len(countries) == 1
            for code, status in countries.items()
        ),
        key=lambda s: s.language,
    )
