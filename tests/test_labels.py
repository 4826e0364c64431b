"""Labels files that break a rule: each is one line on stderr naming the file and
the place, exit 2, before any call; through ``wikiorigin build mcq --labels FILE``."""

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.openai_server import ChatServer
from wikiorigin.cli import main
from wikiorigin.labels import load_labels
from wikiorigin.schemas import ARTICLES

TYPES = [{"class": "a", "description": "x"}, {"class": "b", "description": "y"}]
REGIONS = [{"class": "Tokyo", "description": "the capital"}, {"class": "Osaka", "description": "the city"}]


@pytest.fixture(scope="module")
def articles(tmp_path_factory):
    row = {
        "wiki": "jawiki",
        "page_id": 1,
        "title": "題",
        "anchor": None,
        "qid": "Q1",
        "revision_id": 1,
        "revision_timestamp": None,
        "url": "https://ja.wikipedia.org/wiki/題",
        "text": "本文[1]",
        "sections": [],
        "references": [],
        "categories": [],
    }
    path = tmp_path_factory.mktemp("a") / "articles.parquet"
    pq.write_table(pa.Table.from_pylist([row], schema=ARTICLES), path)
    return path


def _build(articles, tmp_path, labels, capsys, *extra) -> str:
    """Run build mcq with the labels file; assert exit 2, no call, one line; return the line."""
    with ChatServer(answer=lambda messages: "{}") as server:
        code = main(
            [
                "build",
                "mcq",
                "--articles",
                str(articles),
                "--out",
                str(tmp_path / "m.parquet"),
                "--model",
                "gen",
                "--base-url",
                server.url,
                "--labels",
                str(labels),
                *extra,
            ]
        )
        assert code == 2 and not server.calls
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(labels) in err and "unexpected" not in err
    return err


@pytest.mark.parametrize("dry_run", [["--dry-run"], []])
def test_utf16_file_is_one_line_naming_the_file(articles, tmp_path, capsys, dry_run):
    bad = tmp_path / "utf16.json"
    bad.write_text(json.dumps({"types": TYPES, "regions": "wikidata"}), encoding="utf-16")
    err = _build(articles, tmp_path, bad, capsys, *dry_run)
    assert f"{bad}: byte 0: not UTF-8 text" in err


def test_utf8_bom_is_read(tmp_path):
    path = tmp_path / "bom.json"
    path.write_text(json.dumps({"name": "bom", "types": TYPES, "regions": REGIONS}), encoding="utf-8-sig")
    assert path.read_bytes().startswith(b"\xef\xbb\xbf")
    labels = load_labels(path)
    assert labels.name == "bom" and labels.region_names == ["Tokyo", "Osaka"]


@pytest.mark.slow
@pytest.mark.parametrize(
    "data, place",
    [
        ({"name": ["x"], "types": TYPES, "regions": "wikidata"}, "name: expected a non-empty string, got ['x']"),
        ({"subject": 3, "types": TYPES, "regions": "wikidata"}, "subject: expected a non-empty string"),
        (
            {"types": TYPES, "regions": [*REGIONS, {"class": "tokyo ", "description": "again"}]},
            "regions[2].class: 'tokyo ' is given twice (as regions[0];",
        ),
        (
            {
                "types": [{"class": "Ｔｏｋｙｏ", "description": "x"}, {"class": "tokyo", "description": "y"}],
                "regions": "wikidata",
            },
            "types[1].class: 'tokyo' is given twice (as types[0];",
        ),
        (
            {
                "types": [
                    {"class": "a", "description": "x", "letter": "a"},
                    {"class": "b", "description": "y", "letter": "A"},
                ],
                "regions": "wikidata",
            },
            "types[1].letter: 'A' is given to two classes (and types[0];",
        ),
        (
            {"types": TYPES, "regions": "Wikidata"},
            "regions: expected a list of classes or the string 'wikidata' (lower case: regions from Wikidata), "
            "got 'Wikidata'",
        ),
        (
            {"types": TYPES, "regions": "wikidata", "prompts": "yokai"},
            "prompts: expected the name of a culture's prompts (yokai-ja), got 'yokai'",
        ),
    ],
)
def test_bad_labels_file_through_the_cli(articles, tmp_path, capsys, data, place):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    assert f"{bad}: {place}" in _build(articles, tmp_path, bad, capsys, "--dry-run")


def test_presets_still_load():
    assert load_labels("yokai-ja").prompts == "yokai-ja" and load_labels("origin").prompts is None


def test_the_yokai_preset_is_the_schema_vocabulary():
    # the same classes live in two places: the preset the builder labels with, and the
    # schema's lists that the evaluators and review read released rows by; they must agree
    from wikiorigin.schemas import MCQ_REGIONS, MCQ_TYPES

    labels = load_labels("yokai-ja")
    assert labels.type_names == MCQ_TYPES and labels.region_names == MCQ_REGIONS
