"""An item's region: its first-level administrative division, derived from Wikidata.

**The statements.** Only current, best-rank statements of "located in the administrative
territorial entity" (P131) and "country" (P17) count, read by one rule from the JSON dump and
from SPARQL (:func:`~wikiorigin.dumps.wikidata.item_claims`,
:func:`~wikiorigin.dumps.wikidata.best_rank`): a deprecated statement never; a statement
with an "end time" (P582) qualifier is historical and left out (a former district, an empire
the place once lay in); of the rest, the preferred statements if there are any, else the
normal ones. An item may have several such values: every one is followed, and their order
means nothing.

**The rule.** From the item, follow every P131 value up, one hop at a time, until the next
hop is the country. The country is one of the item's own P17 values when it has any (so a
chain that climbs into another state, or into a former one, never stops early: it does not
reach the item's country); an item without P17 takes the P17 of the first ancestor on the
chain that has one, and then any item that is its own country (P17 of itself: every state)
also counts. The last hop before the country is a first-level division (Japan's prefectures,
Greece's regions, Korea's provinces, Estonia's counties). Each item's walk ends in one of:

- ``region``: every chain that reaches the country ends in the same division: the region.
  Chains that go straight to the country beside them add nothing (a mountain "in Japan" and
  in a prefecture lies in that prefecture).
- ``several``: chains end in different divisions (a mountain on the border of two
  prefectures): no single region, None, never one picked.
- ``country``: located directly in its country only (a nationwide custom, or a first-level
  division itself): None.
- ``none``: no P131: None.
- ``broken``: a chain breaks off before the country (a parent Wikidata does not have, one
  with no P131 that is not the item's country, a cycle, more than :data:`MAX_HOPS` hops):
  None, never a guess, even beside a chain that reaches a division: the division at that
  height is not known to be first-level, and the broken chain may lie in another one.

Parents are read level by level: ``fetch(qids)`` returns the entities of the qids asked for
(a look-up in the entities table that one pass of the Wikidata JSON dump wrote, every place
with its P131 and P17: :mod:`.entities`; or a SPARQL query), asked once per level for every
item at once, so a corpus costs as many look-ups as its deepest chain has hops (two or three
in practice: town, district or municipality, division), and the dump is read once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..dumps.wikidata import Entity

__all__ = ["Region", "RegionReading", "first_level_division", "read_region", "resolve_regions", "MAX_HOPS", "OUTCOMES"]

MAX_HOPS = 12
"""The most P131 hops followed from an item before its chain counts as broken."""

OUTCOMES = ("region", "several", "country", "none", "broken")
"""How an item's walk can end (see the module's rule)."""


@dataclass(frozen=True, slots=True)
class Region:
    """An item's region: the division's ``qid`` and its ``label`` (in the wanted language,
    else English, else the qid)."""

    qid: str
    label: str


@dataclass(frozen=True, slots=True)
class RegionReading:
    """How an item's walk ended: ``outcome`` (one of :data:`OUTCOMES`) and the first-level
    ``divisions`` its chains reached (sorted; one for ``region``, several for ``several``)."""

    outcome: str
    divisions: tuple[str, ...] = ()

    @property
    def division(self) -> str | None:
        """The item's region's qid, when it has a single one."""
        return self.divisions[0] if self.outcome == "region" else None


@dataclass(slots=True)
class _Walk:
    """Every P131 chain up from one item: the divisions reached, the qids whose entities are
    still wanted, whether a chain broke off, whether one went straight to the country."""

    entities: dict[str, Entity]
    own: frozenset[str]
    divisions: set[str] = field(default_factory=set)
    wanted: set[str] = field(default_factory=set)
    broken: bool = False
    direct: bool = False
    done: set = field(default_factory=set)

    def is_country(self, qid: str, inherited: frozenset[str]) -> bool:
        """Whether ``qid`` is the country of this chain: one of the item's own P17 values when
        it has any; else its ancestors' P17, or an item that is its own country."""
        if self.own:
            return qid in self.own
        entity = self.entities.get(qid)
        return qid in inherited or (entity is not None and qid in entity.country)

    def up(self, path: tuple[str, ...], inherited: frozenset[str]) -> None:
        """Follow every P131 value of ``path[-1]`` (``path``: the item, then the hops to it)."""
        node = path[-1]
        if (node, inherited) in self.done:  # reached again by another chain: walked already
            return
        self.done.add((node, inherited))
        parents = self.entities[node].located_in
        if not parents and len(path) > 1:
            self.broken = True  # a chain that stops before the country
        for parent in parents:
            if self.is_country(parent, inherited):
                if len(path) > 1:
                    self.divisions.add(node)
                else:
                    self.direct = True
            elif parent in path or len(path) > MAX_HOPS:
                self.broken = True  # a cycle, or too deep
            elif parent not in self.entities:
                self.wanted.add(parent)
            else:
                self.up(path + (parent,), inherited or frozenset(self.entities[parent].country))


def _walk(qid: str, entities: dict[str, Entity]) -> _Walk:
    walk = _Walk(entities, frozenset(entities[qid].country))
    walk.up((qid,), walk.own)
    return walk


def _reading(walk: _Walk, located: bool) -> RegionReading:
    divisions = tuple(sorted(walk.divisions))
    if len(divisions) > 1:
        return RegionReading("several", divisions)
    if walk.broken or walk.wanted:  # a parent not given counts as one Wikidata does not have
        return RegionReading("broken", divisions)
    if divisions:
        return RegionReading("region", divisions)
    return RegionReading("country" if walk.direct else "broken" if located else "none")


def read_region(qid: str, entities: dict[str, Entity]) -> RegionReading:
    """How the item's walk ends by the module's rule, given the entities of the item and its
    P131 ancestors (a parent missing from them breaks its chain off)."""
    if qid not in entities:
        return RegionReading("none")
    return _reading(_walk(qid, entities), bool(entities[qid].located_in))


def first_level_division(qid: str, entities: dict[str, Entity]) -> str | None:
    """The qid of the item's first-level division by the module's rule, given the entities of
    the item and its P131 ancestors; None when it has none, several, or the chain breaks off."""
    return read_region(qid, entities).division


def _label(entity: Entity | None, qid: str, languages: list[str]) -> str:
    labels = entity.labels if entity is not None else {}
    return next((labels[lang] for lang in languages if labels.get(lang)), qid)


def resolve_regions(
    items: dict[str, Entity],
    fetch: Callable[[set[str]], dict[str, Entity]],
    languages: list[str],
    readings: dict[str, RegionReading] | None = None,
) -> dict[str, Region | None]:
    """The region of each of ``items`` (qid -> entity): parents fetched level by level with
    ``fetch`` until every chain has reached its country or broken off; labels in the first of
    ``languages`` that has one. ``readings``, when given, gets each item's
    :class:`RegionReading` (why an item has none: ``several`` regions, ``broken``, ...)."""
    entities, pending = dict(items), set(items)
    for _ in range(MAX_HOPS + 1):
        # an item whose walk wants nothing is settled: entities are only added (a fetch gives
        # the qids asked for, none of them known yet), so its walk cannot change; only the
        # others are walked again at the next level
        wanted_by = {qid: _walk(qid, entities).wanted for qid in pending}
        pending = {qid for qid, wanted in wanted_by.items() if wanted}
        wanted = set().union(*wanted_by.values())
        if not wanted:
            break
        fetched = fetch(wanted)
        entities.update(fetched)
        for qid in wanted - set(fetched):  # not in Wikidata: the chain breaks off there
            entities[qid] = Entity(qid)
    regions = {}
    for qid in items:
        reading = read_region(qid, entities)
        if readings is not None:
            readings[qid] = reading
        division = reading.division
        regions[qid] = (
            None if division is None else Region(division, _label(entities.get(division), division, languages))
        )
    return regions
