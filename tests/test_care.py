"""CARE's judge, shared by the preference builder and the judge evaluator: the rating parser
(CARE's published `Rating: [[n]]` and its variants), the request, the question files."""

import json

import pytest

from wikiorigin import care
from wikiorigin.errors import WikioriginError


@pytest.mark.parametrize("text,expected", [
    ("Close to the reference.\nRating: [[7]]", (7, None)),
    ("Rating: [[8/10]]", (8, None)), ("**Rating:** 9", (9, None)), ("評価：［［８］］", (8, None)),
    ("Score: 6/10", (6, None)), ("Rating: [[7.5]]", (7.5, None)), ("[[4]] ... Rating: [[4]]", (4, None)),
    ("Rating: [[11]]", (None, "out of range")), ("Rating: [[0]]", (None, "out of range")),
    ("[[3]] or maybe [[5]]", (None, "several ratings")), ("A fine answer.", (None, "missing")),
    ("I would give it 8 out of 10", (None, "missing")), (None, (None, "missing")),
])
def test_parse_rating(text, expected):
    assert care.parse_rating(text) == expected


def test_the_request_carries_the_category_s_rubric(data_dir):
    rows = care.read_care(data_dir.parent / "care-Japanese-test.json")
    for row in rows[:20]:
        request = care.rating_request(row, "an answer")
        system, user = (m["content"] for m in request.messages)
        assert system.startswith("task: rate\n") and care.RUBRICS[row["culture_type"]] in system
        assert user == f"Question: {row['question']}\n\nReference answer: {row['answer']}\n\nAnswer to grade: an answer"
        assert (request.params, request.prompt_version, request.schema) == ({"temperature": 0}, "care-rate", None)
    plain = care.judge_messages({"question": "q", "answer": "a"}, "x")[0]["content"]
    assert "(unspecified)" in plain and "(general)" in plain and care.DEFAULT_RUBRIC in plain


def test_bad_care_files(tmp_path):
    bad = tmp_path / "care.json"
    bad.write_text(json.dumps([{"question": "q"}]))
    with pytest.raises(WikioriginError, match="care.json: row 0 has no question or no reference answer"):
        care.read_care(bad)
    bad.write_text("{")
    with pytest.raises(WikioriginError, match="care.json: not JSON"):
        care.read_care(bad)
