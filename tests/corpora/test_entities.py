"""One pass of the Wikidata dump (issue 22): ``wikidata extract`` and ``corpus origin --entities``
give the rows that the reader before it gave (items read, then a pass of the dump per P131
level), on the bundled sample and on realistic multi-level chains; a place read from its two
statement arrays is the place read from the whole line; an entities file for other items or
languages is refused in one line; a damaged dump keeps what came before."""

import gzip
import json
import shutil

import pyarrow.parquet as pq
import pytest

from tests.corpora.test_origin import ROWS, WD, _items, _run
from tests.corpora.test_region_rules import EXPECTED, LINES, _place
from tests.corpora.test_regions import ITEMS, _lines
from wikiorigin.cli import main
from wikiorigin.corpora.entities import ENTITIES, EntityTable, extract_entities, partial_path
from wikiorigin.corpora.origin import build_origin_corpus, names_of
from wikiorigin.corpora.regions import resolve_regions
from wikiorigin.dumps.pages import Multistream
from wikiorigin.dumps.wikidata import (
    EntityStats,
    _fast_place,
    entity_from_json,
    place_from_json,
    read_entities,
    read_items_and_places,
)
from wikiorigin.errors import DumpError, WikioriginError
from wikiorigin.files import read_provenance
from wikiorigin.testing.wikidata import entity_json, write_wikidata_json


def _before(items, dump, wikidata, languages):
    """The rows' Wikidata columns as the reader before the one pass made them: the items read,
    then a pass of the dump per level of their parents."""
    qids = [r["qid"] for r in pq.read_table(items).to_pylist()]
    entities = {e.qid: e for e in read_entities(wikidata, qids)}
    regions = resolve_regions(
        {q: entities[q] for q in qids if q in entities},
        lambda wanted: {e.qid: e for e in read_entities(wikidata, wanted)},
        [languages[-1], "en"],
    )
    out = {}
    for qid in qids:
        entity, region = entities.get(qid), regions.get(qid)
        out[qid] = (
            None if entity is None else entity.labels.get("en"),
            [] if entity is None else names_of(entity, languages),
            None if entity is None else entity.sitelinks.get("enwiki"),
            None if region is None else region.label,
            None if region is None else region.qid,
        )
    return out


def _wikidata_columns(path):
    return {
        r["qid"]: (r["label_en"], r["aliases"], r["enwiki_title"], r["region"], r["region_qid"])
        for r in pq.read_table(path).to_pylist()
    }


def _three_ways(items, ja_multistream, wikidata, tmp_path):
    """The corpus from --wikidata, from an entities file, and the rows before: all the same."""
    dump = Multistream(*ja_multistream[:2])
    by_pass = build_origin_corpus(items, dump, tmp_path / "pass.parquet", wikidata=wikidata)
    extracted = extract_entities(wikidata, [items], tmp_path / "entities.parquet")
    by_file = build_origin_corpus(items, dump, tmp_path / "file.parquet", entities_file=tmp_path / "entities.parquet")
    rows = pq.read_table(tmp_path / "pass.parquet").to_pylist()
    assert rows == pq.read_table(tmp_path / "file.parquet").to_pylist()  # every column, every row
    before = _before(items, dump, wikidata, ["en", "ja"])
    assert _wikidata_columns(tmp_path / "pass.parquet") == {
        q: before[q] for q in _wikidata_columns(tmp_path / "pass.parquet")
    }
    for report in (by_pass, by_file):
        assert report.region_fetches == by_pass.region_fetches and report.with_region == by_pass.with_region
        assert report.missing_entities == by_pass.missing_entities
    return rows, by_pass, extracted


@pytest.mark.slow
def test_the_bundled_sample_gives_the_rows_it_gave(ja_multistream, data_dir, tmp_path):
    items = tmp_path / "items.parquet"
    _items(items, ROWS)
    rows, report, extracted = _three_ways(items, ja_multistream, data_dir / WD, tmp_path)
    assert len(rows) == 3 and report.missing_entities == ["Q123456"]
    assert (extracted.items, extracted.found, extracted.places, extracted.wikis) == (4, 2, 0, ["dewiki", "jawiki"])
    assert extracted.languages == ["en", "de", "ja"]


def _pages(ja_multistream, n):
    """``n`` articles of the jawiki sample: (page id, title)."""
    dump = Multistream(*ja_multistream[:2])
    pages = dump.get(dump.page_ids()[: 4 * n], follow_redirects=False)
    return [(p.page_id, p.title) for p in pages.values() if p.namespace == 0 and p.redirect is None][:n]


@pytest.mark.slow
def test_a_three_level_chain_gives_the_rows_it_gave(ja_multistream, tmp_path):
    items = tmp_path / "items.parquet"
    _items(items, ITEMS)
    rows, report, _ = _three_ways(items, ja_multistream, write_wikidata_json(tmp_path / "tree", _lines()), tmp_path)
    assert report.region_fetches == 2 and {r["qid"]: r["region_qid"] for r in rows} == {"Q1": "Q1002", "Q8": None}


@pytest.mark.slow
def test_realistic_chains_ranks_and_end_times_give_the_rows_they_gave(ja_multistream, tmp_path):
    """Japan, Korea and Greece, preferred and deprecated ranks, ended statements, two
    prefectures (tests/corpora/test_region_rules.py), as items of jawiki pages; items and
    places shuffled among lines that name P17 only in a qualifier."""
    pages = _pages(ja_multistream, len(EXPECTED))
    items = tmp_path / "items.parquet"
    _items(items, [(qid, "jawiki", page_id, title) for qid, (page_id, title) in zip(EXPECTED, pages)])
    noise = [json.loads(entity_json(f"Q{500 + i}", {"en": f"award {i}"}, claims={"P166": ["Q7"]})) for i in range(5)]
    for entity in noise:
        entity["claims"]["P166"][0]["qualifiers"] = {
            "P17": [
                {
                    "snaktype": "value",
                    "property": "P17",
                    "datavalue": {
                        "value": {"entity-type": "item", "numeric-id": 17, "id": "Q17"},
                        "type": "wikibase-entityid",
                    },
                }
            ]
        }
    lines = [json.dumps(e, ensure_ascii=False, separators=(",", ":")) for e in noise]
    lines = [x for pair in zip(LINES[::-1], lines + [""] * len(LINES)) for x in pair if x]
    rows, report, extracted = _three_ways(
        items, ja_multistream, write_wikidata_json(tmp_path / "tree", lines), tmp_path
    )
    regions = {r["qid"]: r["region_qid"] for r in rows}
    assert regions == {q: EXPECTED[q][0] for q in regions} and len(regions) == len(pages)
    assert report.region_fetches == 3 and extracted.places + extracted.found == len(LINES)  # all places


LAYOUTS = [
    lambda d: json.dumps(d, ensure_ascii=False, separators=(",", ":")),  # the dump's
    lambda d: json.dumps(d),  # spaces, and every character escaped
    lambda d: json.dumps(d, sort_keys=True, separators=(",", ":")),  # statements' keys in another order
    lambda d: json.dumps({k: d[k] for k in reversed(d)}, separators=(",", ":")),  # claims first
]


def _entities_of_every_kind():
    """The test dumps' entities, and places with labels escaped, in another layout, or torn."""
    entities = [json.loads(line) for line in LINES]
    fuji = json.loads(_place("Q1", {"ja": '富士"山\\', "en": "Fuji [x] {y}"}, ["Q900113", "Q900114"]))
    fuji["descriptions"] = {"ja": {"language": "ja", "value": '山 "ja":{'}}
    fuji["aliases"] = {"en": [{"language": "en", "value": 'P131" ]}'}]}
    entities.append(fuji)
    nolabel = json.loads(_place("Q2", {"fr": "Lieu"}, ["Q900113"]))
    nolabel["descriptions"] = {"ja": {"language": "ja", "value": "説明"}, "en": {"language": "en", "value": "x"}}
    entities.append(nolabel)
    return entities


@pytest.mark.parametrize("layout", range(len(LAYOUTS)))
def test_a_place_read_from_its_statements_is_the_place_read_whole(layout):
    for data in _entities_of_every_kind():
        line = LAYOUTS[layout](data).encode() + b","
        fast = _fast_place(line, data["id"], ["en", "ja"])
        whole = place_from_json(data, ["en", "ja"])
        if layout == 0:
            assert fast is not None, data["id"]  # the dump's layout is read fast
        if fast is not None:
            assert (fast.qid, fast.labels, fast.located_in, fast.country) == (
                whole.qid,
                whole.labels,
                whole.located_in,
                whole.country,
            ), (layout, data["id"])


@pytest.mark.parametrize("layout", range(len(LAYOUTS)))
def test_the_pass_reads_any_layout_the_same(layout, tmp_path):
    entities = _entities_of_every_kind()
    dump = tmp_path / "dump.json"
    dump.write_text("[\n" + ",\n".join(LAYOUTS[layout](e) for e in entities) + "\n]\n", encoding="utf-8")
    stats = EntityStats()
    read = {e.qid: e for e in read_items_and_places(dump, ["Q900104"], ["en", "ja"], stats)}
    assert read["Q900104"] == entity_from_json(entities[[e["id"] for e in entities].index("Q900104")])
    places = {e["id"]: place_from_json(e, ["en", "ja"]) for e in entities}
    places = {q: p for q, p in places.items() if (p.located_in or p.country) and q != "Q900104"}
    assert {q: e for q, e in read.items() if q != "Q900104"} == places
    assert (stats.found, stats.places, stats.bad_lines, stats.lines) == (1, len(places), 0, len(entities))


def test_lines_that_are_no_place_are_never_kept_and_a_torn_place_is_a_bad_line(tmp_path):
    torn = _place("Q7", {"en": "x"}, ["Q900113"])[:-40]
    lines = LINES[:6] + [
        torn,
        entity_json("Q8", {"en": "y"}, claims={"P131": [("Q9", "deprecated")]}),
        entity_json("Q9", {"en": "z"}, claims={"P131": [("Q9", "normal", "2001-01-01")]}),
        LINES[5],
    ]  # a line of unexpected types ("P131":"torn") ends the pass: tests/corpora/test_wikidata_files.py
    dump = write_wikidata_json(tmp_path, lines)
    stats = EntityStats()
    read = [e.qid for e in read_items_and_places(dump, [], ["en"], stats)]
    assert read == [json.loads(line)["id"] for line in LINES[:6]]  # no current value: no place
    assert (stats.bad_lines, stats.duplicates, stats.first_duplicate) == (1, 1, "Q900102 on line 11")
    assert stats.notes[0].startswith(f"{dump}: line 8: not an entity in JSON")
    assert stats.notes[-1].endswith("each entity was read from its first line")


@pytest.mark.slow
def test_an_entities_file_for_other_items_or_languages_is_one_line(ja_multistream, tmp_path, capsys):
    items, others = tmp_path / "items.parquet", tmp_path / "others.parquet"
    _items(items, ITEMS)
    _items(others, [("Q1", "kowiki", 56, "地理")])
    wikidata = write_wikidata_json(tmp_path / "tree", _lines())
    extract_entities(wikidata, [others], tmp_path / "ko.parquet")
    with pytest.raises(
        WikioriginError,
        match=r"ko\.parquet: made for the languages en, ko; ja missing "
        r"\(the corpus of jawiki needs en, ja\)",
    ):
        build_origin_corpus(
            items, Multistream(*ja_multistream[:2]), tmp_path / "a.parquet", entities_file=tmp_path / "ko.parquet"
        )
    _items(others, [("Q1", "jawiki", 56, "地理")])
    assert (
        main(["wikidata", "extract", str(wikidata), "--items", str(others), "--out", str(tmp_path / "q1.parquet")]) == 0
    )
    assert "1 of the 1 items found (jawiki: names in en, ja)" in capsys.readouterr().out
    code, _, err = _run(
        capsys, items, ja_multistream, tmp_path / "a.parquet", "--entities", str(tmp_path / "q1.parquet")
    )
    assert code == 2 and err.count("\n") == 1 and not (tmp_path / "a.parquet").exists()
    assert f"q1.parquet: 1 of the 2 items of {items} are not in it (Q8): it was made for other items" in err
    (tmp_path / "text.parquet").write_text("not parquet")
    for bad, says in (
        (tmp_path / "text.parquet", "not a Parquet file"),
        (items, "not the output of `wikiorigin wikidata extract`"),
    ):
        code, _, err = _run(capsys, items, ja_multistream, tmp_path / "a.parquet", "--entities", str(bad))
        assert code == 2 and says in err


@pytest.mark.slow
def test_the_file_holds_every_language_asked_and_serves_each_wiki(ja_multistream, tmp_path):
    items, ko = tmp_path / "items.parquet", tmp_path / "ko.parquet"
    _items(items, ITEMS)
    _items(ko, [("Q900204", "kowiki", 5, "불국사")])
    wikidata = write_wikidata_json(tmp_path / "tree", _lines() + LINES)
    report = extract_entities(wikidata, [items, ko], tmp_path / "entities.parquet")
    assert (report.wikis, report.languages, report.found) == (["jawiki", "kowiki"], ["en", "ja", "ko"], 3)
    assert pq.read_schema(tmp_path / "entities.parquet").remove_metadata() == ENTITIES
    with EntityTable(tmp_path / "entities.parquet") as table:
        assert table.meta["stage"] == "wikidata extract" and table.meta["n_items"] == 3
        assert table.items(["Q900204"], "kowiki", ko)["Q900204"].labels == {"en": "Bulguksa", "ko": "불국사"}
        assert table.fetch({"Q900201", "Q404"})["Q900201"].located_in == ["Q884"]
    dump = Multistream(*ja_multistream[:2])
    build_origin_corpus(items, dump, tmp_path / "shared.parquet", entities_file=tmp_path / "entities.parquet")
    build_origin_corpus(items, dump, tmp_path / "alone.parquet", wikidata=wikidata)
    assert (
        pq.read_table(tmp_path / "shared.parquet").to_pylist() == pq.read_table(tmp_path / "alone.parquet").to_pylist()
    )


@pytest.mark.slow
def test_a_damaged_dump_keeps_what_came_before(ja_multistream, tmp_path, capsys):
    items = tmp_path / "items.parquet"
    _items(items, ITEMS)
    whole = write_wikidata_json(tmp_path / "tree", _lines() + LINES * 40)
    data = whole.read_bytes()
    torn = tmp_path / "torn.json.gz"
    torn.write_bytes(data[: len(data) * 2 // 3])
    out = tmp_path / "entities.parquet"
    with pytest.raises(
        DumpError,
        match=r"corrupt or truncated.*the entities read before it are kept in .*"
        r"entities\.partial\.parquet",
    ):
        extract_entities(torn, [items], out)
    assert not out.exists()
    kept = pq.read_table(partial_path(out)).to_pylist()
    assert [r["qid"] for r in kept[:3]] == [json.loads(line)["id"] for line in (_lines() + LINES)[:3]]
    code, _, err = _run(capsys, items, ja_multistream, tmp_path / "a.parquet", "--entities", str(partial_path(out)))
    assert code == 2 and "entities.partial.parquet: the entities read before damage" in err
    renamed = tmp_path / "renamed.parquet"  # the file says what it is, whatever its name
    shutil.copy(partial_path(out), renamed)
    assert (
        read_provenance(renamed)["complete"] is False and "corrupt or truncated" in read_provenance(renamed)["partial"]
    )
    code, _, err = _run(capsys, items, ja_multistream, tmp_path / "a.parquet", "--entities", str(renamed))
    assert code == 2 and err.count("\n") == 1 and f"{renamed}: the rows kept before a run failed (" in err
    code, _, err = _run(capsys, items, ja_multistream, tmp_path / "a.parquet", "--wikidata", str(torn))
    assert code == 2 and err.count("\n") == 1 and "torn.json.gz: gzip data is corrupt or truncated" in err
    assert not (tmp_path / "a.parquet").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("wikiorigin-duckdb-")]  # the pass's table gone


def test_the_command_line(tmp_path, capsys):
    items = tmp_path / "items.parquet"
    _items(items, ITEMS)
    wikidata = write_wikidata_json(tmp_path / "tree", _lines())
    assert main(["wikidata", "extract", str(wikidata), "--items", str(items), "--out", str(tmp_path / "e.txt")]) == 2
    assert "give a file name ending in .parquet" in capsys.readouterr().err
    assert main(["wikidata", "extract", str(wikidata), "--items", str(items), "--out", str(items)]) == 2
    assert "would overwrite the input" in capsys.readouterr().err
    assert (
        main(["wikidata", "extract", str(wikidata), "--items", str(items), "--out", str(tmp_path / "e.parquet")]) == 0
    )
    out = capsys.readouterr().out
    assert "5 entities read in one pass; 2 of the 2 items found" in out and "3 places" in out


def test_ids_past_the_bitmap_are_told_apart(tmp_path):
    lines = [
        _place("Q999999999999", {"en": "far"}, ["Q17"]),
        _place("Q999999999999", {"en": "again"}, ["Q17"]),
        _place("Q268435456", {"en": "edge"}, ["Q17"]),
    ]
    stats = EntityStats()
    read = list(read_items_and_places(write_wikidata_json(tmp_path, lines), [], ["en"], stats))
    assert [(e.qid, e.labels["en"]) for e in read] == [("Q999999999999", "far"), ("Q268435456", "edge")]
    assert stats.duplicates == 1


@pytest.mark.slow
def test_a_gzip_dump_with_many_blocks_is_read_whole(tmp_path):
    """Lines cut by the reader's blocks are joined: every place of a dump of several blocks."""
    lines = [_place(f"Q{100 + i}", {"en": "x" * (i % 5000)}, ["Q17"]) for i in range(3000)]
    path = tmp_path / "big.json.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write("[\n" + ",\n".join(lines) + "\n]")  # the last line without its newline
    stats = EntityStats()
    assert [e.qid for e in read_items_and_places(path, [], ["en"], stats)] == [f"Q{100 + i}" for i in range(3000)]
    assert stats.lines == 3000 and stats.bad_lines == 0


def test_the_pass_stops_at_damage_after_what_came_before(tmp_path):
    whole = write_wikidata_json(tmp_path / "tree", LINES * 3)
    stats = EntityStats()
    read = [e.qid for e in read_items_and_places(whole, ["Q900104"], ["en"], stats)]
    assert read == [json.loads(line)["id"] for line in LINES] and stats.duplicates == 2 * len(LINES)
    data = whole.read_bytes()
    torn = tmp_path / "torn.json.gz"
    torn.write_bytes(data[: len(data) // 2])
    stats, read = EntityStats(), []
    with pytest.raises(DumpError, match=r"torn\.json\.gz: gzip data is corrupt or truncated near compressed byte"):
        for entity in read_items_and_places(torn, [], ["en"], stats):
            read.append(entity.qid)
    assert read == [json.loads(line)["id"] for line in LINES][: len(read)] and len(read) > 3
    stopped = read_items_and_places(whole, [], ["en"])
    assert next(stopped).qid == "Q17"
    stopped.close()  # the decompressing thread ends with it
    with pytest.raises(DumpError, match="no such file"):
        list(read_items_and_places(tmp_path / "missing.json.gz", [], ["en"]))


@pytest.mark.slow
def test_an_item_named_in_no_language_asked_is_still_named(ja_multistream, tmp_path):
    """As the reader before: an item with labels or sitelinks only in other languages is not an
    item "without Wikidata data" (its first label is kept for that); one with none at all is."""
    items = tmp_path / "items.parquet"
    _items(items, [("Q1", "jawiki", 56, "地理"), ("Q8", "jawiki", 272, "個人")])
    wikidata = write_wikidata_json(
        tmp_path / "tree", [entity_json("Q1", {"fr": "géographie", "de": "Geographie"}), entity_json("Q8", {})]
    )
    extract_entities(wikidata, [items], tmp_path / "e.parquet")
    with EntityTable(tmp_path / "e.parquet") as table:
        read = table.items(["Q1", "Q8"], "jawiki", items)
    assert (read["Q1"].labels, read["Q8"].labels) == ({"fr": "géographie"}, {})
    rows, report, _ = _three_ways(items, ja_multistream, wikidata, tmp_path)
    assert report.missing_entities == ["Q8"] and [r["label_en"] for r in rows] == [None, None]


_FRAGMENTS = [
    b'"id":"Q42"',
    b'"id" : "Q7"',
    b'"id":\t"P17"',
    b'"id":"L5"',
    b'"id":"Q"',
    b'"id":"Q12',
    b'"id":',
    b'{"id":"Q9"}',
    b"{",
    b"}",
    b'"P131"',
    b'P17"',
    b"P131",
    b'P1317"',
    b'"P1"',
    b"P",
    b'"',
    b"[",
    b"]",
    b",",
    b" ",
    b"\r",
    b"\t",
    b"\n",
    "富士".encode(),
    b"x" * 380,
]


def _fuzzed_lines(rng) -> bytes:
    """Lines built from the fragments the screen looks for, in any order and number."""
    lines = []
    for _ in range(60):
        lines.append(b"".join(rng.choice(_FRAGMENTS) for _ in range(rng.randrange(0, 12))))
    return b"\n".join(lines)


def test_the_compiled_screen_is_the_python_screen(data_dir):
    screen = pytest.importorskip("wikiorigin.dumps._screen", reason="the compiled screen is not built").screen
    import random

    from wikiorigin.dumps.wikidata import _py_screen

    rng = random.Random(22)
    layouts = [LAYOUTS[i](e).encode() + b"," for i in range(len(LAYOUTS)) for e in _entities_of_every_kind()]
    real = (data_dir / WD).read_bytes()  # the bundled real dump: Q1, Q8 and three properties
    buffers = [real, b"[\n" + b"\n".join(layouts) + b"\n]\n"] + [_fuzzed_lines(rng) for _ in range(400)]
    wanted = {b"Q42", b"Q7", b"L5", b"Q900104", b"Q8"}
    for buf in buffers:
        for _ in range(5):  # whole, and windows cut anywhere (a block's whole lines)
            pos = rng.randrange(len(buf) + 1)
            end = rng.randrange(pos, len(buf) + 1)
            pos, end = (0, len(buf)) if _ == 0 else (pos, end)
            number = rng.randrange(1000)
            assert screen(buf, pos, end, wanted, number) == _py_screen(buf, pos, end, wanted, number), buf[pos:end]
    for bad in (screen, _py_screen):  # both refuse alike what no block is
        with pytest.raises(ValueError):
            bad(b"abc", 2, 9, wanted, 0)
        with pytest.raises(TypeError):
            bad(bytearray(b"abc"), 0, 3, wanted, 0)
        with pytest.raises(TypeError):
            bad(b"abc", 0, 3, list(wanted), 0)
