"""Multiple-choice evaluation: released rows, recorded responses, a model behind an
OpenAI-compatible server (generation mode), a tiny local model (log-likelihood mode), the
results directory and the CLI."""

import json
import lzma
import math
import re

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.openai_server import ChatServer
from wikiorigin import cli
from wikiorigin.errors import WikioriginError
from wikiorigin.evaluators import mcq
from wikiorigin.evaluators.models import EndpointModel
from wikiorigin.llm import LLMClient, OpenAIBackend, RequestCache
from wikiorigin.schemas import MCQ_REGIONS, MCQ_TYPES
from wikiorigin.testing import mcq_row, write_mcq


@pytest.fixture(scope="module")
def released(data_dir, tmp_path_factory):
    """The released first 40 rows and one model's released responses, as plain JSON files."""
    where = tmp_path_factory.mktemp("yokaieval")
    for name in (
        "YokaiEval-first40.json",
        "responses-calm2-7b-chat.json",
        "responses-gpt4o-mini.json",
        "responses-qwen2.5-7b-instruct.json",
        "human_eval-first40.json",
    ):
        (where / name).write_bytes(lzma.open(data_dir.parent / "yokaieval" / (name + ".xz")).read())
    return where


@pytest.mark.parametrize(
    "value,expected",
    [
        ("関東", "関東"),
        ("[[不明]]", "不明"),
        ("[[日本全国]]", "日本全国"),
        ("[[C, D]]", "複数の地域"),
        ("[[A, E]]", "複数の地域"),
        ("[[新潟県、京都府、愛媛県]]", "複数の地域"),
        ("中ぶ", "中部"),
        ("東京都", "関東"),
        ("京都府", "近畿"),
        ("大阪", "近畿"),
        ("", "不明"),
        (None, "不明"),
        ("火星", "不明"),
        # the labellers' letters (A 日本全国, B 北海道, ..., G 中国, H 四国, ..., K 不明)
        ("[[A]]", "日本全国"),
        ("[[B]]", "北海道"),
        ("[[C]]", "東北"),
        ("[[F]]", "近畿"),
        ("[[G]]", "中国・四国"),
        ("[[H]]", "中国・四国"),
        ("[[G, H]]", "中国・四国"),
        ("[[I]]", "九州"),
        ("[[J]]", "沖縄"),
        ("[[K]]", "不明"),
        ("[[琉球]]", "沖縄"),
        ("[[九州地方、秋田県]]", "複数の地域"),
        ("[[中国地方]]", "中国・四国"),
        ("関西", "近畿"),
    ],
)
def test_clean_region(value, expected):
    assert mcq.clean_region(value) == expected


def test_released_rows_are_read_with_clean_regions(released):
    rows = mcq.read_questions(released / "YokaiEval-first40.json")
    assert len(rows) == 40
    assert {r["region"] for r in rows} <= set(MCQ_REGIONS) and {r["type"] for r in rows} <= set(MCQ_TYPES)
    assert rows[0]["title"] == "アイヌカイセイ" and rows[0]["choices"][rows[0]["answer_index"]] == "空家"


def test_released_prompt_layout(released):
    recorded = json.loads((released / "responses-calm2-7b-chat.json").read_text())
    rows = mcq.read_questions(released / "responses-calm2-7b-chat.json")
    assert all(mcq.question_prompt(r) == raw["question_prompt"] for r, raw in zip(rows, recorded))
    assert mcq.question_prompt(rows[0], mcq.INSTRUCTIONS["ja"]).endswith(mcq.INSTRUCTIONS["ja"])


def test_recorded_responses_scored_by_hand(released):
    rows, join = mcq.attach_responses(
        mcq.read_questions(released / "YokaiEval-first40.json"),
        mcq.read_questions(released / "responses-calm2-7b-chat.json"),
    )
    assert join["matched"] == 40 and join["missing"] == 0 and join["unmatched"] == 770
    items = mcq.evaluate_generate(rows, recorded="calm2")
    summary = mcq.summarize(items)
    read = [(r, mcq.parse_choice(r["response"], r["choices"])) for r in rows]
    correct = sum(p == r["answer_index"] for r, p in read)
    assert summary["accuracy"] == correct / 40 and summary["unread"] == sum(p is None for _, p in read)
    assert sum(v["n"] for v in summary["by_type"].values()) == 40
    kanto = [r for r, p in read if r["region"] == "関東"]
    assert summary["by_region"]["関東"]["accuracy"] == sum(
        mcq.parse_choice(r["response"], r["choices"]) == r["answer_index"] for r in kanto
    ) / len(kanto)
    # agreement with the paper's GPT-4o verdicts, where it gave one
    judged = [i for i in items if i["reference_judge"] is not None]
    assert summary["agreement_with_reference_judge"] == sum(i["correct"] == i["reference_judge"] for i in judged) / len(
        judged
    )


def test_a_file_with_another_instruction_joins(released):
    """gpt4o-mini's prompts end 回答を1つ選び、回答のみ出力しなさい, the benchmark's 回答を1つ選び出力しなさい."""
    questions = mcq.read_questions(released / "YokaiEval-first40.json")
    recorded = mcq.read_questions(released / "responses-gpt4o-mini.json")
    assert questions[0]["question"] != recorded[0]["question"]
    rows, join = mcq.attach_responses(questions, recorded)
    assert join["matched"] == 40 and join["unmatched"] == 770
    assert [r["id"] for r in rows] == [q["id"] for q in questions]  # the benchmark's rows, types and regions
    items = mcq.evaluate_generate(rows, recorded="gpt4o-mini")
    assert mcq.summarize(items)["accuracy"] == sum(r["judge"] is True for r in rows) / 40


def test_questions_without_a_response_count_as_unanswered(released, tmp_path, capsys):
    """qwen2.5-7b-instruct's file has 807 of the 810 rows: given the rows, the others count."""
    recorded = json.loads((released / "responses-qwen2.5-7b-instruct.json").read_text())
    questions = [dict(r["question"], region="[[B]]", type=mcq.MCQ_TYPES[0]) for r in recorded[:30]]
    questions[5]["question"] = "どこにもない問いか、以下の4つから回答を1つ選び出力しなさい。"
    questions[5]["choices"] = ["甲", "乙", "丙", "丁"]
    questions[5]["answer"] = "甲"
    (tmp_path / "q.json").write_text(json.dumps(questions, ensure_ascii=False))
    out = tmp_path / "run"
    assert (
        cli.main(
            [
                "eval",
                "mcq",
                "--questions",
                str(tmp_path / "q.json"),
                "--responses",
                str(released / "responses-qwen2.5-7b-instruct.json"),
                "--out",
                str(out),
            ]
        )
        == 0
    )
    err = capsys.readouterr().err
    assert "29 responses joined" in err and "1 questions have no response" in err and "778 responses match no" in err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["n"] == 30 and summary["missing"] == 1 and summary["join"]["unmatched"] == 778
    assert summary["by_region"] == {"北海道": summary["by_region"]["北海道"]}


def test_the_human_answers_score(released, tmp_path):
    """The released human answers (user_answer): 19 of the first 40 are right, as their `judge`."""
    out = tmp_path / "human"
    assert cli.main(["eval", "mcq", "--responses", str(released / "human_eval-first40.json"), "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["n"] == 40 and summary["accuracy"] == 19 / 40 and summary["coverage"] == 1.0
    assert summary["accuracy_by_reference"] == 19 / 40 and summary["reference_disagreements"] == []


def test_the_report_shows_where_we_differ_from_the_reference(data_dir, tmp_path):
    """llm-jp's released answers: bare `1`s are no answer (as the published verdicts say), and
    the rows that are the correct option verbatim but judged otherwise are listed as such."""
    path = tmp_path / "responses-llm-jp.json"
    path.write_bytes(
        lzma.open(data_dir.parent / "yokaieval" / "responses-llm-jp-13b-instruct-full-jaster-v1.0.json.xz").read()
    )
    out = tmp_path / "run"
    assert cli.main(["eval", "mcq", "--responses", str(path), "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert abs(summary["accuracy_by_reference"] - 0.154) < 0.0006 and summary["read_as"]["none"] > 350
    kinds = {g["kind"]: g for g in summary["reference_disagreements"]}
    verbatim = [g for k, g in kinds.items() if k.startswith("the response is the correct option")]
    assert sum(g["n"] for g in verbatim) == 20
    assert all(e["pred"] == e["answer_index"] for g in verbatim for e in g["examples"])
    report = (out / "report.md").read_text()
    assert "## Where we differ from the reference verdicts" in report and "the response is the correct option" in report
    assert "NaN" not in (out / "summary.json").read_text()


def _mcq_parquet(path, n=12):
    rows = []
    for i in range(n):
        choices = [f"選択肢{i}-{k}" for k in range(4)]
        rows.append(
            mcq_row(
                i,
                f"問{i}：どれが正しいか。",
                choices,
                i % 4,
                type=MCQ_TYPES[i % 6],
                region=MCQ_REGIONS[i % 3],
                title=f"妖怪{i}",
            )
        )
    write_mcq(path, rows)
    return path


def _answering(messages):
    """A model that answers questions 0-5 right, 6-8 wrong, 9 with several options, 10-11 in
    prose the parser cannot read."""
    prompt = messages[-1]["content"]
    if "task: read-answer" in messages[0]["content"]:
        return json.dumps({"verdict": "選択肢11-3" in prompt and "正解" in prompt})
    i = int(prompt.split("：")[0].removeprefix("問"))
    options = [line[2:] for line in prompt.splitlines() if line.startswith("- ")]
    if i < 6:
        return f"回答：{options[i % 4]}"
    if i < 9:
        return options[(i + 1) % 4]
    if i == 9:
        return f"{options[0]}か{options[1]}です。"
    return "正解は最後の選択肢です。" if i == 11 else "わかりません。"


def test_generation_mode_through_an_endpoint_with_a_judge(tmp_path):
    rows = mcq.read_questions(_mcq_parquet(tmp_path / "mcq.parquet"))
    with ChatServer(_answering) as server:
        model = EndpointModel(
            LLMClient(OpenAIBackend("model-under-test", base_url=server.url), RequestCache(tmp_path / "c.sqlite"))
        )
        judge = LLMClient(OpenAIBackend("judge", base_url=server.url), RequestCache(tmp_path / "c.sqlite"))
        items = mcq.evaluate_generate(rows, model, judge=judge)
        asked = [c for c in server.calls if c["model"] == "model-under-test"]
    assert len(asked) == 12 and asked[0]["temperature"] == 0.1 and asked[0]["max_tokens"] == 128
    summary = mcq.summarize(items)
    assert [i["pred"] for i in items[:9]] == [0, 1, 2, 3, 0, 1, 3, 0, 1]
    assert summary["unread"] == 3 and summary["judged"] == 3  # several, "わかりません", prose
    assert items[11]["correct"] is True and items[10]["correct"] is False
    assert summary["accuracy"] == 7 / 12 and summary["coverage"] == 9 / 12


@pytest.mark.slow
def test_loglikelihood_mode(tiny_model, tmp_path):
    rows = mcq.read_questions(_mcq_parquet(tmp_path / "mcq.parquet", n=8))
    items = mcq.evaluate_loglikelihood(rows, tiny_model)
    for row, item in zip(rows, items):
        ll = [tiny_model.loglikelihood([(mcq.question_prompt(row) + "\n回答：", c)])[0][0] for c in row["choices"]]
        assert item["loglikelihoods"] == pytest.approx(ll, abs=1e-4)
        assert item["pred"] == max(range(4), key=ll.__getitem__)
        by_bytes = [x / len(c.encode()) for x, c in zip(ll, row["choices"])]
        assert item["pred_bytes"] == max(range(4), key=by_bytes.__getitem__)
    summary = mcq.summarize(items)
    assert summary["accuracy"] == sum(i["pred"] == r["answer_index"] for i, r in zip(items, rows)) / 8
    assert {"acc", "acc_norm", "acc_norm_bytes"} <= set(summary)


def test_results_directory_and_cli(tmp_path, released, capsys):
    out = tmp_path / "run"
    code = cli.main(
        [
            "eval",
            "mcq",
            "--questions",
            str(released / "YokaiEval-first40.json"),
            "--responses",
            str(released / "responses-calm2-7b-chat.json"),
            "--out",
            str(out),
        ]
    )
    assert code == 0 and "40 questions" in capsys.readouterr().out
    for name in ("items.parquet", "summary.json", "report.md", "accuracy_by_type.png", "accuracy_by_region.png"):
        assert (out / name).stat().st_size > 0
    items = pq.read_table(out / "items.parquet")
    summary = json.loads((out / "summary.json").read_text())
    assert items.num_rows == 40 and summary["model"] == "calm2-7b-chat"
    assert math.isclose(summary["accuracy"], sum(items.column("correct").to_pylist()) / 40)
    assert "## By region" in (out / "report.md").read_text()


@pytest.mark.slow
def test_cli_local_model_loglikelihood(tmp_path, tiny_model_dir, capsys):
    out = tmp_path / "ll"
    code = cli.main(
        [
            "eval",
            "mcq",
            "--questions",
            str(_mcq_parquet(tmp_path / "mcq.parquet", 4)),
            "--model",
            str(tiny_model_dir),
            "--mode",
            "loglikelihood",
            "--device",
            "cpu",
            "--out",
            str(out),
        ]
    )
    assert code == 0 and "acc_norm" in capsys.readouterr().out
    summary = json.loads((out / "summary.json").read_text())
    assert summary["mode"] == "loglikelihood" and summary["settings"]["bos"] == "tokenizer"
    assert "|split:whole|" in summary["signature"] and summary["signature"] in (out / "report.md").read_text()
    # --bos always: every context starts with BOS, so the numbers change and the signature says so
    code = cli.main(
        [
            "eval",
            "mcq",
            "--questions",
            str(tmp_path / "mcq.parquet"),
            "--model",
            str(tiny_model_dir),
            "--mode",
            "loglikelihood",
            "--bos",
            "always",
            "--device",
            "cpu",
            "--out",
            str(tmp_path / "bos"),
        ]
    )
    forced = json.loads((tmp_path / "bos" / "summary.json").read_text())
    assert code == 0 and forced["settings"]["bos"] == "forced" and "|bos:forced|" in forced["signature"]
    before = pq.read_table(out / "items.parquet").column("loglikelihoods").to_pylist()
    after = pq.read_table(tmp_path / "bos" / "items.parquet").column("loglikelihoods").to_pylist()
    assert before != after


def test_bad_question_files(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('[{"question": "q", "choices": ["a", "b"], "answer": "c"}]')
    with pytest.raises(WikioriginError, match=r"bad.json: row 0: the answer 'c' is not one of the choices"):
        mcq.read_questions(bad)
    bad.write_text('[{"question": "q", "choi')
    with pytest.raises(WikioriginError, match="bad.json: not JSON"):
        mcq.read_questions(bad)
    assert cli.main(["eval", "mcq", "--questions", str(tmp_path / "none.json"), "--out", str(tmp_path / "o")]) == 2
    assert "none.json: no such file" in capsys.readouterr().err
    with pytest.raises(WikioriginError, match="none of the 2 questions carries a recorded response"):
        mcq.evaluate_generate(mcq.read_questions(_mcq_parquet(tmp_path / "m.parquet", 2)))


def test_released_rows_as_parquet(released, tmp_path):
    rows = json.loads((released / "YokaiEval-first40.json").read_text())
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "yokaieval.parquet")
    read = mcq.read_questions(tmp_path / "yokaieval.parquet")
    assert [r["answer_index"] for r in read] == [r["choices"].index(r["answer"]) for r in rows]


@pytest.mark.slow
def test_cli_local_model_generation(tmp_path, tiny_model_dir, capsys):
    out = tmp_path / "gen"
    code = cli.main(
        [
            "eval",
            "mcq",
            "--questions",
            str(_mcq_parquet(tmp_path / "mcq.parquet", 6)),
            "--model",
            str(tiny_model_dir),
            "--device",
            "cpu",
            "--max-new-tokens",
            "8",
            "--out",
            str(out),
        ]
    )
    assert code == 0 and "parser read" in capsys.readouterr().out
    items = pq.read_table(out / "items.parquet").to_pylist()
    assert len(items) == 6 and all(isinstance(i["response"], str) for i in items)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["model"] == "tiny" and summary["n"] == 6
    assert summary["accuracy"] == sum(i["pred"] == i["answer_index"] for i in items) / 6


@pytest.mark.slow
def test_failed_requests_are_counted_and_reported(tmp_path, capsys):
    path = _mcq_parquet(tmp_path / "mcq.parquet", 4)
    rows = mcq.read_questions(path)
    with ChatServer(_answering) as server:
        server.faults = ["500"] * 2  # the first question's request fails twice: given up
        client = LLMClient(
            OpenAIBackend("m", base_url=server.url),
            RequestCache(tmp_path / "c.sqlite"),
            backoff=0.01,
            retries=1,
            concurrency=1,
        )
        items = mcq.evaluate_generate(rows, EndpointModel(client))
    summary = mcq.summarize(items)
    assert summary["failed"] == 1 and items[0]["response"] is None and items[0]["correct"] is None
    assert summary["accuracy"] == 3 / 3 and summary["n"] == 4 and summary["answered"] == 3  # no answer: not wrong
    mcq.write_mcq_results(tmp_path / "run", items, summary)
    assert "1 requests failed after retries" in (tmp_path / "run" / "report.md").read_text()
    assert (
        cli.main(
            [
                "eval",
                "mcq",
                "--questions",
                str(path),
                "--mode",
                "loglikelihood",
                "--model",
                "m",
                "--endpoint",
                "http://127.0.0.1:9",
                "--out",
                str(tmp_path / "x"),
            ]
        )
        == 2
    )
    assert "cannot reach http://127.0.0.1:9" in capsys.readouterr().err  # the endpoint check


@pytest.mark.parametrize(
    "change,message",
    [
        ({"response": 2}, r"row 1: the response is int 2, expected str"),
        ({"question_prompt": 5}, r"row 1: question_prompt is int 5, expected str"),
        ({"judge": "true"}, r"row 1: the verdict \(judge\) is str 'true', expected bool"),
        (
            {"question": {"question": "問", "choices": ["a", "b"], "answer_index": "x"}},
            r"row 1: answer_index 'x' is not one",
        ),
        (
            {"question": {"question": "問", "choices": ["a", "b"], "answer_index": 9}},
            r"row 1: answer_index 9 is not one of the 2",
        ),
        (
            {"question": {"question": "問", "choices": ["空家", "。"], "answer": "空家"}},
            r"row 1: option 2 '。' is empty",
        ),
        (
            {"question": {"question": "問", "choices": ["三千年", "3千年"], "answer": "三千年"}},
            r"row 1: options 1 and 2",
        ),
        # an answer that disagrees with answer_index is not scored against either
        (
            {"question": {"question": "問", "choices": ["空家", "山"], "answer": "山", "answer_index": 0}},
            r"row 1: answer '山' \(option 2\) disagrees with answer_index 0 \(option 1, '空家'\): which is right",
        ),
        (
            {"question": {"question": "問", "choices": ["空家", "山"], "answer": "海", "answer_index": 1}},
            r"row 1: answer '海' \(none of the options\) disagrees with answer_index 1",
        ),
    ],
)
def test_released_rows_that_cannot_be_scored(released, tmp_path, capsys, change, message):
    rows = json.loads((released / "responses-calm2-7b-chat.json").read_text())[:3]
    rows[1] = {**rows[1], **change}
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(rows, ensure_ascii=False))
    assert cli.main(["eval", "mcq", "--responses", str(bad), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert re.search(r"bad.json: " + message, err) and len(err.strip().splitlines()) == 1


def test_an_answer_that_agrees_with_answer_index_is_read(tmp_path):
    from wikiorigin.evaluators.questions import read_questions

    rows = [
        {"question": "問", "choices": ["空家", "山"], "answer": " 山。", "answer_index": 1},  # the same, normalized
        {"question": "問2", "choices": ["空家", "山"], "answer": "", "answer_index": 0},
    ]  # no answer: the index
    path = tmp_path / "q.json"
    path.write_text(json.dumps(rows, ensure_ascii=False))
    assert [r["answer_index"] for r in read_questions(path)] == [1, 0]


def test_what_cannot_join_is_said_and_signed(released, tmp_path, capsys):
    (tmp_path / "empty.json").write_text("[]")
    assert cli.main(["eval", "mcq", "--responses", str(tmp_path / "empty.json"), "--out", str(tmp_path / "o")]) == 2
    assert "empty.json: no rows" in capsys.readouterr().err
    first40 = released / "YokaiEval-first40.json"
    other = tmp_path / "other.json"
    other.write_text(
        json.dumps(
            [
                {
                    "question": {"question": "無関係な問い", "choices": ["甲", "乙"], "answer": "甲"},
                    "response": "甲",
                    "judge": True,
                }
            ],
            ensure_ascii=False,
        )
    )
    assert (
        cli.main(["eval", "mcq", "--questions", str(first40), "--responses", str(other), "--out", str(tmp_path / "o")])
        == 2
    )
    assert "other.json: none of its 1 responses matches one of the 40 questions of" in capsys.readouterr().err
    assert (
        cli.main(
            [
                "eval",
                "mcq",
                "--responses",
                str(other),
                "--model",
                "m",
                "--endpoint",
                "http://127.0.0.1:9",
                "--out",
                str(tmp_path / "o"),
            ]
        )
        == 2
    )
    assert "give --responses or --model, not both" in capsys.readouterr().err
    # a response given twice is used once and said; the share answered is in the signature
    recorded = json.loads((released / "responses-calm2-7b-chat.json").read_text())[:10]
    twice = tmp_path / "twice.json"
    twice.write_text(json.dumps(recorded + recorded[:2], ensure_ascii=False))
    assert (
        cli.main(["eval", "mcq", "--questions", str(first40), "--responses", str(twice), "--out", str(tmp_path / "t")])
        == 0
    )
    assert "2 responses repeat a question already answered" in capsys.readouterr().err
    summary = json.loads((tmp_path / "t" / "summary.json").read_text())
    assert summary["join"]["duplicates"] == 2 and summary["settings"]["responses"] == "10/40"
    assert "|responses:10/40|" in summary["signature"]


@pytest.mark.slow
def test_an_evaluation_whose_every_request_failed_exits_1(tmp_path, capsys):
    """eval mcq --endpoint against a server that answers every question with 500: exit 1 with
    the first reason, not 'accuracy 0.000' and exit 0; one failure among others is a warning."""
    path = _mcq_parquet(tmp_path / "mcq.parquet", 3)
    with ChatServer(_answering) as server:
        server.faults = ["500"] * 50
        code = cli.main(
            [
                "eval",
                "mcq",
                "--questions",
                str(path),
                "--model",
                "m",
                "--endpoint",
                server.url,
                "--retries",
                "0",
                "--cache",
                str(tmp_path / "c.sqlite"),
                "--out",
                str(tmp_path / "all"),
            ]
        )
        err = capsys.readouterr().err
        assert code == 1 and "wikiorigin: error: all 3 requests failed; the first:" in err
        server.faults = ["500"]
        code = cli.main(
            [
                "eval",
                "mcq",
                "--questions",
                str(path),
                "--model",
                "m2",
                "--endpoint",
                server.url,
                "--retries",
                "0",
                "--concurrency",
                "1",
                "--cache",
                str(tmp_path / "c.sqlite"),
                "--out",
                str(tmp_path / "some"),
            ]
        )
        assert code == 1 and "error: 1 of 3 requests failed after their retries" in capsys.readouterr().err
        assert json.loads((tmp_path / "some" / "summary.json").read_text())["complete"] is False


def test_two_evaluations_into_one_directory(tmp_path, capsys):
    """A run holds OUT.lock: a second run into the same results directory is refused."""
    from wikiorigin.llm.lock import RunLock

    path = _mcq_parquet(tmp_path / "mcq.parquet", 2)
    with RunLock(tmp_path / "run"):
        code = cli.main(
            ["eval", "mcq", "--questions", str(path), "--responses", str(path), "--out", str(tmp_path / "run")]
        )
    assert code == 2 and "run is being written by another run (process" in capsys.readouterr().err


def test_rows_of_several_regions_count_apart_from_each_region(tmp_path):
    """A two-step set names several regions in a row (``東北, 関東``): such rows count in one
    ``(several)`` group, so each region's group holds only rows of that region alone (as
    YokaiEval's Table 6 counts them), and a type holding ``, `` is still one type."""
    regions = ["東北", "東北, 関東", "関東", "関東, 東北, 九州", "東北"]
    rows = [
        mcq_row(i, f"問{i}：どれか。", [f"c{i}-{k}" for k in range(4)], 0, region=r, type="姿, 形")
        for i, r in enumerate(regions)
    ]
    path = write_mcq(tmp_path / "mcq.parquet", rows)
    pq.write_table(
        pa.Table.from_pylist([{**r, "response": r["choices"][0]} for r in pq.read_table(path).to_pylist()]),
        tmp_path / "r.parquet",
    )
    assert cli.main(["eval", "mcq", "--responses", str(tmp_path / "r.parquet"), "--out", str(tmp_path / "run")]) == 0
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert {k: v["n"] for k, v in summary["by_region"].items()} == {"東北": 2, "関東": 1, "(several)": 2}
    assert {k: v["n"] for k, v in summary["by_type"].items()} == {"姿, 形": 5}
