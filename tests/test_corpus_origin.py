import json
from datetime import datetime, timezone

import pyarrow as pa
import pyarrow.parquet as pq

from tests.sparql_server import SparqlEndpoint
from wikiorigin.cli import main
from wikiorigin.corpora.origin import build_origin_corpus
from wikiorigin.dumps.pages import Multistream
from wikiorigin.dumps.wikidata import EntityStats, read_entities
from wikiorigin.schemas import ORIGIN_ARTICLES, ORIGINS

JA = "jawiki-20230501-pages-articles-multistream_first100k-lines.xml.xz"
WD = "wikidata-20151109-five-entities.json"


def _items(path, rows):
    when = datetime(2003, 1, 1, tzinfo=timezone.utc)
    table = pa.Table.from_pylist([{
        "qid": qid, "origin_wiki": wiki, "origin_created_at": when, "origin_title": title,
        "n_wikis": 2, "has_enwiki": True, "runner_up_wiki": "enwiki", "runner_up_created_at": when,
        "lead_days": 1.0, "tied": False,
        "editions": [{"wiki": wiki, "page_id": page_id, "title": title, "created_at": when}],
    } for qid, wiki, page_id, title in rows], schema=ORIGINS)
    pq.write_table(table, path)


ROWS = [("Q1", "jawiki", 56, "地理"), ("Q8", "jawiki", 272, "個人"), ("Q99", "dewiki", 5, "X"),
        ("Q123456", "jawiki", 141, "音楽家")]


def test_entities_from_the_json_dump(data_dir, tmp_path):
    stats = EntityStats()
    found = {e.qid: e for e in read_entities(data_dir / WD, ["Q1", "Q8"], stats)}
    assert set(found) == {"Q1", "Q8"} and stats.parsed == 2 and stats.lines == 5
    assert found["Q1"].labels["en"] == "universe" and found["Q1"].labels["ja"] == "宇宙"
    assert "cosmos" in found["Q1"].aliases["en"] and "jawiki" in found["Q1"].sitelinks
    broken = tmp_path / "broken.json"
    lines = (data_dir / WD).read_text().splitlines()
    broken.write_text("\n".join(lines[:2] + ['{"type":"item","id":"Q8", torn'] + lines[3:]) + "\n")
    stats = EntityStats()
    assert [e.qid for e in read_entities(broken, None, stats)] == ["Q1", "P16", "P19", "P22"]
    assert stats.bad_lines == 1 and stats.notes[0].startswith(f"{broken}: line 3: not an entity in JSON")


def test_origin_corpus_offline_and_online(ja_multistream, data_dir, tmp_path, capsys):
    items = tmp_path / "items.parquet"
    _items(items, ROWS)
    dump = Multistream(*ja_multistream[:2])
    offline = tmp_path / "offline.parquet"
    report = build_origin_corpus(items, dump, offline, wikidata=data_dir / WD)
    assert (report.items, report.other_wiki, report.articles) == (4, 1, 3)
    assert report.missing_entities == ["Q123456"]
    rows = {r["qid"]: r for r in pq.read_table(offline).to_pylist()}
    assert pq.read_schema(offline).remove_metadata() == ORIGIN_ARTICLES
    assert rows["Q1"]["title"] == "地理" and rows["Q1"]["label_en"] == "universe"
    assert rows["Q1"]["aliases"][:2] == ["universe", "宇宙"] and "cosmos" in rows["Q1"]["aliases"]
    assert rows["Q1"]["enwiki_title"] == "Universe" and rows["Q8"]["references"]

    entities = {}
    for line in (data_dir / WD).read_text().splitlines():
        line = line.strip().rstrip(",")
        if line not in ("[", "]"):
            e = json.loads(line)
            entities[e["id"]] = e
    with SparqlEndpoint(entities) as endpoint:
        online = tmp_path / "online.parquet"
        assert main(["corpus", "origin", "--items", str(items), "--dump", str(ja_multistream[0]),
                     "--index", str(ja_multistream[1]), "--out", str(online), "--sparql", endpoint.url]) == 0
        assert endpoint.log and "VALUES ?item" in endpoint.log[0]
    assert "3 articles" in capsys.readouterr().out
    online_rows = {r["qid"]: r for r in pq.read_table(online).to_pylist()}
    for qid in ("Q1", "Q8"):
        for key in ("label_en", "enwiki_title", "text"):
            assert online_rows[qid][key] == rows[qid][key]
        assert sorted(online_rows[qid]["aliases"]) == sorted(rows[qid]["aliases"])
