"""LLM-as-judge on the CARE Japanese test file: a model and a judge behind an
OpenAI-compatible server; ratings read, bad ratings counted, averages by category and culture."""

import json

import pytest

from tests.openai_server import ChatServer
from wikiorigin import care, cli
from wikiorigin.evaluators import judge as judging
from wikiorigin.evaluators.signature import data_hash
from wikiorigin.llm import LLMClient, OpenAIBackend, RequestCache


def _server_answer(messages):
    """The model under test answers; the judge rates by the question's position: a few
    ratings are garbage, out of range or missing."""
    if "task: rate" not in messages[0]["content"]:
        return "答えは" + messages[-1]["content"][:10]
    question = messages[-1]["content"].split("\n")[0]
    n = sum(map(ord, question)) % 12
    if n == 10:
        return "I cannot rate this."
    if n == 11:
        return "Rating: [[12]]"
    return f"Mostly right. Rating: [[{n % 10 + 1}]]"


@pytest.mark.slow
def test_judge_care_file_through_the_cli(tmp_path, data_dir, capsys):
    care_file = data_dir.parent / "care-Japanese-test.json"
    rows = care.read_care(care_file)
    with ChatServer(_server_answer) as server:
        code = cli.main(
            [
                "eval",
                "judge",
                "--questions",
                str(care_file),
                "--model",
                "answerer",
                "--endpoint",
                server.url,
                "--judge-model",
                "judge",
                "--base-url",
                server.url,
                "--cache",
                str(tmp_path / "c.sqlite"),
                "--out",
                str(tmp_path / "run"),
            ]
        )
        rubric_prompts = [c["messages"][0]["content"] for c in server.calls if c["model"] == "judge"]
    assert code == 0
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    expected = []
    for row in rows:
        n = sum(map(ord, f"Question: {row['question']}")) % 12
        expected.append(None if n >= 10 else n % 10 + 1)
    rated = [e for e in expected if e is not None]
    assert summary["n"] == 150 and summary["rated"] == len(rated)
    assert summary["mean"] == pytest.approx(sum(rated) / len(rated))
    assert summary["unrated"] == {
        k: v
        for k, v in {
            "missing": sum(sum(map(ord, f"Question: {r['question']}")) % 12 == 10 for r in rows),
            "out of range": sum(sum(map(ord, f"Question: {r['question']}")) % 12 == 11 for r in rows),
        }.items()
        if v
    }
    assert set(summary["by_category"]) == {
        "Cultural entities",
        "Cultural commonsense",
        "Literacy",
        "Social norms",
        "Opinion",
    }
    assert any(care.RUBRICS["Social norms"] in p for p in rubric_prompts)
    assert "Native (Japanese)" in summary["by_culture"]
    assert (tmp_path / "run" / "rating_by_category.png").exists()
    assert "answers rated" in capsys.readouterr().out
    host = server.url.split("//")[1].split("/")[0]
    settings = summary["settings"]
    assert (settings["model"], settings["judge"], settings["temperature"], settings["max_new_tokens"]) == (
        f"answerer@{host}",
        f"judge@{host}",
        0.7,
        512,
    )
    assert settings["data"] == data_hash(rows, ("question", "answer", "culture_type", "associated_culture"))
    assert f"|jprompt:{care.JUDGE_SHA1[:8]}" in summary["signature"] and "|judge:judge@" in summary["signature"]
    # the judge samples as CARE's did, and says so
    assert "|jsample:t0.7,p1,m1024|" in summary["signature"]
    judged = [c for c in server.calls if c["model"] == "judge"]
    assert all((c["temperature"], c["top_p"], c["max_tokens"]) == (0.7, 1.0, 1024) for c in judged)


def test_recorded_answers_and_judge_failures(tmp_path):
    rows = [
        {
            "question": f"q{i}",
            "answer": "ref",
            "culture_type": "Opinion",
            "associated_culture": "X",
            "response": f"a{i}",
        }
        for i in range(4)
    ]
    rows[3]["response"] = None
    with ChatServer(lambda m: "Rating: [[6]]") as server:
        server.faults = ["500"] * 3
        client = LLMClient(
            OpenAIBackend("judge", base_url=server.url),
            RequestCache(tmp_path / "c.sqlite"),
            backoff=0.01,
            retries=2,
            concurrency=1,
        )
        items = judging.judge_answers(rows, [r["response"] for r in rows], client, model="recorded")
    summary = judging.summarize_judged(items)
    assert [i["unrated"] for i in items][3] == "no answer"
    assert summary["unrated"].get("judge failed", 0) == 1 and summary["rated"] == 2
    assert summary["mean"] == 6


def test_the_judge_s_output_limit_is_an_option(tmp_path, data_dir, capsys):
    """A rating cut by the judge's output limit says the flag that raises it (`eval judge` had
    none: the line said the library's max_tokens=); --max-tokens is sent and signed."""
    rows = json.loads((data_dir.parent / "care-Japanese-test.json").read_text())[:3]
    questions = tmp_path / "care.json"
    questions.write_text(json.dumps([{**r, "response": "答え"} for r in rows], ensure_ascii=False))
    argv = ["eval", "judge", "--questions", str(questions), "--judge-model", "judge", "--out"]
    with ChatServer(lambda m: "Rating: [[7]]") as server:
        server.faults = ["length"] * 12
        where = ["--base-url", server.url, "--cache", str(tmp_path / "c.sqlite")]
        assert cli.main([*argv, str(tmp_path / "cut"), *where]) == 1
        err = capsys.readouterr().err
        assert "raise --max-tokens" in err and "max_tokens=" not in err
        server.faults = []
        assert cli.main([*argv, str(tmp_path / "run"), *where, "--max-tokens", "2048"]) == 0
        limits = {c["max_tokens"] for c in server.calls[-3:]}
    assert limits == {2048}
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["rated"] == 3 and "|jsample:t0.7,p1,m2048|" in summary["signature"]
