"""Inputs are checked by type and nulls against ``schemas.py`` before any paid call:
a title stored as bytes or null, a page id stored as text, a text that is null, aliases that
are one string: each is one line naming the file, the column, the row and what was found,
exit 2, and the loopback server is never asked. Types of the same kind (``large_string``,
``int32``, dictionary-encoded text) are accepted."""

import re

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.openai_server import ChatServer
from wikiorigin.cli import main
from wikiorigin.errors import WikioriginError
from wikiorigin.files import input_schema, read_input
from wikiorigin.schemas import ARTICLES, COLUMN_TYPES, INPUT_SCHEMAS, ORIGIN_ARTICLES, ORIGINS, column_mismatch

TITLES = ["河童", "天狗", "座敷童子"]


def _articles(schema=ARTICLES, **extra) -> list[dict]:
    rows = [
        {
            "wiki": "jawiki",
            "page_id": i + 1,
            "title": t,
            "qid": f"Q{i + 1}",
            "revision_id": 5,
            "text": f"{t}は日本の妖怪である[1]。",
            "url": f"https://ja.wikipedia.org/wiki/{t}",
            "references": [{"number": 1, "text": "柳田国男『妖怪談義』"}],
        }
        for i, t in enumerate(TITLES)
    ]
    if schema is ORIGIN_ARTICLES:
        for row in rows:
            row.update(origin_wiki="jawiki", n_wikis=2, aliases=[row["title"]], label_en=None, enwiki_title=None)
    return rows


def _write(path, rows, schema, changes: dict):
    """``rows`` in ``schema``, then the columns of ``changes`` replaced: name -> an Arrow array."""
    table = pa.Table.from_pylist(rows, schema=schema)
    for name, array in changes.items():
        table = table.set_column(table.schema.get_field_index(name), name, array)
    pq.write_table(table, path)
    return path


# What a stage's input may hold that goes wrong: the column replaced, and what the error says.
BAD = [
    (
        "bytes-title",
        {"title": pa.array([t.encode() for t in TITLES], pa.binary())},
        r"column title is binary, expected string \(row 0: b'\\xe6\\xb2\\xb3\\xe7",
    ),
    (
        "null-title",
        {"title": pa.array(["河童", None, "座敷童子"])},
        r"row 1: title is null; the stage needs one on every row",
    ),
    (
        "text-page-id",
        {"page_id": pa.array(["1", "2", "3"])},
        r"column page_id is string, expected int64 \(row 0: '1'\)",
    ),
    ("null-text", {"text": pa.array([None, None, "x"], pa.string())}, r"row 0: text is null \(2 rows in all\)"),
]


@pytest.mark.slow
@pytest.mark.parametrize("case,changes,says", BAD, ids=[b[0] for b in BAD])
@pytest.mark.parametrize("builder", ["mcq", "freeform"])
def test_a_wrongly_typed_or_null_input_is_refused_before_any_call(builder, case, changes, says, tmp_path, capsys):
    schema = ORIGIN_ARTICLES if builder == "freeform" else ARTICLES
    articles = _write(tmp_path / f"{case}.parquet", _articles(schema), schema, changes)
    with ChatServer(answer=lambda messages: "{}") as server:
        code = main(
            [
                "build",
                builder,
                "--articles",
                str(articles),
                "--out",
                str(tmp_path / "out.parquet"),
                "--model",
                "gen",
                "--base-url",
                server.url,
                "--cache",
                str(tmp_path / "c.sqlite"),
            ]
        )
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert err.startswith(f"wikiorigin: error: {articles}: ") and re.search(says, err), err
    assert server.calls == [] and not (tmp_path / "out.parquet").exists()


def test_aliases_that_are_one_string_are_refused_before_any_call(tmp_path, capsys):
    """An optional column the free-form builder reads (the answers' names) is checked too:
    a string would be split into its characters as answers."""
    rows = _articles(ORIGIN_ARTICLES)
    articles = _write(
        tmp_path / "a.parquet", rows, ORIGIN_ARTICLES, {"aliases": pa.array(["かっぱ", "てんぐ", "ざしきわらし"])}
    )
    with ChatServer(answer=lambda messages: "{}") as server:
        assert (
            main(
                [
                    "build",
                    "freeform",
                    "--articles",
                    str(articles),
                    "--out",
                    str(tmp_path / "f.parquet"),
                    "--model",
                    "gen",
                    "--base-url",
                    server.url,
                    "--cache",
                    str(tmp_path / "c.sqlite"),
                ]
            )
            == 2
        )
    assert "column aliases is string, expected list<item: string> (row 0: 'かっぱ')" in capsys.readouterr().err
    assert server.calls == []


def test_types_of_the_same_kind_are_accepted(tmp_path, capsys):
    """large_string, int32 page ids, dictionary-encoded wikis and a column of nulls where
    nulls may be: the dry run reads the file and counts its calls."""
    rows = _articles(ORIGIN_ARTICLES)
    articles = _write(
        tmp_path / "a.parquet",
        rows,
        ORIGIN_ARTICLES,
        {
            "title": pa.array(TITLES, pa.large_string()),
            "page_id": pa.array([1, 2, 3], pa.int32()),
            "wiki": pa.array(["jawiki"] * 3).dictionary_encode(),
            "n_wikis": pa.array([2, 2, 2], pa.int64()),
            "enwiki_title": pa.nulls(3),
        },
    )
    assert (
        main(
            [
                "build",
                "freeform",
                "--articles",
                str(articles),
                "--out",
                str(tmp_path / "f.parquet"),
                "--model",
                "gen",
                "--base-url",
                "http://127.0.0.1:9/v1",
                "--cache",
                str(tmp_path / "c.sqlite"),
                "--dry-run",
            ]
        )
        == 0
    )
    assert "3 calls to make first" in capsys.readouterr().out
    assert read_input(articles, ["title", "page_id"], "x").column("page_id").type == pa.int32()  # read as stored


def test_subset_refuses_a_wrongly_typed_origins_file(tmp_path, capsys):
    table = pa.Table.from_pylist(
        [{"qid": "Q1", "origin_wiki": "jawiki", "n_wikis": 3, "lead_days": 1.0, "editions": []}], schema=ORIGINS
    )
    bad = tmp_path / "origins.parquet"
    pq.write_table(table.set_column(table.schema.get_field_index("n_wikis"), "n_wikis", pa.array(["3"])), bad)
    assert main(["subset", str(bad), "--wiki", "ja", "--out", str(tmp_path / "items.parquet")]) == 2
    err = capsys.readouterr().err
    assert "origins.parquet: column n_wikis is string, expected int32 (row 0: '3')" in err
    assert "not the output of `wikiorigin origins`" in err and "unexpected" not in err


def test_the_corpus_refuses_items_without_a_qid(tmp_path):
    from wikiorigin.corpora.origin import _read_items

    rows = [{"qid": None, "origin_wiki": "jawiki", "n_wikis": 2, "editions": []}]
    items = tmp_path / "items.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=ORIGINS), items)
    with pytest.raises(WikioriginError, match=r"items\.parquet: row 0: qid is null"):
        _read_items(items, "jawiki", None)


def test_one_type_per_column_name_across_the_input_schemas():
    for schema in INPUT_SCHEMAS:
        for field in schema:
            assert COLUMN_TYPES[field.name] == field.type and column_mismatch(field.name, field.type) is None


def test_nested_types_are_compared_by_their_parts():
    wrong = pa.list_(pa.struct([("number", pa.string()), ("text", pa.string())]))
    assert column_mismatch("references", wrong) == "references[].number is string, expected int32"
    assert column_mismatch("references", pa.list_(pa.struct([("number", pa.int64())]))) is None
    assert column_mismatch("lead_days", pa.int64()) is None  # a whole number fits a float
    assert column_mismatch("n_wikis", pa.float64()) == "n_wikis is double, expected int32"
    assert column_mismatch("created_at", pa.timestamp("s")) is None
    assert column_mismatch("not_a_file_column", pa.binary()) is None


def test_input_schema_checks_only_what_the_stage_needs(tmp_path):
    path = tmp_path / "a.parquet"
    pq.write_table(pa.table({"title": pa.array([b"x"]), "text": ["t"]}), path)
    assert input_schema(path, ["text"], "x").names == ["title", "text"]  # title not needed: not checked
    with pytest.raises(WikioriginError, match=r"a\.parquet: column title is binary, expected string \(row 0: b'x'\)"):
        input_schema(path, ["title"], "x")
