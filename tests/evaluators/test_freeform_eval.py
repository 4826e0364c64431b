"""Free-form evaluation through a model behind an OpenAI-compatible server: answers read from
responses, scores, the splits by language and English article, and the CLI."""

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.openai_server import ChatServer
from wikiorigin import __version__, cli
from wikiorigin.errors import WikioriginError
from wikiorigin.evaluators import freeform
from wikiorigin.evaluators.models import EndpointModel
from wikiorigin.evaluators.signature import data_hash, text_hash
from wikiorigin.llm import LLMClient, OpenAIBackend, RequestCache
from wikiorigin.schemas import FREEFORM

ITEMS = [  # qid, language, has an English article, answers, what the model says
    ("Q1", "jawiki", True, ["河童", "Kappa", "カッパ"], "Answer: Kappa."),
    ("Q2", "jawiki", False, ["天狗", "Tengu"], "It is probably 天狗"),
    ("Q3", "jawiki", False, ["ぬらりひょん", "Nurarihyon"], "nurarihyon"),
    ("Q4", "fiwiki", True, ["Väinämöinen"], "Vainamoinen"),
    ("Q5", "fiwiki", False, ["Sampo"], "Kalevala"),
]


def _parquet(path):
    rows = [
        {
            "id": q,
            "question": f"Which being is meant? ({q})",
            "question_source": f"どの妖怪か ({q})",
            "answers": answers,
            "qid": q,
            "origin_wiki": wiki,
            "title": answers[0],
            "n_wikis": 3,
            "has_enwiki": en,
            "criteria": {n: 5 for n in FREEFORM.field("criteria").type.names},
            "language": wiki[:2],
            "generator": "g",
            "prompt_sha1": "x",
            "source_revision_id": 1,
        }
        for q, wiki, en, answers, _ in ITEMS
    ]
    pq.write_table(pa.Table.from_pylist(rows, schema=FREEFORM), path)
    return path


def _answer(messages):
    prompt = messages[-1]["content"]
    return next(said for q, *_, said in ITEMS if f"({q})" in prompt)


@pytest.mark.parametrize(
    "response,expected",
    [
        ("Answer: Kappa.", "Kappa"),
        ("「河童」です", "河童」です"),
        ("\n\n**Tengu**\nbecause...", "Tengu"),
        ("回答：天狗。", "天狗"),
        (None, ""),
        ("", ""),
    ],
)
def test_answer_text(response, expected):
    assert freeform.answer_text(response) == expected


def test_scores_and_splits(tmp_path):
    rows = freeform.read_freeform(_parquet(tmp_path / "ff.parquet"))
    with ChatServer(_answer) as server:
        model = EndpointModel(LLMClient(OpenAIBackend("m", base_url=server.url), RequestCache(tmp_path / "c.sqlite")))
        items = freeform.evaluate_freeform(rows, model, temperature=0.0)
    exact = [i["exact"] for i in items]
    assert exact == [True, False, True, False, False]  # case-folded "nurarihyon" matches
    assert items[3]["exact_romanized"] is True and items[3]["exact"] is False  # Väinämöinen
    assert items[1]["chrf"] == pytest.approx(freeform.chrf("it is probably 天狗", "天狗"))
    summary = freeform.summarize_freeform(items)
    assert summary["exact"] == pytest.approx(2 / 5)
    assert summary["by_language"]["jawiki"]["exact"] == pytest.approx(2 / 3)
    assert summary["by_enwiki"]["with English article"]["n"] == 2
    assert summary["by_language_enwiki"]["fiwiki / no en"]["exact"] == 0.0
    assert summary["exact_romanized"] == pytest.approx(3 / 5)


def test_cli(tmp_path, capsys):
    path = _parquet(tmp_path / "ff.parquet")
    with ChatServer(_answer) as server:
        code = cli.main(
            [
                "eval",
                "freeform",
                "--questions",
                str(path),
                "--model",
                "m",
                "--endpoint",
                server.url,
                "--cache",
                str(tmp_path / "c.sqlite"),
                "--out",
                str(tmp_path / "run"),
            ]
        )
        assert server.calls[0]["temperature"] == 0.0 and server.calls[0]["max_tokens"] == 32
    assert code == 0 and "exact 0.400" in capsys.readouterr().out
    report = (tmp_path / "run" / "report.md").read_text()
    assert "| jawiki | 3 |" in report and (tmp_path / "run" / "chrf_by_language.png").exists()
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["n"] == 5
    settings = summary["settings"]
    host = server.url.split("//")[1].split("/")[0]
    assert settings == {
        "task": "freeform",
        "model": f"m@{host}",
        "base_url": server.url.replace(host.split(":")[0], "localhost").rstrip("/"),  # normalised
        "template": "server",
        "temperature": 0.0,
        "top_p": 1.0,
        "seed": 0,
        "max_new_tokens": 32,
        "language": "en",
        "instruction": text_hash(freeform.PROMPTS["en"]),
        "parser": 1,
        "chrf": "c6w0b2",
        "data": data_hash(freeform.read_freeform(path), ("id", "question", "question_source", "answers")),
        "version": __version__,
    }
    assert f"Signature: `{summary['signature']}`" in report
    assert summary["signature"].startswith(f"wikiorigin-eval|task:freeform|model:m@{host}|template:server|")


@pytest.mark.slow
def test_runs_at_other_temperatures_are_flagged(tmp_path, capsys):
    path = _parquet(tmp_path / "ff.parquet")
    runs = []
    with ChatServer(_answer) as server:
        for name, temperature in (("greedy", "0"), ("sampled", "0.7")):
            runs.append(tmp_path / name)
            assert (
                cli.main(
                    [
                        "eval",
                        "freeform",
                        "--questions",
                        str(path),
                        "--model",
                        name,
                        "--endpoint",
                        server.url,
                        "--temperature",
                        temperature,
                        "--cache",
                        str(tmp_path / "c.sqlite"),
                        "--out",
                        str(runs[-1]),
                    ]
                )
                == 0
            )
    capsys.readouterr()
    assert cli.main(["eval", "compare", *map(str, runs), "--metric", "chrf", "--out", str(tmp_path / "cmp")]) == 0
    err = capsys.readouterr().err
    assert f"warning: {runs[1]} differs from {runs[0]} in temperature (temperature: 0.7 vs 0.0)" in err


@pytest.mark.slow
def test_failed_requests_are_counted_not_dropped(tmp_path):
    rows = freeform.read_freeform(_parquet(tmp_path / "ff.parquet"))
    with ChatServer(_answer) as server:
        server.faults = ["500"] * 20
        client = LLMClient(
            OpenAIBackend("m", base_url=server.url),
            RequestCache(tmp_path / "c.sqlite"),
            backoff=0.01,
            retries=1,
            concurrency=1,
        )
        items = freeform.evaluate_freeform(rows, EndpointModel(client))
    summary = freeform.summarize_freeform(items)
    assert summary["n"] == 5 and summary["failed"] >= 1 and summary["answered"] == 5 - summary["failed"]
    assert all(i["exact"] is None and i["chrf"] is None for i in items if i["failed"])  # no answer: not wrong


def test_bad_files(tmp_path):
    bad = tmp_path / "ff.json"
    bad.write_text(json.dumps([{"question": "q"}]))
    with pytest.raises(WikioriginError, match="ff.json: row 0 has no question or no answers"):
        freeform.read_freeform(bad)
