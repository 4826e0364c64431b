import gzip
import json
import urllib.parse

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.sparql_server import SparqlEndpoint
from wikiorigin.cli import main
from wikiorigin.corpora.origin import build_origin_corpus
from wikiorigin.dumps.pages import Multistream
from wikiorigin.dumps.wikidata import EntityStats, read_entities
from wikiorigin.errors import DumpError, WikioriginError
from wikiorigin.schemas import ORIGIN_ARTICLES
from wikiorigin.testing import write_items

JA = "jawiki-20230501-pages-articles-multistream_first100k-lines.xml.xz"
WD = "wikidata-20151109-five-entities.json"


def _items(path, rows):
    write_items(path, rows)


def _run(capsys, items, dump, out, *source):
    """`corpus origin` of ``items`` from ``dump`` (dump, index) into ``out``: exit code, stdout, stderr."""
    code = main(
        [
            "corpus",
            "origin",
            "--items",
            str(items),
            "--dump",
            str(dump[0]),
            "--index",
            str(dump[1]),
            "--out",
            str(out),
            *source,
        ]
    )
    return (code, *capsys.readouterr())


ROWS = [
    ("Q1", "jawiki", 56, "地理"),
    ("Q8", "jawiki", 272, "個人"),
    ("Q99", "dewiki", 5, "X"),
    ("Q123456", "jawiki", 141, "音楽家"),
]


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


@pytest.mark.slow
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
        code, stdout, _ = _run(capsys, items, ja_multistream, online, "--sparql", endpoint.url)
        assert code == 0
        assert endpoint.log and "VALUES ?item" in endpoint.log[0]
    assert "3 articles" in stdout
    online_rows = {r["qid"]: r for r in pq.read_table(online).to_pylist()}
    for qid in ("Q1", "Q8"):
        for key in ("label_en", "enwiki_title", "text"):
            assert online_rows[qid][key] == rows[qid][key]
        assert sorted(online_rows[qid]["aliases"]) == sorted(rows[qid]["aliases"])


# --- the dump is checked against the items --------------------------------------
# Page 10 of the real jawiki sample is 言語: the Q170002 河童 got that article from
# another jawiki dump. Page 129 is ネマティック液晶, and ネマティック相 (page 127) redirects to it:
# a real page move. Page 113 ワールド・ミュージック is itself a redirect.

KAPPA = ("Q170002", "jawiki", 10, "河童")


def test_items_of_another_wiki_stop_before_any_work(ja_multistream, tmp_path, capsys):
    items, out = tmp_path / "kowiki-items.parquet", tmp_path / "articles.parquet"
    _items(items, [(q, "kowiki" if w == "jawiki" else w, p, t) for q, w, p, t in ROWS])
    with SparqlEndpoint({}) as endpoint:
        code, stdout, err = _run(capsys, items, ja_multistream, out, "--sparql", endpoint.url)
        assert endpoint.log == []
    assert code == 2 and stdout == "" and err.count("\n") == 1
    assert err == (
        f"wikiorigin: error: {items}: none of its 4 items originates in jawiki, the wiki of "
        f"{ja_multistream[0]}; they originate in kowiki (3), dewiki (1): give the multistream "
        "dump of their wiki\n"
    )
    assert not out.exists()


@pytest.mark.slow
def test_another_dump_of_the_same_wiki_is_refused(ja_multistream, data_dir, tmp_path, capsys):
    items, out = tmp_path / "items.parquet", tmp_path / "articles.parquet"
    _items(items, [KAPPA, ("Q1", "jawiki", 56, "地理"), ("Q4", "jawiki", 141, "天狗"), ("Q5", "jawiki", 272, "鬼")])
    with SparqlEndpoint({}) as endpoint:
        code, stdout, err = _run(capsys, items, ja_multistream, out, "--sparql", endpoint.url)
        assert endpoint.log == []
    assert code == 2 and err.count("\n") == 1 and not out.exists()
    assert err.startswith(
        f"wikiorigin: error: {ja_multistream[0]}: 3 of the 4 pages of {items} found in it have another "
        "title (first: Q170002: page 10 is '言語' in the dump, the items say '河童'): the dump is not "
        "the one the items were made from (another jawiki dump?)"
    )
    with pytest.raises(WikioriginError, match=r"3 of the 4 pages .* have another title"):
        build_origin_corpus(items, Multistream(*ja_multistream[:2]), out, wikidata=data_dir / WD)


def test_items_none_of_whose_pages_is_in_the_dump(ja_multistream, data_dir, tmp_path, capsys):
    items, out = tmp_path / "items.parquet", tmp_path / "articles.parquet"
    _items(items, [("Q1", "jawiki", 4000001, "地理"), ("Q8", "jawiki", 4000002, "個人")])
    code, stdout, err = _run(capsys, items, ja_multistream, out, "--wikidata", str(data_dir / WD))
    assert code == 2 and not out.exists()
    assert err == (
        f"wikiorigin: error: {ja_multistream[0]}: none of the 2 pages of {items} is in it: "
        "the dump is not the one the items were made from (another jawiki dump, or one part "
        "of a split dump?)\n"
    )


@pytest.mark.slow
def test_a_page_with_another_title_is_left_out_never_replaced(ja_multistream, data_dir, tmp_path, capsys):
    items, out = tmp_path / "items.parquet", tmp_path / "articles.parquet"
    _items(items, ROWS + [KAPPA])
    report = build_origin_corpus(items, Multistream(*ja_multistream[:2]), out, wikidata=data_dir / WD)
    assert report.mismatched == ["Q170002: page 10 is '言語' in the dump, the items say '河童'"]
    assert (report.articles, report.renamed) == (3, [])
    titles = {r["qid"]: r["title"] for r in pq.read_table(out).to_pylist()}
    assert titles == {"Q1": "地理", "Q8": "個人", "Q123456": "音楽家"}
    code, stdout, err = _run(capsys, items, ja_multistream, out, "--wikidata", str(data_dir / WD))
    assert code == 0 and "0 renamed (kept), 1 with another title or now a redirect (left out)" in stdout
    assert "3 articles" in stdout
    assert "wikiorigin: warning: left out: Q170002: page 10 is '言語' in the dump, the items say '河童'" in err


@pytest.mark.slow
def test_a_moved_page_is_kept_under_its_new_title(ja_multistream, data_dir, tmp_path, capsys):
    items, out = tmp_path / "items.parquet", tmp_path / "articles.parquet"
    _items(
        items,
        [
            ("Q1", "jawiki", 56, "地理"),
            ("Q5", "jawiki", 129, "ネマティック相"),
            ("Q6", "jawiki", 113, "ワールド・ミュージック"),
            ("Q7", "jawiki", 12, "地理学 (学問)"),
        ],
    )
    report = build_origin_corpus(items, Multistream(*ja_multistream[:2]), out, wikidata=data_dir / WD)
    assert report.renamed == [
        "Q5: page 129: 'ネマティック相' is now 'ネマティック液晶' (the old title redirects to it)"
    ]
    assert report.mismatched == [
        "Q6: page 113 'ワールド・ミュージック' is a redirect to 'ワールドミュージック' in the dump",
        "Q7: page 12 is '地理学' in the dump, the items say '地理学 (学問)'",
    ]
    rows = {r["qid"]: r for r in pq.read_table(out).to_pylist()}
    assert sorted(rows) == ["Q1", "Q5"] and rows["Q5"]["page_id"] == 129
    assert rows["Q5"]["title"] == "ネマティック液晶"
    assert urllib.parse.unquote(rows["Q5"]["url"]) == "https://ja.wikipedia.org/wiki/ネマティック液晶"
    code, stdout, err = _run(capsys, items, ja_multistream, out, "--wikidata", str(data_dir / WD))
    assert code == 0 and "1 renamed (kept), 2 with another title or now a redirect (left out)" in stdout
    assert "wikiorigin: warning: renamed: Q5: page 129: 'ネマティック相' is now 'ネマティック液晶'" in err


@pytest.fixture(scope="module")
def ja_without_dbname(data_dir, tmp_path_factory):
    """The jawiki sample with no <dbname> in its <siteinfo>, as multistream dumps named as
    Wikimedia names them and named otherwise."""
    import lzma
    import warnings

    from wikiorigin.testing import write_multistream

    d = tmp_path_factory.mktemp("no-dbname")
    xml = lzma.decompress((data_dir / JA).read_bytes())
    assert b"    <dbname>jawiki</dbname>\n" in xml
    (d / "ja.xml").write_bytes(xml.replace(b"    <dbname>jawiki</dbname>\n", b""))
    made = {}
    for name in ("jawiki-20230501-pages-articles-multistream.xml.bz2", "pages.xml.bz2"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            write_multistream(d / "ja.xml", d / name, d / (name + ".index.bz2"))
        made[name] = (d / name, d / (name + ".index.bz2"))
    return made


@pytest.mark.slow
def test_the_wiki_from_the_file_name_when_siteinfo_has_none(ja_without_dbname, data_dir, tmp_path):
    items, out = tmp_path / "items.parquet", tmp_path / "articles.parquet"
    _items(items, ROWS)
    named = Multistream(*ja_without_dbname["jawiki-20230501-pages-articles-multistream.xml.bz2"])
    assert named.site.dbname == ""
    report = build_origin_corpus(items, named, out, wikidata=data_dir / WD)
    assert (report.wiki, report.articles) == ("jawiki", 3)
    unnamed = Multistream(*ja_without_dbname["pages.xml.bz2"])
    with pytest.raises(
        WikioriginError,
        match=r"pages\.xml\.bz2: no <dbname> in its <siteinfo> and no "
        r"wiki in its file name",
    ):
        build_origin_corpus(items, unnamed, tmp_path / "x.parquet", wikidata=data_dir / WD)


def test_a_file_that_is_not_an_items_file(ja_multistream, data_dir, tmp_path, capsys):
    pages = tmp_path / "pages.parquet"
    pq.write_table(pa.table({"wiki": ["jawiki"], "page_id": [56]}), pages)
    code, _, err = _run(capsys, pages, ja_multistream, tmp_path / "a.parquet", "--wikidata", str(data_dir / WD))
    assert code == 2 and err == (
        f"wikiorigin: error: {pages}: not the output of `wikiorigin subset`: no column "
        "qid, origin_wiki, n_wikis, editions\n"
    )
    text = tmp_path / "items.txt"
    text.write_text("not parquet")
    code, _, err = _run(capsys, text, ja_multistream, tmp_path / "b.parquet", "--wikidata", str(data_dir / WD))
    assert code == 2 and f"{text}: not a Parquet file" in err and "expected the output of `wikiorigin subset`" in err


def test_an_unwanted_entity_is_never_read_past_its_id(data_dir, tmp_path):
    # the real sample, plus an unwanted item whose id stands past the prefix the regex reads
    # and whose claims are malformed: it is skipped on its id, not reported as a bad line
    late = (
        '{"type":"item","labels":{"en":{"language":"en","value":"' + "x" * 500 + '"}},'
        '"id":"Q77","claims":{"P131":"torn"}},'
    )
    lines = (data_dir / WD).read_text().splitlines()
    dump = tmp_path / "late.json"
    dump.write_text("\n".join(lines[:2] + [late] + lines[2:]) + "\n")
    stats = EntityStats()
    assert [e.qid for e in read_entities(dump, ["Q1", "Q8"], stats)] == ["Q1", "Q8"]
    assert (stats.bad_lines, stats.found) == (0, 2)


def test_the_library_refuses_an_output_that_is_an_input(ja_multistream, data_dir, tmp_path):
    items = tmp_path / "items.parquet"
    _items(items, ROWS)
    with pytest.raises(WikioriginError, match="would overwrite the input"):
        build_origin_corpus(items, Multistream(*ja_multistream[:2]), items, wikidata=data_dir / WD)


@pytest.mark.slow
def test_the_pages_wait_on_disk_in_the_items_order_and_are_gone_after(ja_multistream, data_dir, tmp_path):
    items = tmp_path / "items.parquet"
    _items(items, [ROWS[1], ROWS[3], ROWS[0]])  # pages 272, 141, 56: not the dump's order
    out = tmp_path / "out" / "articles.parquet"
    out.parent.mkdir()
    dump = Multistream(*ja_multistream[:2])
    build_origin_corpus(items, dump, out, wikidata=data_dir / WD)
    assert pq.read_table(out, columns=["qid"]).column(0).to_pylist() == ["Q8", "Q123456", "Q1"]
    assert sorted(p.name for p in out.parent.iterdir()) == ["articles.parquet"]  # no spill left

    damaged = tmp_path / "damaged.json.gz"
    whole = gzip.compress((data_dir / WD).read_bytes())
    damaged.write_bytes(whole[: len(whole) // 2])
    again = tmp_path / "out" / "again.parquet"
    with pytest.raises(DumpError):
        build_origin_corpus(items, dump, again, wikidata=damaged)
    assert sorted(p.name for p in out.parent.iterdir()) == ["articles.parquet"]  # nor after a failure


@pytest.mark.parametrize(
    "rows, message",
    [
        ([], "no items"),
        (
            [("Q1", "jawiki", 56, "地理"), ("Q1", "jawiki", 56, "地理")],
            "row 1: item Q1 again (first: row 0); each item once",
        ),
        (
            [("Q1", "jawiki", 56, "地理"), ("Q1", "jawiki", 272, "個人")],
            "row 1: item Q1 again (first: row 0); each item once",
        ),
        ([("1", "jawiki", 56, "地理")], "row 0: qid '1' is not a Wikidata item id (Q1, Q42, ...)"),
        (
            [("Q1", "jawiki", 56, "地理"), ("Q8", "jawiki", 56, "地理")],
            "items Q1 and Q8 both name page 56 of jawiki; a page is one item's (is the items file from "
            "`wikiorigin subset`?)",
        ),
    ],
)
def test_items_no_origins_file_holds_stop_before_any_work(ja_multistream, data_dir, tmp_path, capsys, rows, message):
    """An item twice (or a page of two items) would be an article twice in the corpus, exit 0."""
    items, out = tmp_path / "items.parquet", tmp_path / "articles.parquet"
    _items(items, rows)
    code, stdout, err = _run(capsys, items, ja_multistream, out, "--wikidata", str(data_dir / WD))
    assert (code, err) == (2, f"wikiorigin: error: {items}: {message}\n") and not out.exists()
