"""A SPARQL-protocol endpoint on loopback that answers wikiorigin's label/alias/sitelink
queries from Wikidata JSON entities (enough of the protocol for SPARQLWrapper)."""

from __future__ import annotations

import json
import re
import threading
import urllib.parse
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from wikiorigin.dumps.wikidata import item_claims
from wikiorigin.errors import UnknownWikiError
from wikiorigin.languages import registry


def _preferred(entity: dict, prop: str) -> int:
    """How many statements of ``prop`` have the preferred rank (``wdt:`` gives only those then)."""
    return sum(c.get("rank") == "preferred" for c in (entity.get("claims") or {}).get(prop) or [])


def _bindings(query: str, entities: dict) -> list[dict]:
    items = re.findall(r"wd:(Q\d+)", query)
    langs = re.findall(r'"([a-z-]+)"', query.split("IN (", 1)[1]) if "IN (" in query else []
    rows = []

    def row(qid, kind, lang, value, lang_tag=None):
        v = {"type": "literal", "value": value}
        if lang_tag:
            v["xml:lang"] = lang_tag
        return {"item": {"type": "uri", "value": f"http://www.wikidata.org/entity/{qid}"},
                "kind": {"type": "literal", "value": kind},
                "lang": {"type": "literal", "value": lang}, "value": v}

    for qid in items:
        e = entities.get(qid)
        if e is None:
            continue
        for lang, label in e["labels"].items():
            if lang in langs:
                rows.append(row(qid, "label", lang, label["value"], lang))
        for lang, aliases in e["aliases"].items():
            if lang in langs:
                rows += [row(qid, "alias", lang, a["value"], lang) for a in aliases]
        if "wdt:P131" in query:  # the best rank, as wdt: gives it
            for prop in ("P131", "P17"):
                targets = item_claims(e, prop)
                for target in targets[:_preferred(e, prop)] or targets:
                    rows.append(row(qid, prop, "", f"http://www.wikidata.org/entity/{target}"))
        for site, link in e.get("sitelinks", {}).items():
            try:
                wiki = registry().lookup(site)
            except UnknownWikiError:
                continue
            if wiki.dbname == site:
                rows.append(row(qid, "sitelink", f"https://{wiki.domain}/", link["title"]))
    return rows


class Handler(BaseHTTPRequestHandler):
    def __init__(self, *args, entities, log, **kw):
        self.entities, self.log = entities, log
        super().__init__(*args, **kw)

    def log_message(self, *args):
        pass

    def _answer(self, params: dict):
        query = params.get("query", [""])[0]
        self.log.append(query)
        if "SELECT" not in query:
            return self.send_error(400, "no query")
        body = json.dumps({"head": {"vars": ["item", "kind", "lang", "value"]},
                           "results": {"bindings": _bindings(query, self.entities)}}).encode()
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
    def __init__(self, entities: dict):
        self.entities, self.log = entities, []

    def __enter__(self):
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Handler, entities=self.entities, log=self.log))
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/sparql"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
