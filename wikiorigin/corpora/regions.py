"""An item's region: its first-level administrative division, derived from Wikidata.

**The rule.** Follow "located in the administrative territorial entity" (P131, the best-ranked
value first) up from the item, one hop at a time, until the next hop is the country: an item
among the item's own "country" (P17) values, or an item that is its own country (P17 of itself:
every state is). The last hop before the country is the first-level division (Japan's
prefectures, Greece's regions, Korea's provinces, Estonia's counties): the item's region.

- An item located directly in its country (a nationwide custom, or a first-level division
  itself) has no region below the country: None.
- An item with no P131 has no region: None.
- A chain that breaks off before the country (a parent Wikidata does not have, a cycle, more
  than :data:`MAX_HOPS` hops) gives None, never a guess: the division at that height is not
  known to be first-level.

Parents are read level by level: ``fetch(qids)`` returns the entities of the qids asked for
(a pass of the Wikidata JSON dump, or a SPARQL query), asked once per level for every item at
once, so a corpus costs as many fetches as its deepest chain has hops (two or three in
practice: town, district or municipality, division).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..dumps.wikidata import Entity

__all__ = ["Region", "first_level_division", "resolve_regions", "MAX_HOPS"]

MAX_HOPS = 12
"""The most P131 hops followed from an item before its chain counts as broken."""


@dataclass(frozen=True, slots=True)
class Region:
    """An item's region: the division's ``qid`` and its ``label`` (in the wanted language,
    else English, else the qid)."""

    qid: str
    label: str


def _is_country(qid: str, countries: set[str], entities: dict[str, Entity]) -> bool:
    entity = entities.get(qid)
    return qid in countries or (entity is not None and qid in entity.country)


def _walk(qid: str, entities: dict[str, Entity]) -> tuple[list[str], str | None]:
    """The P131 hops from ``qid`` below its country, and how the walk ended: ``"country"``
    (reached), None (no P131 at all), or the qid whose entity is still wanted."""
    item = entities[qid]
    countries, hops, current, seen = set(item.country), [], item, {qid}
    for _ in range(MAX_HOPS):
        if not current.located_in:
            return hops, "top" if hops else None
        parent = current.located_in[0]
        if _is_country(parent, countries, entities):
            return hops, "country"
        if parent in seen:
            return hops, "cycle"
        if parent not in entities:
            return hops, parent
        hops.append(parent)
        seen.add(parent)
        current = entities[parent]
        countries |= set(current.country) if not countries else set()
    return hops, "too deep"


def first_level_division(qid: str, entities: dict[str, Entity]) -> str | None:
    """The qid of the item's first-level division by the module's rule, given the entities of
    the item and its P131 ancestors; None when it has none or the chain breaks off."""
    if qid not in entities:
        return None
    hops, end = _walk(qid, entities)
    return hops[-1] if hops and end == "country" else None


def _label(entity: Entity | None, qid: str, languages: list[str]) -> str:
    labels = entity.labels if entity is not None else {}
    return next((labels[lang] for lang in languages if labels.get(lang)), qid)


def resolve_regions(items: dict[str, Entity], fetch: Callable[[set[str]], dict[str, Entity]],
                    languages: list[str]) -> dict[str, Region | None]:
    """The region of each of ``items`` (qid -> entity): parents fetched level by level with
    ``fetch`` until every chain has reached its country or broken off; labels in the first of
    ``languages`` that has one."""
    entities = dict(items)
    for _ in range(MAX_HOPS):
        wanted = set()
        for qid in items:
            _, end = _walk(qid, entities)
            if end not in (None, "country", "top", "cycle", "too deep"):
                wanted.add(end)
        if not wanted:
            break
        fetched = fetch(wanted)
        entities.update(fetched)
        for qid in wanted - set(fetched):  # not in Wikidata: the chain breaks off there
            entities[qid] = Entity(qid)
    regions = {}
    for qid in items:
        division = first_level_division(qid, entities)
        regions[qid] = None if division is None else Region(division, _label(entities.get(division), division,
                                                                              languages))
    return regions
