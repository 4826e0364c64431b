import json

import pyarrow.parquet as pq
import pytest

from tests.openai_server import ChatServer
from wikiorigin import care
from wikiorigin.builders.preference import build_preferences
from wikiorigin.care import read_care as read_questions
from wikiorigin.errors import WikioriginError
from wikiorigin.files import read_provenance
from wikiorigin.llm import LLMClient, OpenAIBackend, RequestCache
from wikiorigin.schemas import FAILED, PREFERENCES

ANSWERS = {"good": "くわしい正しい答え", "mid": "だいたいの答え", "bad": "わかりません"}
SCORES = {"くわしい正しい答え": 9, "だいたいの答え": 6, "わかりません": 2}


def scripted(messages, model):
    """The responders answer by name; the judge (CARE's, as the evaluator asks it) rates by
    the answer graded."""
    if messages[0]["content"].startswith("task: rate"):
        graded = messages[-1]["content"].rsplit("Answer to grade: ", 1)[1]
        return f"Graded against the reference.\nRating: [[{SCORES[graded]}]]"
    return ANSWERS[model]


@pytest.fixture()
def questions(tmp_path, data_dir):
    rows = json.loads((data_dir.parent / "care-Japanese-test.json").read_text(encoding="utf-8"))[:6]
    path = tmp_path / "care.json"
    path.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    return path, rows


def clients(server, tmp_path, names):
    cache = RequestCache(tmp_path / "c.sqlite")
    return {n: LLMClient(OpenAIBackend(n, base_url=server.url), cache) for n in names}


def test_pairs_from_a_judge(questions, tmp_path):
    path, rows = questions
    assert read_questions(path)[0]["culture_type"] == rows[0]["culture_type"]
    out = tmp_path / "prefs.parquet"
    with ChatServer(answer=scripted) as server:
        models = clients(server, tmp_path, ["good", "mid", "bad", "judge"])
        judge = models.pop("judge")
        counts = build_preferences(path, out, models, judge, min_gap=2)
        judged = [c["messages"] for c in server.calls if c["messages"][0]["content"].startswith("task: rate")]
        assert len(judged) == 18
        assert judged[0] in [care.judge_messages(r, a) for r in rows for a in ANSWERS.values()]  # one judge
        human = {(rows[0]["question"], "mid"): 9.5}  # a human rating wins over the judge
        again = build_preferences(path, tmp_path / "p2.parquet", models, judge, ratings=human, min_gap=2)
    assert counts == {"questions": 6, "answer_errors": 0, "judge_errors": 0, "pairs": 18}
    table = pq.read_table(out)
    assert table.schema.remove_metadata() == PREFERENCES
    assert read_provenance(out)["judge_prompt_sha1"] == care.JUDGE_SHA1
    first = [r for r in table.to_pylist() if r["prompt"] == rows[0]["question"]]
    assert {(r["chosen_model"], r["rejected_model"]) for r in first} == {("good", "mid"), ("good", "bad"), ("mid", "bad")}
    assert all(r["score_chosen"] - r["score_rejected"] >= 2 for r in table.to_pylist())
    assert first[0]["category"] == rows[0]["culture_type"] and first[0]["culture"] == rows[0]["associated_culture"]
    flipped = [r for r in pq.read_table(tmp_path / "p2.parquet").to_pylist() if r["prompt"] == rows[0]["question"]]
    assert {(r["chosen_model"], r["rejected_model"]) for r in flipped} == {("mid", "bad"), ("good", "bad")}
    assert again["pairs"] == 17


def test_bad_question_files(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('[{"question": "q"}]')
    with pytest.raises(WikioriginError, match=r"bad\.json: row 0 has no question or no reference answer"):
        read_questions(bad)
    (tmp_path / "torn.json").write_text('[{"question": "q", ')
    with pytest.raises(WikioriginError, match=r"torn\.json: not JSON"):
        read_questions(tmp_path / "torn.json")


def test_cli_build_preference(questions, tmp_path, capsys):
    from wikiorigin.cli import main

    path, _ = questions
    with ChatServer(answer=scripted) as server:
        assert main(["build", "preference", "--questions", str(path), "--out", str(tmp_path / "p.parquet"),
                     "--models", "good,bad", "--judge-model", "judge", "--base-url", server.url,
                     "--cache", str(tmp_path / "c.sqlite")]) == 0
    assert "6 pairs from 6 questions and 2 models" in capsys.readouterr().out


def test_failed_answers_go_to_the_failed_file(questions, tmp_path):
    path, _ = questions
    with ChatServer(answer=scripted) as server:
        server.faults = ["500"] * 3
        models = clients(server, tmp_path, ["good", "bad", "judge"])
        for client in models.values():
            client.retries = 0
        judge = models.pop("judge")
        counts = build_preferences(path, tmp_path / "p.parquet", models, judge)
    table = pq.read_table(tmp_path / "p.failed.parquet")
    assert table.schema.remove_metadata() == FAILED
    failed = table.to_pylist()
    assert counts["answer_errors"] == 3 and len(failed) == 3 and failed[0]["step"] == "answer"
    assert failed[0]["source"] in {r["question"] for r in read_questions(path)} and failed[0]["item"] is None
    assert counts["pairs"] == 6 - 3  # a question with one rated answer makes no pair


def test_unreadable_ratings_go_to_the_failed_file(questions, tmp_path):
    path, _ = questions

    def unsure(messages, model):
        if messages[0]["content"].startswith("task: rate"):
            return "Somewhere between [[3]] and [[5]]." if "くわしい" in messages[-1]["content"] else "Rating: [[4]]"
        return ANSWERS[model]

    with ChatServer(answer=unsure) as server:
        models = clients(server, tmp_path, ["good", "bad", "judge"])
        counts = build_preferences(path, tmp_path / "p.parquet", models, models.pop("judge"))
    failed = pq.read_table(tmp_path / "p.failed.parquet").to_pylist()
    assert counts["judge_errors"] == 6 and counts["pairs"] == 0
    assert {(f["step"], f["model"], f["reason"]) for f in failed} == {("judge", "good", "unreadable rating (several ratings)")}
    assert json.loads(failed[0]["item"]) == {"response": ANSWERS["good"]}


def test_dry_runs(questions, tmp_path, capsys):
    from wikiorigin.cli import main

    path, _ = questions
    with ChatServer(answer=scripted) as server:
        assert main(["build", "preference", "--questions", str(path), "--out", str(tmp_path / "p.parquet"),
                     "--models", "good,bad", "--judge-model", "judge", "--base-url", server.url,
                     "--cache", str(tmp_path / "c.sqlite"), "--dry-run"]) == 0
        assert not server.calls
    assert "12 calls to make first (0 cached)" in capsys.readouterr().out


def test_no_judge_is_said_before_any_answer_is_paid_for(questions, tmp_path):
    path, rows = questions
    with ChatServer(answer=scripted) as server:
        models = clients(server, tmp_path, ["good", "bad"])
        partial = {(rows[0]["question"], "good"): 8.0}
        with pytest.raises(WikioriginError, match="11 answers would have no rating.*give a judge"):
            build_preferences(path, tmp_path / "p.parquet", models, None, ratings=partial)
        assert server.calls == [] and not (tmp_path / "p.parquet").exists()
        every = {(r["question"], m): s for r in rows for m, s in (("good", 9.0), ("bad", 2.0))}
        counts = build_preferences(path, tmp_path / "p.parquet", models, None, ratings=every)
    assert counts["pairs"] == 6 and all(c["model"] in ("good", "bad") for c in server.calls)


def test_an_output_that_is_the_input_is_refused_before_any_call(questions, tmp_path):
    path, _ = questions
    with ChatServer(answer=scripted) as server:
        models = clients(server, tmp_path, ["good", "bad"])
        with pytest.raises(WikioriginError, match="would overwrite the input"):
            build_preferences(path, path, models, models["good"])
        with pytest.raises(WikioriginError, match="a directory; give a file name"):
            build_preferences(path, tmp_path, models, models["good"])
        assert server.calls == []
