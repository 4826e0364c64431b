"""Labels, aliases, sitelinks and place of Wikidata items: from the JSON dump, or from a SPARQL
endpoint. The place is what the items' regions are derived from: "located in the administrative
territorial entity" (P131) and "country" (P17), best rank first (preferred, else normal;
deprecated statements are left out, as SPARQL's ``wdt:`` leaves them).

The JSON dump (``wikidata-<date>-all.json.gz``) is one entity per line between ``[`` and
``]``, each line ending with a comma. :func:`read_entities` streams it and, when given the
QIDs wanted, reads each line's ``"id"`` with a regex on its first bytes and parses only the
wanted lines: most of the dump is never parsed. A line that is not JSON is counted and
reported with its line number, never fatal.

:func:`query_entities` asks a SPARQL endpoint (Wikidata's, or any that speaks the protocol)
in batches of ``VALUES``, with SPARQLWrapper.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from ..errors import WikioriginError
from .compression import open_dump

__all__ = ["Entity", "EntityStats", "read_entities", "query_entities", "entity_from_json", "item_claims"]

_ID = re.compile(rb'"id"\s*:\s*"([QPL][0-9]+)"')
_PREFIX = 400  # the id stands near the start of a line in every dump version


@dataclass(slots=True)
class Entity:
    """A Wikidata item as the corpora need it: its ``qid``, ``labels`` and ``aliases`` by
    language, ``sitelinks`` (dbname -> page title), the items it is ``located_in`` (P131) and
    its ``country`` (P17), best rank first."""

    qid: str
    labels: dict[str, str] = field(default_factory=dict)
    aliases: dict[str, list[str]] = field(default_factory=dict)
    sitelinks: dict[str, str] = field(default_factory=dict)
    located_in: list[str] = field(default_factory=list)
    country: list[str] = field(default_factory=list)


@dataclass(slots=True)
class EntityStats:
    """What a read of a Wikidata JSON dump saw: lines read, entities parsed, entities wanted and
    found, lines that were not JSON, and notes."""

    lines: int = 0
    parsed: int = 0
    found: int = 0
    bad_lines: int = 0
    notes: list[str] = field(default_factory=list)


def item_claims(data: dict, prop: str) -> list[str]:
    """The items a JSON entity's statements of ``prop`` point at: preferred rank first, then
    normal; deprecated ones and values that are no item (``somevalue``, ``novalue``) left out."""
    found = {"preferred": [], "normal": []}
    for claim in (data.get("claims") or {}).get(prop) or []:
        value = ((claim.get("mainsnak") or {}).get("datavalue") or {}).get("value")
        rank = claim.get("rank", "normal")
        if isinstance(value, dict) and rank in found:
            qid = value.get("id") or (f"Q{value['numeric-id']}" if "numeric-id" in value else None)
            if qid:
                found[rank].append(qid)
    return list(dict.fromkeys(found["preferred"] + found["normal"]))


def entity_from_json(data: dict) -> Entity:
    """The :class:`Entity` of one entity of a Wikidata JSON dump (a parsed line); ``KeyError``
    if it has no ``id``."""
    return Entity(
        qid=data["id"],
        labels={k: v["value"] for k, v in (data.get("labels") or {}).items()},
        aliases={k: [a["value"] for a in v] for k, v in (data.get("aliases") or {}).items()},
        sitelinks={k: v["title"] for k, v in (data.get("sitelinks") or {}).items()},
        located_in=item_claims(data, "P131"),
        country=item_claims(data, "P17"),
    )


def _lines(path) -> Iterator[bytes]:
    with open_dump(path, threads=2) as stream:
        yield from stream.lines()


def read_entities(path, qids: Iterable[str] | None = None, stats: EntityStats | None = None) -> Iterator[Entity]:
    """The entities of a Wikidata JSON dump (only ``qids`` when given)."""
    wanted = None if qids is None else {q.encode() for q in qids}
    stats = stats if stats is not None else EntityStats()
    for number, line in enumerate(_lines(path), 1):
        line = line.strip()
        if line in (b"[", b"]", b""):
            continue
        stats.lines += 1
        if wanted is not None:
            found = _ID.search(line, 0, _PREFIX)
            if found is not None and found.group(1) not in wanted:
                continue
        try:
            data = json.loads(line.rstrip(b","))
            entity = entity_from_json(data)
        except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
            stats.bad_lines += 1
            if len(stats.notes) < 20:
                stats.notes.append(f"{path}: line {number}: not an entity in JSON ({exc}): {line[:60]!r}")
            continue
        stats.parsed += 1
        if wanted is None or entity.qid.encode() in wanted:
            stats.found += 1
            yield entity


_QUERY = """SELECT ?item ?kind ?lang ?value WHERE {{
  VALUES ?item {{ {items} }}
  {{ ?item rdfs:label ?value . BIND("label" AS ?kind) BIND(LANG(?value) AS ?lang) }}
  UNION {{ ?item skos:altLabel ?value . BIND("alias" AS ?kind) BIND(LANG(?value) AS ?lang) }}
  UNION {{ ?article schema:about ?item ; schema:isPartOf ?site ; schema:name ?value .
          ?site wikibase:wikiGroup "wikipedia" .
          BIND("sitelink" AS ?kind) BIND(STR(?site) AS ?lang) }}
  UNION {{ ?item wdt:P131 ?value . BIND("P131" AS ?kind) BIND("" AS ?lang) }}
  UNION {{ ?item wdt:P17 ?value . BIND("P17" AS ?kind) BIND("" AS ?lang) }}
  FILTER(?kind = "sitelink" || ?kind = "P131" || ?kind = "P17" || LANG(?value) IN ({languages}))
}}"""
_PREFIXES = """PREFIX wd: <http://www.wikidata.org/entity/>
PREFIX wdt: <http://www.wikidata.org/prop/direct/>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
PREFIX skos: <http://www.w3.org/2004/02/skos/core#>
PREFIX schema: <http://schema.org/>
PREFIX wikibase: <http://wikiba.se/ontology#>
"""


def _site_dbname(site_url: str) -> str | None:
    """``https://ja.wikipedia.org/`` -> ``jawiki`` (the sitelink key of the JSON dump)."""
    from ..errors import UnknownWikiError
    from ..languages import lookup

    try:
        return lookup(site_url.split("//", 1)[-1].split("/", 1)[0]).dbname
    except UnknownWikiError:
        return None  # a site the registry does not know: not needed here


def query_entities(endpoint: str, qids: list[str], languages: list[str], batch: int = 200,
                   user_agent: str = "wikiorigin (SPARQL; research)") -> dict[str, Entity]:
    """Labels and aliases in ``languages``, Wikipedia sitelinks, P131 and P17 (``wdt:``, the
    best rank) of ``qids`` from a SPARQL endpoint, ``batch`` items a query."""
    from SPARQLWrapper import JSON, SPARQLWrapper
    from SPARQLWrapper.SPARQLExceptions import SPARQLWrapperException

    client = SPARQLWrapper(endpoint, agent=user_agent)
    client.setReturnFormat(JSON)
    entities = {q: Entity(q) for q in qids}
    langs = ", ".join(f'"{lang}"' for lang in languages)
    for start in range(0, len(qids), batch):
        items = " ".join(f"wd:{q}" for q in qids[start : start + batch])
        client.setQuery(_PREFIXES + _QUERY.format(items=items, languages=langs))
        try:
            rows = client.queryAndConvert()["results"]["bindings"]
        except (SPARQLWrapperException, OSError, KeyError, ValueError) as exc:
            raise WikioriginError(f"{endpoint}: SPARQL query for items {start + 1}.. failed: {exc}") from None
        for row in rows:
            qid = row["item"]["value"].rsplit("/", 1)[-1]
            kind, lang, value = row["kind"]["value"], row["lang"]["value"], row["value"]["value"]
            entity = entities.setdefault(qid, Entity(qid))
            if kind == "label":
                entity.labels[lang] = value
            elif kind == "alias":
                entity.aliases.setdefault(lang, []).append(value)
            elif kind in ("P131", "P17"):
                target = entity.located_in if kind == "P131" else entity.country
                if value.rsplit("/", 1)[-1] not in target:
                    target.append(value.rsplit("/", 1)[-1])
            elif (site := _site_dbname(lang)) is not None:
                entity.sitelinks[site] = value
    return entities
