import collections
import json
import re
import warnings

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.openai_server import ChatServer
from wikiorigin.builders.mcq import MCQConfig, balance_positions, build_mcq, near_duplicates
from wikiorigin.corpora.articles import article_row
from wikiorigin.dumps.pages import iter_pages
from wikiorigin.llm import LLMClient, OpenAIBackend, RequestCache
from wikiorigin.schemas import ARTICLES, FAILED, MCQ, MCQ_REGIONS as REGIONS, MCQ_TYPES as TYPES

JA = "jawiki-20230501-pages-articles-multistream_first100k-lines.xml.xz"
TITLES = ["アンパサンド", "地理", "音楽家", "個人", "液晶", "言語"]


@pytest.fixture(scope="module")
def articles(tmp_path_factory, data_dir):
    """Real jawiki articles in the articles schema."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pages = [p for p in iter_pages(data_dir / JA, namespaces=[0]) if p.title in TITLES]
    rows = [article_row(p, "jawiki", "ja.wikipedia.org", {})[0] for p in pages]
    path = tmp_path_factory.mktemp("articles") / "articles.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=ARTICLES), path)
    return path


def scripted(messages):
    """Answers by task (the first line of the system prompt) and article (the user text)."""
    task = messages[0]["content"].splitlines()[0].removeprefix("task: ")
    user = messages[-1]["content"]
    title = user.splitlines()[0]
    if task == "generate":
        questions = [{"question": f"{title}について、よく言われることはどれか。",
                      "choices": ["甲", "乙", "丙", "丁"], "answer": "乙"},
                     {"question": f"{title}について、よく言われることはどれか？",  # a near-duplicate
                      "choices": ["甲", "乙", "丙", "丁"], "answer": "乙"},
                     {"question": f"{title}の二つ目の問い", "choices": ["甲", "乙", "丙"], "answer": "甲"}]
        if title == "言語":
            questions = [{"question": "言語の問い", "choices": ["A", "B", "C", "D"], "answer": "C"}]
        return "```json\n" + json.dumps({"questions": questions}, ensure_ascii=False) + "\n```"
    if task == "check":
        lines = [l for l in user.splitlines() if re.match(r"^\d\. ", l)]
        wanted = "乙" if title != "地理" else "丁"  # the checker gets 地理 wrong
        index = next((int(l[0]) for l in lines if l[3:] == wanted), None)
        return json.dumps({"answer_index": index if title != "言語" else 2})
    if task == "attribute":
        return json.dumps({"refs": [] if title == "液晶" else [1, 99]})
    if task == "label":
        return json.dumps({"type": TYPES[0], "region": "関東"}, ensure_ascii=False)
    raise AssertionError(task)


def make_client(server, tmp_path, model="gen"):
    return LLMClient(OpenAIBackend(model, base_url=server.url), RequestCache(tmp_path / f"{model}.sqlite"),
                     concurrency=4, backoff=0.01)


def test_build_mcq(articles, tmp_path):
    out = tmp_path / "mcq.parquet"
    with ChatServer(answer=scripted) as server:
        report = build_mcq(articles, out, make_client(server, tmp_path), config=MCQConfig(per_article=3))
        calls = len(server.calls)
        again = build_mcq(articles, tmp_path / "again.parquet", make_client(server, tmp_path),
                          config=MCQConfig(per_article=3))
        assert len(server.calls) == calls and again == report  # the re-run pays for nothing
    table = pq.read_table(out)
    assert table.schema.remove_metadata() == MCQ
    rows = table.to_pylist()
    titles = sorted(r["title"] for r in rows)
    # 地理: the checker failed it; 液晶: no footnote backs it; duplicates and 3-option rows dropped
    assert titles == ["アンパサンド", "個人", "言語", "音楽家"]
    assert report.dropped == {"validate": 5, "deduplicate": 5, "check": 1, "attribute": 1}
    for row in rows:
        assert row["choices"][row["answer_index"]] == row["answer"] and len(set(row["choices"])) == 4
        assert row["ref"] == [1] and len(row["refs_detail"]) == 1  # 99 is no footnote of theirs
        assert row["type"] in TYPES and row["region"] in REGIONS and row["language"] == "ja"
    assert sorted(r["answer_index"] for r in rows) == [0, 1, 2, 3]  # balanced, not all at 1
    failed = pq.read_table(tmp_path / "mcq.failed.parquet")
    assert failed.schema.remove_metadata() == FAILED
    failed = failed.to_pylist()
    assert collections.Counter(f["step"] for f in failed) == collections.Counter(report.dropped)
    short = next(f for f in failed if f["step"] == "validate")
    assert short["reason"] == "3 options, not 4" and short["wiki"] == "jawiki" and short["model"] == "gen"
    assert json.loads(short["item"]) == {"question": f"{short['source']}の二つ目の問い", "choices": ["甲", "乙", "丙"],
                                         "answer": "甲"}
    assert pq.read_table(tmp_path / "again.parquet").equals(table)


def test_balance_positions_is_uniform_and_seeded():
    rows = [{"id": str(i), "choices": ["a", "b", "c", "d"], "answer": "a"} for i in range(810)]
    balance_positions(rows, seed=1)
    counts = collections.Counter(r["answer_index"] for r in rows)
    assert max(counts.values()) - min(counts.values()) <= 1
    again = [{"id": str(i), "choices": ["a", "b", "c", "d"], "answer": "a"} for i in range(810)]
    balance_positions(again, seed=1)
    assert [r["choices"] for r in rows] == [r["choices"] for r in again]


def test_near_duplicates():
    assert near_duplicates(["河童はどこに住むか。", "河童はどこに住むか？", "天狗の鼻は長いか。"], 0.8) == [1]


def test_cli_build_mcq(articles, tmp_path, capsys):
    from wikiorigin.cli import main

    with ChatServer(answer=scripted) as server:
        args = ["build", "mcq", "--articles", str(articles), "--out", str(tmp_path / "m.parquet"),
                "--model", "gen", "--base-url", server.url, "--cache", str(tmp_path / "c.sqlite"),
                "--per-article", "3", "--prices", '{"input": 1, "output": 2}']
        assert main(args + ["--dry-run"]) == 0
        assert "6 calls to make first (0 cached)" in capsys.readouterr().out and not server.calls
        assert main(args) == 0
    captured = capsys.readouterr()
    assert "4 questions from 6 articles (16 generated" in captured.out
    assert "generator: " in captured.err and "$" in captured.err


def test_dataset_card_and_load_dataset(articles, tmp_path):
    datasets = pytest.importorskip("datasets", reason="the test extra is not installed")
    from wikiorigin.builders.dataset import write_card

    directory = tmp_path / "yokaieval-mini"
    with ChatServer(answer=scripted) as server:
        build_mcq(articles, directory / "test.parquet", make_client(server, tmp_path),
                  config=MCQConfig(per_article=3), failed=tmp_path / "failed.parquet")
    card = write_card(directory, "mcq", "YokaiEval mini", "Questions on Japanese yokai.").read_text()
    assert card.startswith("---\nlicense: cc-by-sa-4.0\nlanguage:\n- ja\n")
    assert "- multiple-choice" in card and '"generator": "gen"' in card
    loaded = datasets.load_dataset(str(directory), split="test")
    assert len(loaded) == 4 and loaded[0]["choices"][loaded[0]["answer_index"]] == loaded[0]["answer"]
    same = datasets.load_dataset("parquet", data_files=str(directory / "test.parquet"), split="train")
    assert same["id"] == loaded["id"]


def test_cli_card_for_an_empty_directory(tmp_path, capsys):
    from wikiorigin.cli import main

    (tmp_path / "empty").mkdir()
    assert main(["build", "card", str(tmp_path / "empty"), "--kind", "mcq", "--title", "X"]) == 2
    assert "empty: no Parquet files to describe" in capsys.readouterr().err


def test_card_names_a_file_that_is_not_parquet(tmp_path):
    from wikiorigin.builders.dataset import write_card
    from wikiorigin.errors import WikioriginError

    (tmp_path / "test.parquet").write_text("not parquet")
    with pytest.raises(WikioriginError, match=r"test\.parquet: not a Parquet file \("):
        write_card(tmp_path, "mcq", "X", "")


def test_near_duplicates_are_looked_for_within_one_article_of_one_wiki():
    from wikiorigin.builders.mcq import _deduplicate

    dropped = []
    same = {"question": "Where is it said to appear?"}
    candidates = [({"wiki": "jawiki", "page_id": 5}, 0, same), ({"wiki": "elwiki", "page_id": 5}, 0, same),
                  ({"wiki": "jawiki", "page_id": 5}, 1, same)]
    kept = _deduplicate(candidates, 0.8, lambda article, *rest: dropped.append(article["wiki"]))
    assert [(a["wiki"], n) for a, n, _ in kept] == [("jawiki", 0), ("elwiki", 0)] and dropped == ["jawiki"]
