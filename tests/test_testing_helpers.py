"""The items-file and MCQ-set writers of wikiorigin.testing give files the readers take."""

import pyarrow.parquet as pq
import pytest

from wikiorigin.schemas import MCQ, ORIGINS
from wikiorigin.testing import mcq_row, write_items, write_mcq


def test_an_items_file_and_a_set_are_in_their_schemas(tmp_path):
    items = write_items(tmp_path / "items.parquet", [("Q1", "jawiki", 56, "地理")])
    [row] = pq.read_table(items).to_pylist()
    assert pq.read_schema(items).remove_metadata() == ORIGINS
    assert (row["origin_wiki"], row["editions"][0]["page_id"], row["editions"][0]["title"]) == ("jawiki", 56, "地理")

    path = write_mcq(tmp_path / "set.parquet", [mcq_row(3, "どれか。", ["a", "b", "c", "d"], 2, language="en")])
    [question] = pq.read_table(path).to_pylist()
    assert pq.read_schema(path).remove_metadata() == MCQ
    assert (question["id"], question["answer"], question["language"]) == ("q3", "c", "en")


def test_a_column_the_schema_has_not_is_refused():
    with pytest.raises(TypeError, match="no column anwser"):
        mcq_row(1, "q", ["a", "b", "c", "d"], 0, anwser="a")
