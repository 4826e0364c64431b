"""CARE's judge, shared by the preference builder and the judge evaluator: the rating parser
(CARE's published `Rating: [[n]]` and its variants), the request and its rubrics, the question
files and the rated-response files."""

import json

import pytest

from wikiorigin import care
from wikiorigin.errors import WikioriginError


@pytest.mark.parametrize(
    "text,expected",
    [
        ("Close to the reference.\nRating: [[7]]", (7, None)),
        ("Rating: [[8/10]]", (8, None)),
        ("**Rating:** 9", (9, None)),
        ("評価：［［８］］", (8, None)),
        ("Score: 6/10", (6, None)),
        ("Rating: [[7.5]]", (7.5, None)),
        ("[[4]] ... Rating: [[4]]", (4, None)),
        ("Rating: [[11]]", (None, "out of range")),
        ("Rating: [[0]]", (None, "out of range")),
        ("[[3]] or maybe [[5]]", (None, "several ratings")),
        ("A fine answer.", (None, "missing")),
        ("I would give it 8 out of 10", (None, "missing")),
        (None, (None, "missing")),
    ],
)
def test_parse_rating(text, expected):
    assert care.parse_rating(text) == expected


def test_the_request_carries_the_category_s_rubric(data_dir):
    rows = care.read_care(data_dir.parent / "care-Japanese-test.json")
    for row in rows[:20]:
        request = care.rating_request(row, "an answer")
        system, user = (m["content"] for m in request.messages)
        assert system.startswith("task: rate\n") and care.RUBRICS[row["culture_type"]] in system
        assert user == f"Question: {row['question']}\n\nReference answer: {row['answer']}\n\nAnswer to grade: an answer"
        assert (request.params, request.prompt_version, request.schema) == (
            {"temperature": 0.7, "top_p": 1.0, "max_tokens": 1024},
            "care-rate",
            None,
        )
    assert care.rating_request(rows[0], "x", {"temperature": 0}).params == {"temperature": 0}
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


def test_each_category_has_score_bands():
    """The rubric of every CARE category says what each of CARE's five two-point bands (1-2,
    3-4, 5-6, 7-8, 9-10) means for it (it had four: 1-3, 4-6, 7-8, 9-10); the prompt hash
    follows the rubrics."""
    import hashlib

    for rubric in [*care.RUBRICS.values(), care.DEFAULT_RUBRIC]:
        lines = rubric.splitlines()
        assert [line.split(":")[0] for line in lines[1:]] == ["1-2", "3-4", "5-6", "7-8", "9-10"]
        assert all(len(line) > 20 for line in lines)
    assert sorted(care.RUBRICS) == ["Cultural commonsense", "Cultural entities", "Literacy", "Opinion", "Social norms"]
    assert care.JUDGE_SHA1 == hashlib.sha1(care.JUDGE_RULES.encode("utf-8")).hexdigest()
    assert all(json.dumps(r, ensure_ascii=False) in care.JUDGE_RULES for r in care.RUBRICS.values())
    assert care.JUDGE_SHA1 != "1cadc56e6f98147437af22e4609d93c18955a908"  # the one-line rubrics' hash
    assert care.JUDGE_SHA1 != "92c374716b4c57e8e9810cb2bfeb49569c823aa5"  # the four bands' hash


def test_read_rated_takes_each_format(tmp_path):
    """JSON Lines under a .json name, a {"data": [...]} wrapper, numbers written as text, a BOM
    in a CSV and whitespace around a model's name are read; questions match by NFC."""
    rows = [
        {"question": "お盆とは？", "model": "a", "response": "先祖の霊を迎える行事。", "rating": "8"},
        {"question": "お盆とは？ ", "model": " b", "response": "夏休み。", "rating": 3.5, "extra": 1},
    ]
    lines = "\n".join(json.dumps(r, ensure_ascii=False) for r in rows)
    (tmp_path / "lines.json").write_text(lines, encoding="utf-8")
    (tmp_path / "wrapped.json").write_text(json.dumps({"data": rows}, ensure_ascii=False), encoding="utf-8")
    (tmp_path / "bom.csv").write_text(
        "\ufeffquestion,model,response,rating\nお盆とは？,a,先祖の霊を迎える行事。,8\nお盆とは？ , b,夏休み。,3.5\n",
        encoding="utf-8",
    )
    for name in ("lines.json", "wrapped.json", "bom.csv"):
        read = care.read_rated(tmp_path / name)
        assert [(r["model"], r["rating"], r["row"]) for r in read] == [("a", 8.0, 1), ("b", 3.5, 2)], name
        assert read[1]["response"] == "夏休み。"
    assert care.question_key("ｶﾞ") != care.question_key("ガ") and care.question_key(
        "\u30ab\u3099 "
    ) == care.question_key("\u30ac")  # NFC, not NFKC


@pytest.mark.parametrize(
    "record, message",
    [
        ({"model": "a", "response": "r", "rating": 5}, "row 1: no question"),
        ({"question": "q", "model": 3, "response": "r", "rating": 5}, "row 1: model 3 is not text"),
        ({"question": "q", "model": "a", "response": "r", "rating": True}, "row 1: rating True is not a number"),
        ({"question": "q", "model": "a", "response": "r", "rating": [7]}, r"row 1: rating \[7\] is not a number"),
        ({"question": "q", "model": "a", "response": "", "rating": 5}, "row 1: empty response"),
    ],
)
def test_bad_rated_rows(record, message, tmp_path):
    path = tmp_path / "rated.json"
    path.write_text(json.dumps([record]))
    with pytest.raises(WikioriginError, match=f"^{path}: {message}"):
        care.read_rated(path)


def test_bad_rated_files(tmp_path):
    """A NaN in Parquet, a torn line of JSON Lines, an empty file and a missing one."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(
        pa.table({"question": ["q", "q"], "model": ["a", "b"], "response": ["x", "y"], "rating": [7.0, float("nan")]}),
        tmp_path / "r.parquet",
    )
    with pytest.raises(WikioriginError, match=r"r\.parquet: row 2: rating nan is not a finite number"):
        care.read_rated(tmp_path / "r.parquet")
    (tmp_path / "r.jsonl").write_text('{"question": "q"}\n{"question": \n')
    with pytest.raises(WikioriginError, match=r"r\.jsonl: line 2: not JSON"):
        care.read_rated(tmp_path / "r.jsonl")
    (tmp_path / "empty.csv").write_text("question,model,response,rating\n")
    with pytest.raises(WikioriginError, match=r"empty\.csv: no rated responses"):
        care.read_rated(tmp_path / "empty.csv")
    with pytest.raises(WikioriginError, match=r"gone\.csv: no such file"):
        care.read_rated(tmp_path / "gone.csv")


def test_read_rated_keeps_ratings_on_their_scale(tmp_path):
    """CARE's 1-10 by default: 99 and -5 are errors naming the row and rating_scale; another scale
    is given, or none (None) for any finite rating."""
    from wikiorigin.errors import ParameterError

    path = tmp_path / "rated.jsonl"
    for rating in (99, -5):
        path.write_text(json.dumps({"question": "Q", "model": "m", "response": "r", "rating": rating}) + "\n")
        with pytest.raises(
            ParameterError,
            match=rf"rated\.jsonl: row 1: rating {rating} is outside the rating scale 1-10 \(give rating_scale=",
        ):
            care.read_rated(path)
        assert care.read_rated(path, (-10, 100))[0]["rating"] == rating
        assert care.read_rated(path, None)[0]["rating"] == rating
