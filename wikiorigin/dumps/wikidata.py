"""Labels, aliases, sitelinks and place of Wikidata items: from the JSON dump, or from a SPARQL
endpoint. The place is what the items' regions are derived from: "located in the administrative
territorial entity" (P131) and "country" (P17), their current best-rank values only, read by
one rule from either source (:func:`best_rank`): deprecated statements never count; a
statement with an "end time" (P582) qualifier, known or unknown, is historical and left out
(an explicit "no value" end time is not one); of the rest, the preferred statements if there
are any, else the normal ones; values that are no item (``somevalue``, ``novalue``) left out.
The values are sorted by qid: their order in the dump, or a SPARQL endpoint's row order, means
nothing and never changes a result.

The JSON dump (``wikidata-<date>-all.json.gz``) is one entity per line between ``[`` and
``]``, each line ending with a comma. :func:`read_entities` streams it and, when given the
QIDs wanted, reads each line's ``"id"`` with a regex on its first bytes and parses only the
wanted lines: most of the dump is never parsed. A line that is not JSON is counted and
reported with its line number, never fatal. An entity on several lines (a dump concatenated
or repeated in part) is read from its first line only: the others are counted and reported
once (how many, the first repeated id and its line), so that the result never depends on
which copy came last.

:func:`query_entities` asks a SPARQL endpoint (Wikidata's, or any that speaks the protocol)
in batches of ``VALUES``, with SPARQLWrapper.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from ..errors import UnknownWikiError, WikioriginError
from ..languages import lookup
from .compression import open_dump

__all__ = ["Entity", "EntityStats", "read_entities", "query_entities", "entity_from_json", "item_claims",
           "best_rank"]

_ID = re.compile(rb'"id"\s*:\s*"([QPL][0-9]+)"')
_PREFIX = 400  # the id stands near the start of a line in every dump version


@dataclass(slots=True)
class Entity:
    """A Wikidata item as the corpora need it: its ``qid``, ``labels`` and ``aliases`` by
    language, ``sitelinks`` (dbname -> page title), the items it is ``located_in`` (P131) and
    its ``country`` (P17): current best-rank values, sorted by qid (see the module's rule)."""

    qid: str
    labels: dict[str, str] = field(default_factory=dict)
    aliases: dict[str, list[str]] = field(default_factory=dict)
    sitelinks: dict[str, str] = field(default_factory=dict)
    located_in: list[str] = field(default_factory=list)
    country: list[str] = field(default_factory=list)


@dataclass(slots=True)
class EntityStats:
    """What a read of a Wikidata JSON dump saw: lines read, entities parsed, entities wanted and
    found, lines that were not JSON, lines repeating an entity already read, and notes."""

    lines: int = 0
    parsed: int = 0
    found: int = 0
    bad_lines: int = 0
    duplicates: int = 0  # lines of an entity already read (the first line of each is kept)
    first_duplicate: str | None = None  # the first of them: "Q8 on line 9"
    notes: list[str] = field(default_factory=list)


def _qid_order(qid: str) -> tuple[int, str]:
    return (int(qid[1:]), qid) if qid[1:].isdigit() else (1 << 62, qid)


def best_rank(statements: Iterable[tuple[str, str]]) -> list[str]:
    """The best-rank values of current statements given as ``(qid, rank)`` (rank ``preferred``,
    ``normal`` or ``deprecated``; historical ones already left out): the preferred ones if any,
    else the normal ones, each once, sorted by qid. Both readers (dump and SPARQL) use it."""
    found: dict[str, set[str]] = {"preferred": set(), "normal": set()}
    for qid, rank in statements:
        if rank in found:
            found[rank].add(qid)
    return sorted(found["preferred"] or found["normal"], key=_qid_order)


def _ended(claim: dict) -> bool:
    """Whether a statement has an end time (P582) with a value or an unknown value."""
    snaks = (claim.get("qualifiers") or {}).get("P582") or []
    return any((snak or {}).get("snaktype", "value") != "novalue" for snak in snaks)


def item_claims(data: dict, prop: str) -> list[str]:
    """The items a JSON entity's current best-rank statements of ``prop`` point at (see the
    module's rule: no deprecated or ended statement; preferred if any, else normal; sorted)."""
    current = []
    for claim in (data.get("claims") or {}).get(prop) or []:
        snak = claim.get("mainsnak") or {}
        value = (snak.get("datavalue") or {}).get("value")
        if snak.get("snaktype", "value") != "value" or not isinstance(value, dict) or _ended(claim):
            continue
        qid = value.get("id") or (f"Q{value['numeric-id']}" if "numeric-id" in value else None)
        if qid:
            current.append((qid, claim.get("rank", "normal")))
    return best_rank(current)


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


def _fresh(qid: bytes, wanted: set[bytes] | None, seen: set[bytes], stats: EntityStats, number: int) -> bool:
    """Whether the line ``number`` of entity ``qid`` is to be read: wanted (all are, without
    ``wanted``) and not read before; a repeat is counted, the first one named."""
    if wanted is not None and qid not in wanted:
        return False
    if qid in seen:
        stats.duplicates += 1
        stats.first_duplicate = stats.first_duplicate or f"{qid.decode()} on line {number}"
        return False
    return True


def read_entities(path, qids: Iterable[str] | None = None, stats: EntityStats | None = None) -> Iterator[Entity]:
    """The entities of a Wikidata JSON dump (only ``qids`` when given), each once: from its
    first line (later lines of the same id are counted in ``stats.duplicates`` and noted once
    the dump has been read to its end). The ids read are kept to tell repeats: with ``qids``
    at most those, without them every id of the dump."""
    wanted = None if qids is None else {q.encode() for q in qids}
    stats = stats if stats is not None else EntityStats()
    seen: set[bytes] = set()
    for number, line in enumerate(_lines(path), 1):
        line = line.strip()
        if line in (b"[", b"]", b""):
            continue
        stats.lines += 1
        found = _ID.search(line, 0, _PREFIX)
        if found is not None and not _fresh(found.group(1), wanted, seen, stats, number):
            continue
        try:
            data = json.loads(line.rstrip(b","))
            qid = data["id"].encode()
            if (found is None or found.group(1) != qid) and not _fresh(qid, wanted, seen, stats, number):
                stats.parsed += 1  # an id the regex did not see: its claims are never read
                continue
            entity = entity_from_json(data)
        except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
            stats.bad_lines += 1
            if len(stats.notes) < 20:
                stats.notes.append(f"{path}: line {number}: not an entity in JSON ({exc}): {line[:60]!r}")
            continue
        seen.add(qid)
        stats.parsed += 1
        stats.found += 1
        yield entity
    if stats.duplicates:
        stats.notes.append(f"{path}: {stats.duplicates} lines repeat an entity already read (the first: "
                           f"{stats.first_duplicate}); each entity was read from its first line")


_STATEMENTS = """{{ ?item p:PROP ?st . ?st ps:PROP ?value ; wikibase:rank ?rank .
          FILTER(?rank != wikibase:DeprecatedRank) FILTER NOT EXISTS {{ ?st pq:P582 ?end }}
          BIND("PROP" AS ?kind) BIND(STR(?rank) AS ?lang) }}"""
# P131 and P17 as the dump is read: every current statement with its rank (?lang carries it),
# the best rank chosen by best_rank; the rows sorted, so that a run is the same as the last.
_QUERY = """SELECT ?item ?kind ?lang ?value WHERE {{
  VALUES ?item {{ {items} }}
  {{ ?item rdfs:label ?value . BIND("label" AS ?kind) BIND(LANG(?value) AS ?lang) }}
  UNION {{ ?item skos:altLabel ?value . BIND("alias" AS ?kind) BIND(LANG(?value) AS ?lang) }}
  UNION {{ ?article schema:about ?item ; schema:isPartOf ?site ; schema:name ?value .
          ?site wikibase:wikiGroup "wikipedia" .
          BIND("sitelink" AS ?kind) BIND(STR(?site) AS ?lang) }}
  UNION """ + _STATEMENTS.replace("PROP", "P131") + """
  UNION """ + _STATEMENTS.replace("PROP", "P17") + """
  FILTER(?kind = "sitelink" || ?kind = "P131" || ?kind = "P17" || LANG(?value) IN ({languages}))
}} ORDER BY ?item ?kind ?lang ?value"""
_RANKS = {"http://wikiba.se/ontology#PreferredRank": "preferred", "http://wikiba.se/ontology#NormalRank": "normal"}
_ITEM = re.compile(r"http://www\.wikidata\.org/entity/(Q[0-9]+)")
_PREFIXES = """PREFIX wd: <http://www.wikidata.org/entity/>
PREFIX p: <http://www.wikidata.org/prop/>
PREFIX ps: <http://www.wikidata.org/prop/statement/>
PREFIX pq: <http://www.wikidata.org/prop/qualifier/>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
PREFIX skos: <http://www.w3.org/2004/02/skos/core#>
PREFIX schema: <http://schema.org/>
PREFIX wikibase: <http://wikiba.se/ontology#>
"""


def _site_dbname(site_url: str) -> str | None:
    """``https://ja.wikipedia.org/`` -> ``jawiki`` (the sitelink key of the JSON dump)."""
    try:
        return lookup(site_url.split("//", 1)[-1].split("/", 1)[0]).dbname
    except UnknownWikiError:
        return None  # a site the registry does not know: not needed here


def _read_rows(rows: list[dict], entities: dict[str, Entity], statements: dict) -> None:
    """One query's rows into ``entities``; P131 and P17 rows as ``(qid, rank)`` into
    ``statements[(item, prop)]``, for :func:`best_rank` once every row is in."""
    for row in rows:
        qid = row["item"]["value"].rsplit("/", 1)[-1]
        kind, lang, value = row["kind"]["value"], row["lang"]["value"], row["value"]["value"]
        entity = entities.setdefault(qid, Entity(qid))
        if kind == "label":
            entity.labels[lang] = value
        elif kind == "alias":
            entity.aliases.setdefault(lang, []).append(value)
        elif kind in ("P131", "P17"):
            target = _ITEM.fullmatch(value)  # an unknown value is a blank node or a genid IRI
            if target is not None and lang in _RANKS:
                statements.setdefault((qid, kind), []).append((target.group(1), _RANKS[lang]))
        elif (site := _site_dbname(lang)) is not None:
            entity.sitelinks[site] = value


def query_entities(endpoint: str, qids: list[str], languages: list[str], batch: int = 200,
                   user_agent: str = "wikiorigin (SPARQL; research)") -> dict[str, Entity]:
    """Labels and aliases in ``languages``, Wikipedia sitelinks, P131 and P17 (current
    statements, the best rank: the module's rule, as the dump is read) of ``qids`` from a
    SPARQL endpoint, ``batch`` items a query, the rows in a fixed order."""
    from SPARQLWrapper import JSON, SPARQLWrapper
    from SPARQLWrapper.SPARQLExceptions import SPARQLWrapperException

    client = SPARQLWrapper(endpoint, agent=user_agent)
    client.setReturnFormat(JSON)
    entities = {q: Entity(q) for q in qids}
    statements: dict[tuple[str, str], list[tuple[str, str]]] = {}
    langs = ", ".join(f'"{lang}"' for lang in languages)
    for start in range(0, len(qids), batch):
        items = " ".join(f"wd:{q}" for q in qids[start : start + batch])
        client.setQuery(_PREFIXES + _QUERY.format(items=items, languages=langs))
        try:
            rows = client.queryAndConvert()["results"]["bindings"]
        except (SPARQLWrapperException, OSError, KeyError, ValueError) as exc:
            raise WikioriginError(f"{endpoint}: SPARQL query for items {start + 1}.. failed: {exc}") from None
        _read_rows(rows, entities, statements)
    for (qid, prop), found in statements.items():
        setattr(entities[qid], "located_in" if prop == "P131" else "country", best_rank(found))
    return entities
