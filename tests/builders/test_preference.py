import csv
import json
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.openai_server import ChatServer
from wikiorigin import care
from wikiorigin.builders.preference import build_preferences, build_rated_preferences
from wikiorigin.care import read_care as read_questions
from wikiorigin.errors import WikioriginError
from wikiorigin.files import read_provenance
from wikiorigin.llm import LLMClient, OpenAIBackend, RequestCache
from wikiorigin.schemas import FAILED, PREFERENCES, PREFERENCES_CONVERSATIONAL

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


def _argv(questions, *options):
    """The `build preference` command line in Japanese on ``questions``, then ``options``."""
    return ["build", "preference", "--language", "ja", "--questions", str(questions), *options]


def _models_argv(questions, out, url, *extra):
    """`build preference` into ``out``: models good and bad, rated by judge at ``url``, cached beside ``out``."""
    return _argv(
        questions,
        "--out",
        str(out),
        "--models",
        "good,bad",
        "--judge-model",
        "judge",
        "--base-url",
        url,
        "--cache",
        str(out.with_name("c.sqlite")),
        *extra,
    )


@pytest.mark.slow
def test_pairs_from_a_judge(questions, tmp_path):
    """CARE's rule by default: per question the best- against the worst-rated answer (it was
    every two answers two points apart, and human ratings keyed by (question, model) were put
    on answers made now); every two with ``pairs="all"``."""
    path, rows = questions
    assert read_questions(path)[0]["culture_type"] == rows[0]["culture_type"]
    out = tmp_path / "prefs.parquet"
    with ChatServer(answer=scripted) as server:
        models = clients(server, tmp_path, ["good", "mid", "bad", "judge"])
        judge = models.pop("judge")
        counts = build_preferences(path, out, models, judge, language="ja")
        judged = [c["messages"] for c in server.calls if c["messages"][0]["content"].startswith("task: rate")]
        assert len(judged) == 18
        assert judged[0] in [care.judge_messages(r, a) for r in rows for a in ANSWERS.values()]  # one judge
        every = build_preferences(path, tmp_path / "p2.parquet", models, judge, pairs="all", min_gap=2, language="ja")
    assert counts == {"questions": 6, "answer_errors": 0, "judge_errors": 0, "pairs": 6}
    table = pq.read_table(out)
    assert table.schema.remove_metadata() == PREFERENCES
    meta = read_provenance(out)
    assert meta["judge_prompt_sha1"] == care.JUDGE_SHA1 and (meta["pairs"], meta["min_gap"]) == ("best-worst", 0)
    assert {(r["chosen_model"], r["rejected_model"]) for r in table.to_pylist()} == {("good", "bad")}
    first = table.to_pylist()[0]
    assert (first["chosen"], first["rejected"], first["score_chosen"], first["score_rejected"]) == (
        ANSWERS["good"],
        ANSWERS["bad"],
        9,
        2,
    )
    assert first["category"] == rows[0]["culture_type"] and first["culture"] == rows[0]["associated_culture"]
    pairs = [r for r in pq.read_table(tmp_path / "p2.parquet").to_pylist() if r["prompt"] == rows[0]["question"]]
    assert {(r["chosen_model"], r["rejected_model"]) for r in pairs} == {
        ("good", "mid"),
        ("good", "bad"),
        ("mid", "bad"),
    }
    assert every["pairs"] == 18 and read_provenance(tmp_path / "p2.parquet")["min_gap"] == 2


@pytest.mark.slow
def test_answers_and_judge_sample_as_care_did(questions, tmp_path):
    """Temperature 0.7, top-p 1.0 and at most 1,024 output tokens for the answers and the judge
    (the judge was greedy and answers had no limit), settable, and in the provenance."""
    path, _ = questions
    care_params = {"temperature": 0.7, "top_p": 1.0, "max_tokens": 1024}
    with ChatServer(answer=scripted) as server:
        models = clients(server, tmp_path, ["good", "bad", "judge"])
        judge = models.pop("judge")
        build_preferences(path, tmp_path / "p.parquet", models, judge, language="ja")
        sent = {
            (c["messages"][0]["content"].startswith("task: rate"), tuple(c.get(k) for k in care_params))
            for c in server.calls
        }
        assert sent == {(False, (0.7, 1.0, 1024)), (True, (0.7, 1.0, 1024))}
        server.calls.clear()
        build_preferences(
            path,
            tmp_path / "q.parquet",
            models,
            judge,
            answer_params={"temperature": 1.0},
            judge_params={"temperature": 0, "max_tokens": 64},
            language="ja",
        )
        assert {c["model"]: (c.get("temperature"), c.get("max_tokens")) for c in server.calls} == {
            "good": (1.0, None),
            "bad": (1.0, None),
            "judge": (0, 64),
        }
    meta = read_provenance(tmp_path / "p.parquet")
    assert meta["answer_params"] == care_params and meta["judge_params"] == care_params
    assert read_provenance(tmp_path / "q.parquet")["judge_params"] == {"temperature": 0, "max_tokens": 64}


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
        assert main(_models_argv(path, tmp_path / "p.parquet", server.url)) == 0
    assert "6 pairs from 6 questions and 2 models" in capsys.readouterr().out


def test_failed_answers_go_to_the_failed_file(questions, tmp_path):
    path, _ = questions
    with ChatServer(answer=scripted) as server:
        server.faults = ["500"] * 3
        models = clients(server, tmp_path, ["good", "bad", "judge"])
        for client in models.values():
            client.retries = 0
        judge = models.pop("judge")
        counts = build_preferences(path, tmp_path / "p.parquet", models, judge, language="ja")
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
        counts = build_preferences(path, tmp_path / "p.parquet", models, models.pop("judge"), language="ja")
    failed = pq.read_table(tmp_path / "p.failed.parquet").to_pylist()
    assert counts["judge_errors"] == 6 and counts["pairs"] == 0
    assert {(f["step"], f["model"], f["reason"]) for f in failed} == {
        ("judge", "good", "unreadable rating (several ratings)")
    }
    assert json.loads(failed[0]["item"]) == {"response": ANSWERS["good"]}


def test_dry_runs(questions, tmp_path, capsys):
    from wikiorigin.cli import main

    path, _ = questions
    with ChatServer(answer=scripted) as server:
        assert main(_models_argv(path, tmp_path / "p.parquet", server.url, "--dry-run")) == 0
        assert not server.calls
    assert "12 calls to make first (0 cached)" in capsys.readouterr().out


def test_an_output_that_is_the_input_is_refused_before_any_call(questions, tmp_path):
    path, _ = questions
    with ChatServer(answer=scripted) as server:
        models = clients(server, tmp_path, ["good", "bad"])
        with pytest.raises(WikioriginError, match="would overwrite the input"):
            build_preferences(path, path, models, models["good"], language="ja")
        with pytest.raises(WikioriginError, match="a directory; give a file name"):
            build_preferences(path, tmp_path, models, models["good"], language="ja")
        assert server.calls == []


# --- pairs from rated responses (CARE's released annotations): no model ------------------------
# tests/data/care-rated-sample.json: five questions of the CARE sample and one that is not in
# it, answered by three made-up models; responses and ratings written for these tests.

RATED = Path(__file__).resolve().parents[1] / "data" / "care-rated-sample.json"
CARE = Path(__file__).resolve().parents[1] / "data" / "care-Japanese-test.json"


def _write_csv(path, rows) -> None:
    """Rated rows as a CSV file with the header question, model, response, rating."""
    with open(path, "w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["question", "model", "response", "rating"])
        writer.writeheader()
        writer.writerows(rows)


def _write_jsonl(path, rows) -> None:
    """Rows as JSON Lines, one object a line."""
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def rated_as(kind: str, tmp_path) -> Path:
    """The sample rated file as JSON, JSON Lines, CSV or Parquet."""
    rows = json.loads(RATED.read_text(encoding="utf-8"))
    path = tmp_path / f"rated.{kind}"
    if kind == "json":
        path.write_text(RATED.read_text(encoding="utf-8"), encoding="utf-8")
    elif kind == "jsonl":
        _write_jsonl(path, rows)
    elif kind == "csv":
        _write_csv(path, rows)
    else:
        pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def pairs_of(out) -> dict:
    """question number in the CARE sample -> the (chosen, rejected) models of its pairs."""
    numbers = {r["question"]: i for i, r in enumerate(read_questions(CARE))}
    found: dict = {}
    for row in pq.read_table(out).to_pylist():
        prompt = row["prompt"] if isinstance(row["prompt"], str) else row["prompt"][0]["content"]
        found.setdefault(numbers[prompt], []).append((row["chosen_model"], row["rejected_model"]))
    return found


@pytest.mark.parametrize("kind", ["json", "jsonl", "csv", "parquet"])
def test_best_worst_from_rated_responses(kind, tmp_path):
    """CARE's rule on rated responses: per question the best- against the worst-rated; of equal
    ratings the model whose name sorts first (alpha before beta before gamma, whatever the
    file's order); equal best and worst make no pair; the same from every file format."""
    out = tmp_path / "p.parquet"
    counts = build_rated_preferences(CARE, rated_as(kind, tmp_path), out, language="ja")
    assert counts == {"questions": 5, "responses": 14, "unmatched_questions": 1, "pairs": 4}
    assert pairs_of(out) == {
        0: [("alpha", "beta")],  # 9 alpha = 9 gamma > 2 beta
        1: [("alpha", "gamma")],  # 8 alpha = 8 beta > 2 gamma
        2: [("beta", "alpha")],  # 8 beta > 3 alpha = 3 gamma
        60: [("alpha", "beta")],
    }  # 7 > 6; question 30 (5, 5, 5) has none
    meta = read_provenance(out)
    assert (meta["ratings"], meta["pairs"], meta["min_gap"], meta["judge"]) == ("recorded", "best-worst", 0, None)
    assert meta["responders"] == ["alpha", "beta", "gamma"] and meta["rated"]["file"] == f"rated.{kind}"


def test_chosen_and_rejected_are_the_rated_texts(tmp_path):
    """A rating stays with the text it rated: chosen and rejected are the file's responses,
    with their ratings; culture and category come from the questions file."""
    out = tmp_path / "p.parquet"
    build_rated_preferences(CARE, RATED, out, language="ja")
    rated = {(r["question"], r["model"]): r for r in json.loads(RATED.read_text(encoding="utf-8"))}
    questions = {r["question"]: r for r in read_questions(CARE)}
    rows = pq.read_table(out).to_pylist()
    assert pq.read_schema(out).remove_metadata() == PREFERENCES and len(rows) == 4
    for row in rows:
        chosen, rejected = rated[(row["prompt"], row["chosen_model"])], rated[(row["prompt"], row["rejected_model"])]
        assert (row["chosen"], row["score_chosen"]) == (chosen["response"], chosen["rating"])
        assert (row["rejected"], row["score_rejected"]) == (rejected["response"], rejected["rating"])
        assert (row["category"], row["culture"]) == (
            questions[row["prompt"]]["culture_type"],
            questions[row["prompt"]]["associated_culture"],
        )
    assert rows[0]["chosen"] == "富嶽百景です。" and rows[0]["rejected"] == "『人間失格』です。"


def test_every_pair_with_a_least_gap(tmp_path):
    """``pairs="all"``: every two responses whose ratings differ by ``min_gap`` or more (2 by
    default); ties never pair; ``min_gap`` also holds with best-worst."""
    build_rated_preferences(CARE, RATED, tmp_path / "all.parquet", pairs="all", language="ja")
    assert pairs_of(tmp_path / "all.parquet") == {
        0: [("alpha", "beta"), ("gamma", "beta")],
        1: [("alpha", "gamma"), ("beta", "gamma")],
        2: [("beta", "alpha"), ("beta", "gamma")],
    }
    build_rated_preferences(CARE, RATED, tmp_path / "six.parquet", pairs="all", min_gap=6, language="ja")
    assert pairs_of(tmp_path / "six.parquet") == {
        0: [("alpha", "beta"), ("gamma", "beta")],
        1: [("alpha", "gamma"), ("beta", "gamma")],
    }
    build_rated_preferences(CARE, RATED, tmp_path / "bw.parquet", min_gap=2, language="ja")
    assert sorted(pairs_of(tmp_path / "bw.parquet")) == [0, 1, 2]  # question 60's gap is 1
    with pytest.raises(WikioriginError, match="pairs must be one of best-worst, all, not 'best'"):
        build_rated_preferences(CARE, RATED, tmp_path / "x.parquet", pairs="best", language="ja")


def test_conversational_format_round_trips(tmp_path):
    """TRL's conversational preference form: prompt, chosen and rejected are lists of chat
    messages (a user's, an assistant's), read back as written, by pyarrow and by datasets."""
    out = tmp_path / "p.parquet"
    build_rated_preferences(CARE, RATED, out, format="conversational", language="ja")
    plain = tmp_path / "plain.parquet"
    build_rated_preferences(CARE, RATED, plain, language="ja")
    assert pq.read_schema(out).remove_metadata() == PREFERENCES_CONVERSATIONAL
    rows, strings = pq.read_table(out).to_pylist(), pq.read_table(plain).to_pylist()
    for row, text in zip(rows, strings):
        assert row["prompt"] == [{"role": "user", "content": text["prompt"]}]
        assert row["chosen"] == [{"role": "assistant", "content": text["chosen"]}]
        assert row["rejected"] == [{"role": "assistant", "content": text["rejected"]}]
        assert {k: v for k, v in row.items() if k not in ("prompt", "chosen", "rejected")} == {
            k: v for k, v in text.items() if k not in ("prompt", "chosen", "rejected")
        }
    assert read_provenance(out)["format"] == "conversational"
    datasets = pytest.importorskip("datasets")
    loaded = datasets.Dataset.from_parquet(str(out), cache_dir=str(tmp_path / "hf"))
    assert loaded[0]["prompt"] == rows[0]["prompt"] and loaded[0]["chosen"] == rows[0]["chosen"]


def test_rated_questions_not_in_the_questions_file(tmp_path):
    """A rated question missing from the questions file is left out, counted and listed in the
    failed file; a rated file none of whose questions is there is an error, nothing written."""
    out = tmp_path / "p.parquet"
    build_rated_preferences(CARE, RATED, out, language="ja")
    failed = pq.read_table(tmp_path / "p.failed.parquet").to_pylist()
    mountain = "日本でいちばん高い山は何ですか？"
    assert [(f["step"], f["model"], f["source"]) for f in failed] == [
        ("match", "alpha", mountain),
        ("match", "beta", mountain),
    ]
    assert failed[0]["reason"] == f"question not in {CARE.name}"  # no path of the machine
    assert json.loads(failed[0]["item"]) == {"response": "富士山です。", "rating": 10.0, "row": 15}
    other = tmp_path / "other.json"
    other.write_text(json.dumps([{"question": "別の質問", "answer": "答え"}], ensure_ascii=False), encoding="utf-8")
    with pytest.raises(WikioriginError, match=r"none of its 6 questions is in .*other\.json"):
        build_rated_preferences(other, RATED, tmp_path / "q.parquet", language="ja")
    assert not (tmp_path / "q.parquet").exists()


@pytest.mark.slow
def test_cli_rated_calls_no_model(tmp_path):
    """`build preference --rated` needs no --models or --judge-model, opens no connection (a
    socket that would connect ends the run) and loads no HTTP client (openai, httpx)."""
    import subprocess
    import sys

    out = tmp_path / "p.parquet"
    argv = _argv(CARE, "--rated", str(rated_as("csv", tmp_path)), "--out", str(out), "--format", "conversational")
    code = (
        "import socket, sys\n"
        "def refuse(*a, **k): raise SystemExit('a connection was opened')\n"
        "socket.socket.connect = socket.create_connection = refuse\n"
        "from wikiorigin.cli import main\n"
        f"code = main({argv!r})\n"
        "assert not [m for m in sys.modules if m.split('.')[0] in ('openai', 'httpx')]\n"
        "sys.exit(code)"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("4 pairs from 5 rated questions (14 responses; 1 rated questions not in ")
    assert pq.read_schema(out).remove_metadata() == PREFERENCES_CONVERSATIONAL


@pytest.mark.parametrize(
    "extra, said",
    [
        (["--models", "a,b"], "leave out --models"),
        (["--judge-model", "j", "--dry-run"], "leave out --judge-model, --dry-run"),
    ],
)
def test_cli_rated_refuses_model_options(extra, said, tmp_path, capsys):
    from wikiorigin.cli import main

    assert main(_argv(CARE, "--rated", str(RATED), "--out", str(tmp_path / "p.parquet"), *extra)) == 2
    err = capsys.readouterr().err
    assert said in err and "calls no model" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "p.parquet").exists()


def test_cli_needs_models_or_rated(tmp_path, capsys):
    from wikiorigin.cli import main

    assert main(_argv(CARE, "--out", str(tmp_path / "p.parquet"), "--models", "a")) == 2
    assert "give --models and --judge-model (or --rated FILE)" in capsys.readouterr().err


@pytest.mark.parametrize(
    "row, change, message",
    [
        (3, {"rating": "high"}, "row 3: rating 'high' is not a number"),
        (5, {"rating": "nan"}, "row 5: rating 'nan' is not a finite number"),
        (2, {"rating": "inf"}, "row 2: rating 'inf' is not a finite number"),
        (7, {"response": "  "}, "row 7: empty response"),
        (4, {"rating": ""}, "row 4: empty rating"),
        (9, {"model": "alpha"}, "row 9: a second rating of model 'alpha' on one question \\(the first: row 7\\)"),
    ],
)
def test_cli_bad_rated_rows(row, change, message, tmp_path, capsys):
    """A bad row of the rated file: one line naming the file and row (rows from 1, the header
    not counted), exit 2, nothing written."""
    from wikiorigin.cli import main

    rows = list(csv.DictReader(open(rated_as("csv", tmp_path), encoding="utf-8")))
    rows[row - 1].update(change)
    bad = tmp_path / "rated.csv"
    _write_csv(bad, rows)
    assert main(_argv(CARE, "--rated", str(bad), "--out", str(tmp_path / "p.parquet"))) == 2
    err = capsys.readouterr().err.strip()
    assert re.fullmatch(f"wikiorigin: error: {re.escape(str(bad))}: {message}", err), err
    assert not list(tmp_path.glob("p*.parquet"))


def test_cli_a_rated_file_without_a_field(tmp_path, capsys):
    from wikiorigin.cli import main

    rows = json.loads(RATED.read_text(encoding="utf-8"))
    del rows[1]["response"]
    bad = tmp_path / "rated.jsonl"
    _write_jsonl(bad, rows)
    assert main(_argv(CARE, "--rated", str(bad), "--out", str(tmp_path / "p.parquet"))) == 2
    assert (
        capsys.readouterr().err.strip()
        == f"wikiorigin: error: {bad}: row 2: no response (the fields: question, model, response, rating)"
    )
