"""Reading datasets for review: kinds, keys, content hashes, footnotes, links, bad rows."""

from __future__ import annotations

import json

import pytest

from tests.review.conftest import mcq_rows, write
from wikiorigin.errors import WikioriginError
from wikiorigin.review.items import cited_numbers, content_sha1, load_dataset, segments, wikipedia_url
from wikiorigin.schemas import MCQ


def test_kinds_keys_and_hashes(mcq_file, freeform_file, preferences_file, tmp_path):
    assert [load_dataset(p).kind for p in (mcq_file, freeform_file, preferences_file)] == [
        "mcq",
        "freeform",
        "preferences",
    ]
    data = load_dataset(mcq_file)
    assert [i.key for i in data.items] == ["q1", "q2", "q3", "q4", "q5", "q6"]
    assert data.items[0].sha1 == content_sha1(dict(reversed(list(data.items[0].row.items()))))  # key order
    prefs = load_dataset(preferences_file)  # no ids: keyed by content
    assert [i.key for i in prefs.items] == ["#" + i.sha1[:16] for i in prefs.items] and prefs.keyed_by == "content"
    assert data.keyed_by == "id"
    rows = mcq_rows()
    rows[1]["id"] = "q1"  # ids that repeat are not keys
    rows[3] = dict(rows[2])  # two identical rows: the second is told apart by ~2
    write(rows, tmp_path / "dup.parquet", MCQ)
    keys = [i.key for i in load_dataset(tmp_path / "dup.parquet").items]
    assert keys[1] == "#" + content_sha1(rows[1])[:16] and keys[3] == keys[2] + "~2"
    write([rows[0]] + rows, tmp_path / "dup.parquet", MCQ)  # a row inserted at the top: the keys stay
    assert [i.key for i in load_dataset(tmp_path / "dup.parquet").items][2:] == keys[1:]


@pytest.mark.parametrize(
    "content, message",
    [
        ("[]", "no rows to review"),
        ('{"a": 1', "not JSON"),
        ('[{"question": "q", "choices": ["a", "b"]}, {"question": "", "choices": ["a", "b"]}]', "row 1: no question"),
        ('[{"text": "x"}]', "not a dataset to review"),
        ('"text"', "expected a list of objects"),
    ],
)
def test_bad_files_are_one_line_naming_the_file(tmp_path, content, message):
    (tmp_path / "d.json").write_text(content, encoding="utf-8")
    with pytest.raises(WikioriginError, match=f"d.json: .*{message}"):
        load_dataset(tmp_path / "d.json")


@pytest.mark.parametrize(
    "name, make, message",
    [
        ("d.parquet", lambda p: p.write_bytes(b"PAR1 half a file"), "not a Parquet file"),
        ("d.parquet", lambda p: p.mkdir(), "a directory"),
        ("d.json", lambda p: p.mkdir(), "a directory"),
        ("d.parquet", lambda p: None, "no such file .*wikiorigin build mcq"),
        ("d.json.xz", lambda p: None, "no such file .*wikiorigin build mcq"),
    ],
)
def test_unreadable_dataset_files_are_one_line_naming_the_file(tmp_path, name, make, message):
    make(tmp_path / name)
    with pytest.raises(WikioriginError, match=f"{name}: .*{message}"):
        load_dataset(tmp_path / name)


def test_footnotes_cited_and_cut():
    assert cited_numbers([1, 3]) == [1, 3] and cited_numbers("[1][12]") == [1, 12] and cited_numbers(None) == []
    parts = segments("A[1]. B[注 1] C[2]", [1])
    assert parts == [
        {"text": "A"},
        {"text": "[1]", "ref": 1, "cited": True},
        {"text": ". B"},
        {"text": "[注 1]", "ref": 1, "cited": False},
        {"text": " C"},
        {"text": "[2]", "ref": 2, "cited": False},
    ]
    assert "".join(p["text"] for p in parts) == "A[1]. B[注 1] C[2]"  # nothing lost


def test_links_are_http_only():
    assert (
        wikipedia_url({"url": "javascript:alert(1)", "title": "垢 嘗", "wiki": "jawiki"}, None)
        == "https://ja.wikipedia.org/wiki/%E5%9E%A2_%E5%98%97"
    )
    assert wikipedia_url({"url": "https://ja.wikipedia.org/wiki/X"}, None) == "https://ja.wikipedia.org/wiki/X"
    assert wikipedia_url({"title": "X"}, None) is None
    assert (
        json.dumps(wikipedia_url({"url": "data:text/html,<b>"}, {"url": "https://en.wikipedia.org/wiki/Y"}))
        == '"https://en.wikipedia.org/wiki/Y"'
    )
