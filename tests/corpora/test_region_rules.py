"""The region rule on realistic Wikidata: multi-level chains in Japan, Korea and Greece, ranks
(preferred, deprecated), end times (P582) on P131 and P17, values in one division or in
several; read from the JSON dump and from a SPARQL endpoint (the real query run by rdflib on
the same entities, rows in random order), which must agree.

Country qids are Wikidata's (Japan Q17, Empire of Japan Q188712, South Korea Q884, Greece
Q41); the others are made up."""

import json

import pytest

from tests.sparql_server import SparqlEndpoint
from wikiorigin.corpora.regions import resolve_regions
from wikiorigin.dumps.wikidata import entity_from_json, query_entities, read_entities
from wikiorigin.testing.wikidata import entity_json, write_wikidata_json

JP, EMPIRE, KR, GR = "Q17", "Q188712", "Q884", "Q41"


def _place(qid, labels, located_in, country=JP):
    return entity_json(
        qid, labels, claims={"P131": located_in, "P17": country if isinstance(country, list) else [country]}
    )


LINES = [
    entity_json(JP, {"ja": "日本", "en": "Japan"}, claims={"P17": [JP]}),
    entity_json(EMPIRE, {"ja": "大日本帝国", "en": "Empire of Japan"}, claims={"P17": [EMPIRE]}),
    entity_json(KR, {"ko": "대한민국", "en": "South Korea"}, claims={"P17": [KR]}),
    entity_json(GR, {"el": "Ελλάδα", "en": "Greece"}, claims={"P17": [GR]}),
    # Japan: temple -> ward -> city -> prefecture -> Japan
    _place("Q900101", {"ja": "京都府", "en": "Kyoto Prefecture"}, [(JP, "preferred")]),
    _place("Q900102", {"ja": "京都市", "en": "Kyoto"}, ["Q900101"]),
    _place("Q900103", {"ja": "北区", "en": "Kita-ku"}, ["Q900102"]),
    _place("Q900104", {"ja": "鹿苑寺", "en": "Kinkaku-ji"}, ["Q900103"]),
    _place("Q900111", {"ja": "静岡県", "en": "Shizuoka Prefecture"}, [JP]),
    _place("Q900112", {"ja": "山梨県", "en": "Yamanashi Prefecture"}, [JP]),
    _place("Q900113", {"ja": "富士宮市", "en": "Fujinomiya"}, ["Q900111"]),
    _place("Q900114", {"ja": "富士吉田市", "en": "Fujiyoshida"}, ["Q900112"]),
    _place("Q900117", {"ja": "富士市", "en": "Fuji"}, ["Q900111"]),
    _place("Q900115", {"ja": "富士山", "en": "Mount Fuji"}, ["Q900113", "Q900114"]),  # two prefectures
    _place("Q900118", {"ja": "潤井川", "en": "Urui River"}, ["Q900117", "Q900113"]),  # two cities, one prefecture
    # a former district (ended) of a province of the Empire of Japan
    _place("Q900121", {"ja": "富士郡", "en": "Fuji District"}, ["Q900123"]),
    _place("Q900123", {"ja": "駿河国", "en": "Suruga Province"}, [EMPIRE], EMPIRE),
    _place("Q900122", {"ja": "上井出村", "en": "Kamiide"}, [("Q900121", "normal", "1958-10-01"), "Q900113"]),
    _place("Q900124", {"ja": "旧村", "en": "an old village"}, ["Q900121"]),  # its only chain: into the empire
    _place("Q900125", {"ja": "北山", "en": "Kitayama"}, ["Q900103"], [(EMPIRE, "normal", "1947-05-02"), JP]),
    _place("Q900126", {"ja": "白糸の滝", "en": "Shiraito Falls"}, [("Q900114", "deprecated"), "Q900113"]),
    _place("Q900127", {"ja": "本栖湖", "en": "Lake Motosu"}, [("Q900114", "preferred"), "Q900113"]),
    _place("Q900128", {"ja": "田貫湖", "en": "Lake Tanuki"}, [("Q900114", "preferred", "2005-03-01"), "Q900113"]),
    _place("Q900129", {"ja": "人穴", "en": "Hitoana"}, ["somevalue", ("Q900113", "normal", "novalue")]),
    _place("Q900130", {"ja": "祭", "en": "a festival"}, [JP]),  # nationwide
    # Korea: temple -> dong -> city -> province -> Korea
    _place("Q900201", {"ko": "경상북도", "en": "North Gyeongsang"}, [KR], KR),
    _place("Q900202", {"ko": "경주시", "en": "Gyeongju"}, ["Q900201"], KR),
    _place("Q900203", {"ko": "진현동", "en": "Jinhyeon-dong"}, ["Q900202"], KR),
    _place("Q900204", {"ko": "불국사", "en": "Bulguksa"}, ["Q900203"], KR),
    # Greece: site -> municipality -> regional unit -> region -> Greece
    _place("Q900301", {"el": "Περιφέρεια Κρήτης", "en": "Crete Region"}, [GR], GR),
    _place("Q900302", {"el": "Περιφερειακή ενότητα Ηρακλείου", "en": "Heraklion"}, ["Q900301"], GR),
    _place("Q900303", {"el": "Δήμος Ηρακλείου", "en": "Heraklion Municipality"}, ["Q900302"], GR),
    _place("Q900304", {"el": "Κνωσός", "en": "Knossos"}, ["Q900303"], GR),
]

EXPECTED = {
    "Q900104": ("Q900101", "region"),
    "Q900204": ("Q900201", "region"),
    "Q900304": ("Q900301", "region"),
    "Q900115": (None, "several"),
    "Q900118": ("Q900111", "region"),
    "Q900122": ("Q900111", "region"),  # the ended district left out
    "Q900124": (None, "broken"),  # Suruga -> Empire of Japan: not its country, and no way on
    "Q900125": ("Q900101", "region"),  # the ended P17 left out
    "Q900126": ("Q900111", "region"),  # the deprecated value left out
    "Q900127": ("Q900112", "region"),  # preferred over normal
    "Q900128": ("Q900111", "region"),  # the preferred one has ended: the normal one is current
    "Q900129": ("Q900111", "region"),  # an unknown value is no item; "no end time" is current
    "Q900130": (None, "country"),
    "Q900101": (None, "country"),
}
ENTITIES = {json.loads(line)["id"]: json.loads(line) for line in LINES}


@pytest.fixture(scope="module")
def dump(tmp_path_factory):
    return write_wikidata_json(tmp_path_factory.mktemp("wikidata"), LINES)


def _resolve(fetch, qids):
    readings = {}
    regions = resolve_regions(fetch(set(qids)), fetch, ["ja", "en"], readings)
    return {q: (None if regions[q] is None else regions[q].qid, readings[q].outcome) for q in qids}


def test_the_rule_on_the_dump(dump):
    asked = []

    def fetch(qids):
        asked.append(len(qids))
        return {e.qid: e for e in read_entities(dump, qids)}

    assert _resolve(fetch, list(EXPECTED)) == EXPECTED
    assert len(asked) == 4  # the items, then the temple's ward, city, prefecture (Japan: never)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_sparql_reads_what_the_dump_reads(dump, seed):
    qids = sorted(ENTITIES)
    offline = {e.qid: e for e in read_entities(dump, qids)}
    with SparqlEndpoint(ENTITIES, seed=seed) as endpoint:
        online = query_entities(endpoint.url, qids, ["en", "ja"], batch=7)
        regions = _resolve(lambda wanted: query_entities(endpoint.url, sorted(wanted), ["en", "ja"]), list(EXPECTED))
    for qid in qids:
        assert (online[qid].located_in, online[qid].country) == (offline[qid].located_in, offline[qid].country)
        assert online[qid].labels == {k: v for k, v in offline[qid].labels.items() if k in ("en", "ja")}
    assert regions == EXPECTED


def test_the_query_asks_for_current_statements_with_their_rank():
    query = []
    with SparqlEndpoint(ENTITIES) as endpoint:
        query_entities(endpoint.url, ["Q900128"], ["en"])
        query = endpoint.log[0]
    assert "p:P131 ?st" in query and "wikibase:rank ?rank" in query and "wdt:" not in query
    assert "FILTER NOT EXISTS { ?st pq:P582 ?end }" in query and "ORDER BY" in query


def test_entities_are_read_the_same_from_json():
    entity = entity_from_json(ENTITIES["Q900128"])
    assert entity.located_in == ["Q900113"] and entity.country == [JP]


@pytest.mark.slow
def test_several_regions_in_the_corpus_report(ja_multistream, tmp_path):
    import pyarrow.parquet as pq

    from tests.corpora.test_origin import _items
    from wikiorigin.corpora.origin import build_origin_corpus
    from wikiorigin.dumps.pages import Multistream

    items = tmp_path / "items.parquet"
    _items(items, [("Q1", "jawiki", 56, "地理")])
    fuji = _place("Q1", {"ja": "地理"}, ["Q900113", "Q900114"])  # as Mount Fuji: two prefectures
    dump = Multistream(*ja_multistream[:2])
    wikidata = write_wikidata_json(tmp_path / "tree", LINES + [fuji])
    with SparqlEndpoint({**ENTITIES, "Q1": json.loads(fuji)}, seed=5) as endpoint:
        for source in ({"wikidata": wikidata}, {"sparql": endpoint.url}):
            out = tmp_path / f"{next(iter(source))}.parquet"
            report = build_origin_corpus(items, dump, out, **source)
            assert report.several_regions == ["Q1: Q900111, Q900112"] and report.with_region == 0
            assert any(n.startswith("1 items lie in several regions") for n in report.notes)
            row = pq.read_table(out).to_pylist()[0]
            assert (row["region"], row["region_qid"]) == (None, None)
            assert '"several_regions": 1' in pq.read_schema(out).metadata[b"wikiorigin"].decode()
