"""Regions from Wikidata: P131 followed up to the country's first-level division, from the JSON
dump (a pass per level) and from SPARQL (a query per level), into the origin corpus and on to
a multiple-choice set with the ``origin`` labels."""

import json

import pyarrow.parquet as pq
import pytest

from tests.corpora.test_origin import _items
from tests.sparql_server import SparqlEndpoint
from wikiorigin.corpora.origin import build_origin_corpus
from wikiorigin.corpora.regions import first_level_division, resolve_regions
from wikiorigin.dumps.pages import Multistream
from wikiorigin.dumps.wikidata import Entity, entity_from_json, read_entities
from wikiorigin.testing.wikidata import entity_json, write_wikidata_json


def E(qid, located_in=(), country=(), **labels):
    return Entity(qid, labels=labels, located_in=list(located_in), country=list(country))


# A town in a district of a prefecture of Japan; Japan is its own country (as every state).
WORLD = {e.qid: e for e in [
    E("Q10", ["Q11"], ["Q17"], en="a shrine"), E("Q11", ["Q12"], ["Q17"], en="a town"),
    E("Q12", ["Q13"], ["Q17"], en="a district"), E("Q13", ["Q17"], ["Q17"], en="Hokkaido", ja="北海道"),
    E("Q17", [], ["Q17"], en="Japan"),
]}


@pytest.mark.parametrize("entities, expected", [
    (WORLD, "Q13"),
    ({**WORLD, "Q10": E("Q10", ["Q17"], ["Q17"])}, None),  # located in the country itself: nationwide
    ({**WORLD, "Q10": E("Q10", [], ["Q17"])}, None),  # no P131 at all
    ({**WORLD, "Q10": E("Q10", ["Q11"], [])}, "Q13"),  # no P17 of its own: the ancestors' country
    ({**WORLD, "Q17": E("Q17", [], [])}, "Q13"),  # a country Wikidata gives no P17: still the item's P17
    ({**WORLD, "Q12": E("Q12", ["Q11"], ["Q17"])}, None),  # a cycle
    ({k: v for k, v in WORLD.items() if k != "Q12"}, None),  # a parent missing: no guess
    ({**WORLD, "Q10": E("Q10", ["Q13"], ["Q17"])}, "Q13"),  # directly in the division
])
def test_first_level_division(entities, expected):
    assert first_level_division("Q10", entities) == expected


def test_resolve_regions_fetches_level_by_level():
    asked = []

    def fetch(qids):
        asked.append(sorted(qids))
        return {q: WORLD[q] for q in qids if q in WORLD}

    regions = resolve_regions({"Q10": WORLD["Q10"], "Q99": E("Q99", ["Q17"], ["Q17"])}, fetch, ["ja", "en"])
    assert asked == [["Q11"], ["Q12"], ["Q13"]]  # Q17 is the country: never fetched
    assert regions["Q10"].qid == "Q13" and regions["Q10"].label == "北海道" and regions["Q99"] is None


def test_best_rank_first_and_deprecated_left_out():
    line = entity_json("Q1", {"en": "x"}, claims={"P131": [("Q5", "deprecated"), "Q6", ("Q7", "preferred")],
                                                  "P17": ["Q17"]})
    entity = entity_from_json(json.loads(line))
    assert entity.located_in == ["Q7", "Q6"] and entity.country == ["Q17"]


ITEMS = [("Q1", "jawiki", 56, "地理"), ("Q8", "jawiki", 272, "個人")]


def _lines():
    return [
        entity_json("Q1", {"ja": "地理", "en": "geography"}, sitelinks={"jawiki": "地理"},
                    claims={"P131": ["Q1001"], "P17": ["Q17"]}),
        entity_json("Q8", {"ja": "個人", "en": "individual"}, claims={"P131": ["Q17"], "P17": ["Q17"]}),
        entity_json("Q1001", {"ja": "札幌市", "en": "Sapporo"}, claims={"P131": ["Q1002"], "P17": ["Q17"]}),
        entity_json("Q1002", {"ja": "北海道", "en": "Hokkaido"},
                    claims={"P131": [("Q17", "preferred")], "P17": ["Q17"]}),
        entity_json("Q17", {"ja": "日本", "en": "Japan"}, claims={"P17": ["Q17"]}),
    ]


def test_regions_in_the_origin_corpus_offline_and_online(ja_multistream, tmp_path):
    items = tmp_path / "items.parquet"
    _items(items, ITEMS)
    wikidata = write_wikidata_json(tmp_path / "tree", _lines())
    dump = Multistream(*ja_multistream[:2])
    report = build_origin_corpus(items, dump, tmp_path / "offline.parquet", wikidata=wikidata)
    offline = {r["qid"]: r for r in pq.read_table(tmp_path / "offline.parquet").to_pylist()}
    assert (offline["Q1"]["region"], offline["Q1"]["region_qid"]) == ("北海道", "Q1002")
    assert offline["Q8"]["region"] is None  # located in Japan itself
    assert report.with_region == 1 and report.region_fetches == 2  # Sapporo, then Hokkaido

    entities = {e.qid: json.loads(line) for e, line in
                ((entity_from_json(json.loads(line)), line) for line in _lines())}
    with SparqlEndpoint(entities) as endpoint:
        report = build_origin_corpus(items, dump, tmp_path / "online.parquet", sparql=endpoint.url)
        assert len(endpoint.log) == 3 and "wdt:P131" in endpoint.log[0]
    online = {r["qid"]: r for r in pq.read_table(tmp_path / "online.parquet").to_pylist()}
    assert {q: (r["region"], r["region_qid"]) for q, r in online.items()} == \
        {q: (r["region"], r["region_qid"]) for q, r in offline.items()}
    assert report.with_region == 1 and [e.qid for e in read_entities(wikidata, ["Q17"])] == ["Q17"]


def test_mcq_set_with_wikidata_regions(ja_multistream, tmp_path):
    from tests.openai_server import ChatServer
    from wikiorigin.builders.mcq import MCQConfig, build_mcq
    from wikiorigin.llm import LLMClient, OpenAIBackend, RequestCache

    items = tmp_path / "items.parquet"
    _items(items, ITEMS)
    corpus = tmp_path / "articles.parquet"
    build_origin_corpus(items, Multistream(*ja_multistream[:2]), corpus,
                        wikidata=write_wikidata_json(tmp_path / "tree", _lines()))
    systems = []

    def answer(messages):
        system = messages[0]["content"]
        systems.append(system)
        task = system.splitlines()[0].removeprefix("task: ")
        return json.dumps({"generate": {"questions": [{"question": "問い", "choices": ["甲", "乙", "丙", "丁"],
                                                        "answer": "乙"}]},
                           "check": {"answer_index": 1}, "attribute": {"refs": [1]},
                           "label": {"type": "places", "region": "関東"}}[task], ensure_ascii=False)

    with ChatServer(answer=answer) as server:
        client = LLMClient(OpenAIBackend("gen", base_url=server.url), RequestCache(tmp_path / "c.sqlite"),
                           concurrency=2, backoff=0.01)
        report = build_mcq(corpus, tmp_path / "mcq.parquet", client,
                           config=MCQConfig(labels="origin", keep_unreferenced=True))
    rows = {r["qid"]: r for r in pq.read_table(tmp_path / "mcq.parquet").to_pylist()}
    assert report.kept == 2 and rows["Q1"]["region"] == "北海道" and rows["Q8"]["region"] is None
    assert {r["type"] for r in rows.values()} == {"places"} and {r["language"] for r in rows.values()} == {"ja"}
    label = next(s for s in systems if s.startswith("task: label"))
    assert "region" not in label and "places: a place" in label  # type only, with the classes' glosses
