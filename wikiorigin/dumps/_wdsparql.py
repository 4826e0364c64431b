"""Wikidata items from a SPARQL endpoint (part of :mod:`wikiorigin.dumps.wikidata`, which
re-exports :func:`query_entities`): labels, aliases, sitelinks, and P131 and P17 by the same
best-rank rule as the dump is read."""

from __future__ import annotations

import re

from ..errors import UnknownWikiError, WikioriginError
from ..languages import lookup
from ._wdjson import Entity, best_rank

__all__ = ["query_entities"]

_STATEMENTS = """{{ ?item p:PROP ?st . ?st ps:PROP ?value ; wikibase:rank ?rank .
          FILTER(?rank != wikibase:DeprecatedRank) FILTER NOT EXISTS {{ ?st pq:P582 ?end }}
          BIND("PROP" AS ?kind) BIND(STR(?rank) AS ?lang) }}"""
# P131 and P17 as the dump is read: every current statement with its rank (?lang carries it),
# the best rank chosen by best_rank; the rows sorted, so that a run is the same as the last.
_QUERY = (
    """SELECT ?item ?kind ?lang ?value WHERE {{
  VALUES ?item {{ {items} }}
  {{ ?item rdfs:label ?value . BIND("label" AS ?kind) BIND(LANG(?value) AS ?lang) }}
  UNION {{ ?item skos:altLabel ?value . BIND("alias" AS ?kind) BIND(LANG(?value) AS ?lang) }}
  UNION {{ ?article schema:about ?item ; schema:isPartOf ?site ; schema:name ?value .
          ?site wikibase:wikiGroup "wikipedia" .
          BIND("sitelink" AS ?kind) BIND(STR(?site) AS ?lang) }}
  UNION """
    + _STATEMENTS.replace("PROP", "P131")
    + """
  UNION """
    + _STATEMENTS.replace("PROP", "P17")
    + """
  FILTER(?kind = "sitelink" || ?kind = "P131" || ?kind = "P17" || LANG(?value) IN ({languages}))
}} ORDER BY ?item ?kind ?lang ?value"""
)
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


def query_entities(
    endpoint: str,
    qids: list[str],
    languages: list[str],
    batch: int = 200,
    user_agent: str = "wikiorigin (SPARQL; research)",
) -> dict[str, Entity]:
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
            answer = client.queryAndConvert()
            rows = answer["results"]["bindings"] if isinstance(answer, dict) else None
        except (SPARQLWrapperException, OSError, KeyError, ValueError) as exc:
            raise WikioriginError(f"{endpoint}: SPARQL query for items {start + 1}.. failed: {exc}") from None
        if not isinstance(rows, list):
            raise WikioriginError(f"{endpoint}: SPARQL query for items {start + 1}..: no JSON result rows")
        _read_rows(rows, entities, statements)
    for (qid, prop), found in statements.items():
        setattr(entities[qid], "located_in" if prop == "P131" else "country", best_rank(found))
    return entities
