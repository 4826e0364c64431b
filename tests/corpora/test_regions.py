"""Regions from Wikidata: P131 followed up to the country's first-level division, from the JSON
dump (one pass, its places' table looked up a level at a time) and from SPARQL (a query per
level), into the origin corpus and on to a multiple-choice set with the ``origin`` labels. The
rule on realistic chains, ranks and end times, dump against SPARQL:
tests/corpora/test_region_rules.py; the one pass against the passes per level:
tests/corpora/test_entities.py."""

import json

import pyarrow.parquet as pq
import pytest

from tests.corpora.test_origin import _items
from tests.sparql_server import SparqlEndpoint
from wikiorigin.corpora.origin import build_origin_corpus
from wikiorigin.corpora.regions import MAX_HOPS, first_level_division, read_region, resolve_regions
from wikiorigin.dumps.pages import Multistream
from wikiorigin.dumps.wikidata import Entity, entity_from_json, read_entities
from wikiorigin.testing.wikidata import entity_json, write_wikidata_json


def E(qid, located_in=(), country=(), **labels):
    return Entity(qid, labels=labels, located_in=list(located_in), country=list(country))


# A town in a district of a prefecture of Japan; Japan is its own country (as every state).
WORLD = {
    e.qid: e
    for e in [
        E("Q10", ["Q11"], ["Q17"], en="a shrine"),
        E("Q11", ["Q12"], ["Q17"], en="a town"),
        E("Q12", ["Q13"], ["Q17"], en="a district"),
        E("Q13", ["Q17"], ["Q17"], en="Hokkaido", ja="北海道"),
        E("Q17", [], ["Q17"], en="Japan"),
    ]
}


@pytest.mark.parametrize(
    "entities, expected",
    [
        (WORLD, "Q13"),
        ({**WORLD, "Q10": E("Q10", ["Q17"], ["Q17"])}, None),  # located in the country itself: nationwide
        ({**WORLD, "Q10": E("Q10", [], ["Q17"])}, None),  # no P131 at all
        ({**WORLD, "Q10": E("Q10", ["Q11"], [])}, "Q13"),  # no P17 of its own: the ancestors' country
        ({**WORLD, "Q17": E("Q17", [], [])}, "Q13"),  # a country Wikidata gives no P17: still the item's P17
        ({**WORLD, "Q12": E("Q12", ["Q11"], ["Q17"])}, None),  # a cycle
        ({k: v for k, v in WORLD.items() if k != "Q12"}, None),  # a parent missing: no guess
        ({**WORLD, "Q10": E("Q10", ["Q13"], ["Q17"])}, "Q13"),  # directly in the division
        ({**WORLD, "Q10": E("Q10", ["Q11", "Q17"], ["Q17"])}, "Q13"),  # and in the country: adds nothing
        ({**WORLD, "Q10": E("Q10", ["Q11", "Q12"], ["Q17"])}, "Q13"),  # two values, one division
        ({**WORLD, "Q10": E("Q10", ["Q11", "Q14"], ["Q17"]), "Q14": E("Q14", ["Q17"], ["Q17"])}, None),  # two
        ({**WORLD, "Q10": E("Q10", ["Q11", "Q15"], ["Q17"]), "Q15": E("Q15", [], [])}, None),  # one breaks off
        ({**WORLD, "Q12": E("Q12", ["Q13", "Q11"], ["Q17"])}, None),  # a cycle beside the way up
        # the reviewer's case: a chain into a former state is not the item's country (JP)
        (
            {
                **WORLD,
                "Q10": E("Q10", ["Q20"], ["Q17"]),
                "Q20": E("Q20", ["Q21"], ["Q22"]),
                "Q21": E("Q21", ["Q22"], ["Q22"]),
                "Q22": E("Q22", [], ["Q22"]),
            },
            None,
        ),
        # without a P17 of its own, the ancestors' country (or a state) still ends the chain
        (
            {
                **WORLD,
                "Q10": E("Q10", ["Q20"], []),
                "Q20": E("Q20", ["Q21"], ["Q22"]),
                "Q21": E("Q21", ["Q22"], ["Q22"]),
                "Q22": E("Q22", [], ["Q22"]),
            },
            "Q21",
        ),
    ],
)
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


def test_the_readings_say_why():
    several = {**WORLD, "Q10": E("Q10", ["Q11", "Q14"], ["Q17"]), "Q14": E("Q14", ["Q17"], ["Q17"])}
    reading = read_region("Q10", several)
    assert (reading.outcome, reading.divisions, reading.division) == ("several", ("Q13", "Q14"), None)
    assert read_region("Q10", WORLD).outcome == "region" and read_region("Q13", WORLD).outcome == "country"
    assert read_region("Q17", WORLD).outcome == "none"
    assert read_region("Q10", {k: v for k, v in WORLD.items() if k != "Q12"}).outcome == "broken"


@pytest.mark.parametrize("hops, expected", [(MAX_HOPS, "Q112"), (MAX_HOPS + 1, None)])
def test_max_hops(hops, expected):
    chain = [f"Q{100 + i}" for i in range(hops + 1)]  # the item, then its hops up
    entities = {q: E(q, [up], ["Q17"]) for q, up in zip(chain, chain[1:] + ["Q17"])}
    entities["Q17"] = E("Q17", [], ["Q17"])
    assert first_level_division("Q100", entities) == (chain[-1] if expected else None)


def test_best_rank_current_statements_only():
    line = entity_json(
        "Q1",
        {"en": "x"},
        claims={
            "P131": [("Q5", "deprecated"), "Q6", ("Q7", "preferred"), ("Q8", "preferred", "1950-04-01"), "somevalue"],
            "P17": [("Q188712", "normal", "1947-05-02"), "Q17"],
        },
    )
    entity = entity_from_json(json.loads(line))
    assert entity.located_in == ["Q7"] and entity.country == ["Q17"]  # preferred (current) over normal
    line = entity_json(
        "Q1",
        {"en": "x"},
        claims={"P131": [("Q9", "normal"), ("Q6", "normal", "novalue"), ("Q8", "preferred", "somevalue")]},
    )
    assert entity_from_json(json.loads(line)).located_in == ["Q6", "Q9"]  # sorted; "no end time" is current


ITEMS = [("Q1", "jawiki", 56, "地理"), ("Q8", "jawiki", 272, "個人")]


def _lines():
    return [
        entity_json(
            "Q1",
            {"ja": "地理", "en": "geography"},
            sitelinks={"jawiki": "地理"},
            claims={"P131": ["Q1001"], "P17": ["Q17"]},
        ),
        entity_json("Q8", {"ja": "個人", "en": "individual"}, claims={"P131": ["Q17"], "P17": ["Q17"]}),
        entity_json("Q1001", {"ja": "札幌市", "en": "Sapporo"}, claims={"P131": ["Q1002"], "P17": ["Q17"]}),
        entity_json(
            "Q1002", {"ja": "北海道", "en": "Hokkaido"}, claims={"P131": [("Q17", "preferred")], "P17": ["Q17"]}
        ),
        entity_json("Q17", {"ja": "日本", "en": "Japan"}, claims={"P17": ["Q17"]}),
    ]


@pytest.mark.slow
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

    entities = {
        e.qid: json.loads(line) for e, line in ((entity_from_json(json.loads(line)), line) for line in _lines())
    }
    with SparqlEndpoint(entities) as endpoint:
        report = build_origin_corpus(items, dump, tmp_path / "online.parquet", sparql=endpoint.url)
        assert len(endpoint.log) == 3 and "ps:P131" in endpoint.log[0] and "pq:P582" in endpoint.log[0]
    online = {r["qid"]: r for r in pq.read_table(tmp_path / "online.parquet").to_pylist()}
    assert {q: (r["region"], r["region_qid"]) for q, r in online.items()} == {
        q: (r["region"], r["region_qid"]) for q, r in offline.items()
    }
    assert report.with_region == 1 and [e.qid for e in read_entities(wikidata, ["Q17"])] == ["Q17"]


@pytest.mark.slow
def test_mcq_set_with_wikidata_regions(ja_multistream, tmp_path):
    from tests.openai_server import ChatServer
    from wikiorigin.builders.mcq import MCQConfig, build_mcq
    from wikiorigin.llm import LLMClient, OpenAIBackend, RequestCache

    items = tmp_path / "items.parquet"
    _items(items, ITEMS)
    corpus = tmp_path / "articles.parquet"
    build_origin_corpus(
        items, Multistream(*ja_multistream[:2]), corpus, wikidata=write_wikidata_json(tmp_path / "tree", _lines())
    )
    systems = []

    def answer(messages):
        system = messages[0]["content"]
        systems.append(system)
        task = system.splitlines()[0].removeprefix("task: ")
        article = messages[-1]["content"].splitlines()[0]  # each article its own question (not duplicates)
        return json.dumps(
            {
                "generate": {
                    "questions": [{"question": f"{article}の問い", "choices": ["甲", "乙", "丙", "丁"], "answer": "乙"}]
                },
                "check": {"answer_index": 1},
                "attribute": {"refs": [1]},
                "label": {"type": "places", "region": "関東"},
            }[task],
            ensure_ascii=False,
        )

    with ChatServer(answer=answer) as server:
        client = LLMClient(
            OpenAIBackend("gen", base_url=server.url), RequestCache(tmp_path / "c.sqlite"), concurrency=2, backoff=0.01
        )
        report = build_mcq(
            corpus, tmp_path / "mcq.parquet", client, config=MCQConfig(labels="origin", keep_unreferenced=True)
        )
    rows = {r["qid"]: r for r in pq.read_table(tmp_path / "mcq.parquet").to_pylist()}
    assert report.kept == 2 and rows["Q1"]["region"] == "北海道" and rows["Q8"]["region"] is None
    assert {r["type"] for r in rows.values()} == {"places"} and {r["language"] for r in rows.values()} == {"ja"}
    label = next(s for s in systems if s.startswith("task: label"))
    assert "region" not in label and "places: a place" in label  # type only, with the classes' glosses
