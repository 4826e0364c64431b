"""A SPARQL-protocol endpoint on loopback that answers wikiorigin's queries from Wikidata JSON
entities (enough of the protocol for SPARQLWrapper).

The entities become RDF as Wikidata's query service maps them (labels, aliases, sitelinks;
each statement a node with ``ps:`` value, ``wikibase:rank`` and ``pq:`` qualifiers; an unknown
value a blank node, "no value" no triple at all), and the query itself is run on them with
rdflib: what the endpoint answers is what the query asks, not a copy of the reader's rules.
With ``seed``, the rows are shuffled (an endpoint gives them in no fixed order unless asked).
"""

from __future__ import annotations

import json
import random
import threading
import urllib.parse
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from rdflib import BNode, Graph, Literal, Namespace, URIRef
from rdflib.namespace import RDFS, SKOS, XSD

from wikiorigin.errors import UnknownWikiError
from wikiorigin.languages import registry

WD = Namespace("http://www.wikidata.org/entity/")
WDS = Namespace("http://www.wikidata.org/entity/statement/")
P = Namespace("http://www.wikidata.org/prop/")
PS = Namespace("http://www.wikidata.org/prop/statement/")
PQ = Namespace("http://www.wikidata.org/prop/qualifier/")
WIKIBASE = Namespace("http://wikiba.se/ontology#")
SCHEMA = Namespace("http://schema.org/")
RANKS = {"preferred": WIKIBASE.PreferredRank, "normal": WIKIBASE.NormalRank, "deprecated": WIKIBASE.DeprecatedRank}


def _value(snak: dict):
    """A snak's RDF value: an item, a time, another literal; a blank node for an unknown value;
    None for "no value" (which the query service writes as a class, not a triple)."""
    kind = snak.get("snaktype", "value")
    if kind != "value":
        return BNode() if kind == "somevalue" else None
    value = snak["datavalue"]["value"]
    if isinstance(value, dict) and "id" in value:
        return WD[value["id"]]
    if isinstance(value, dict) and "time" in value:
        return Literal(value["time"].lstrip("+"), datatype=XSD.dateTime)
    return Literal(str(value))


def _statements(graph: Graph, qid: str, claims: dict) -> None:
    for prop, statements in claims.items():
        for number, claim in enumerate(statements):
            node = WDS[f"{qid}-{prop}-{number}"]
            graph.add((WD[qid], P[prop], node))
            graph.add((node, WIKIBASE.rank, RANKS[claim.get("rank", "normal")]))
            if (value := _value(claim["mainsnak"])) is not None:
                graph.add((node, PS[prop], value))
            for qualifier, snaks in (claim.get("qualifiers") or {}).items():
                for snak in snaks:
                    if (value := _value(snak)) is not None:
                        graph.add((node, PQ[qualifier], value))


def entity_graph(entities: dict) -> Graph:
    """The RDF of Wikidata JSON entities, as the query service has it (what the queries use)."""
    graph = Graph()
    for qid, e in entities.items():
        for lang, label in (e.get("labels") or {}).items():
            graph.add((WD[qid], RDFS.label, Literal(label["value"], lang=lang)))
        for lang, aliases in (e.get("aliases") or {}).items():
            for alias in aliases:
                graph.add((WD[qid], SKOS.altLabel, Literal(alias["value"], lang=lang)))
        for site, link in (e.get("sitelinks") or {}).items():
            try:
                wiki = registry().lookup(site)
            except UnknownWikiError:
                continue
            if wiki.dbname != site:  # not a Wikipedia: the queries ask for Wikipedia's only
                continue
            article = URIRef(f"https://{wiki.domain}/wiki/{urllib.parse.quote(link['title'])}")
            graph.add((article, SCHEMA.about, WD[qid]))
            graph.add((article, SCHEMA.isPartOf, URIRef(f"https://{wiki.domain}/")))
            graph.add((article, SCHEMA.name, Literal(link["title"], lang=wiki.language)))
            graph.add((URIRef(f"https://{wiki.domain}/"), WIKIBASE.wikiGroup, Literal("wikipedia")))
        _statements(graph, qid, e.get("claims") or {})
    return graph


def _term(term) -> dict:
    if isinstance(term, URIRef):
        return {"type": "uri", "value": str(term)}
    if isinstance(term, BNode):
        return {"type": "bnode", "value": str(term)}
    out = {"type": "literal", "value": str(term)}
    if term.language:
        out["xml:lang"] = term.language
    return out


def answer(query: str, graph: Graph, seed: int | None = None) -> dict:
    """The SPARQL JSON results of ``query`` on ``graph`` (rows shuffled with ``seed``)."""
    result = graph.query(query)
    names = [str(v) for v in result.vars]
    rows = [{n: _term(row[i]) for i, n in enumerate(names) if row[i] is not None} for row in result]
    if seed is not None:
        random.Random(seed).shuffle(rows)
    return {"head": {"vars": names}, "results": {"bindings": rows}}


class Handler(BaseHTTPRequestHandler):
    def __init__(self, *args, endpoint, **kw):
        self.endpoint = endpoint
        super().__init__(*args, **kw)

    def log_message(self, *args):
        pass

    def _answer(self, params: dict):
        query = params.get("query", [""])[0]
        endpoint = self.endpoint
        endpoint.log.append(query)
        if "SELECT" not in query:
            return self.send_error(400, "no query")
        seed = None if endpoint.seed is None else endpoint.seed + len(endpoint.log)
        with endpoint.lock:
            body = json.dumps(answer(query, endpoint.graph, seed)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/sparql-results+json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self._answer(urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query))

    def do_POST(self):
        data = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
        self._answer(urllib.parse.parse_qs(data))


class SparqlEndpoint:
    """``with SparqlEndpoint(entities) as e: e.url``; ``e.log``: the queries asked."""

    def __init__(self, entities: dict, seed: int | None = None):
        self.entities, self.seed, self.log = entities, seed, []
        self.graph, self.lock = entity_graph(entities), threading.Lock()

    def __enter__(self):
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Handler, endpoint=self))
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/sparql"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
