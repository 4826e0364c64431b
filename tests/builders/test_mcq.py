import collections
import dataclasses
import hashlib
import json
import lzma
import re
import warnings

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.openai_server import ChatServer
from wikiorigin.builders.mcq import MCQConfig, balance_positions, build_mcq, near_duplicates
from wikiorigin.corpora.articles import article_row
from wikiorigin.dumps.pages import iter_pages
from wikiorigin.errors import WikioriginError
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
        # a tag of the article: two articles' questions are more than the title apart (the set is deduplicated)
        tag = hashlib.sha1(title.encode()).hexdigest()[:12]
        questions = [
            {
                "question": f"{title}について、よく言われることはどれか。（{tag}）",
                "choices": ["甲", "乙", "丙", "丁"],
                "answer": "乙",
            },
            {
                "question": f"{title}について、よく言われることはどれか？（{tag}）",  # a near-duplicate
                "choices": ["甲", "乙", "丙", "丁"],
                "answer": "乙",
            },
            {"question": f"{title}の二つ目の問い", "choices": ["甲", "乙", "丙"], "answer": "甲"},
        ]
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
    if task == "label-type":  # the paper's way: the type from the question, the regions from the article
        return json.dumps({"type": TYPES[0]}, ensure_ascii=False)
    if task == "label-region":
        return json.dumps({"regions": ["関東", "東北"] if title == "個人" else ["関東"]}, ensure_ascii=False)
    raise AssertionError(task)


def make_client(server, tmp_path, model="gen"):
    return LLMClient(
        OpenAIBackend(model, base_url=server.url),
        RequestCache(tmp_path / f"{model}.sqlite"),
        concurrency=4,
        backoff=0.01,
    )


@pytest.mark.slow
def test_build_mcq(articles, tmp_path):
    out = tmp_path / "mcq.parquet"
    with ChatServer(answer=scripted) as server:
        report = build_mcq(articles, out, make_client(server, tmp_path), config=MCQConfig(per_article=3))
        calls = len(server.calls)
        again = build_mcq(
            articles, tmp_path / "again.parquet", make_client(server, tmp_path), config=MCQConfig(per_article=3)
        )
        assert len(server.calls) == calls  # the re-run pays for nothing: every answer from the cache
        assert again.usage["generator"]["cache_hits"] == again.usage["generator"]["requests"] == calls
        assert dataclasses.replace(again, usage={}) == dataclasses.replace(report, usage={})
    table = pq.read_table(out)
    assert table.schema.remove_metadata() == MCQ
    rows = table.to_pylist()
    titles = sorted(r["title"] for r in rows)
    # 地理: the checker failed it; 液晶: no footnote backs it; duplicates and 3-option rows dropped
    # (duplicates last, on what passed every other step: 地理's and 液晶's pairs fail before)
    assert titles == ["アンパサンド", "個人", "言語", "音楽家"]
    assert report.dropped == {"validate": 5, "duplicate": 3, "check": 2, "attribute": 2}
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
    assert json.loads(short["item"]) == {
        "question": f"{short['source']}の二つ目の問い",
        "choices": ["甲", "乙", "丙"],
        "answer": "甲",
    }
    assert pq.read_table(tmp_path / "again.parquet").equals(table)
    for repeat in (f for f in failed if f["step"] == "duplicate"):  # each names the question it repeats
        kept = next(r for r in rows if r["title"] == repeat["source"])
        assert f"of question {kept['id']} of {kept['title']!r}: {kept['question']} (乙)" in repeat["reason"]
        assert json.loads(repeat["item"])["question"] == kept["question"].replace("。", "？", 1)


def _task(call: dict) -> str:
    return call["messages"][0]["content"].splitlines()[0].removeprefix("task: ")


@pytest.mark.slow
def test_every_step_samples_at_the_papers_settings(articles, tmp_path):
    """Temperature 0.7, top_p 1.0 and 200 output tokens on every step (check, attribute
    and label ran at temperature 0 without a limit); generation's limit scales with per_article."""
    out = tmp_path / "mcq.parquet"
    with ChatServer(answer=scripted) as server:
        build_mcq(articles, out, make_client(server, tmp_path), config=MCQConfig(per_article=3))
    by_task = collections.defaultdict(list)
    for call in server.calls:
        by_task[_task(call)].append(call)
    assert sorted(by_task) == ["attribute", "check", "generate", "label"]
    for task, calls in by_task.items():
        for call in calls:
            assert (call["temperature"], call["top_p"]) == (0.7, 1.0)
            assert call["max_tokens"] == (600 if task == "generate" else 200), task
    meta = json.loads(pq.read_schema(out).metadata[b"wikiorigin"])
    assert meta["params"] == {"temperature": 0.7, "top_p": 1.0, "max_tokens": 200}
    assert meta["generation_params"]["max_tokens"] == 600 and meta["duplicate_threshold"] == 0.9


def test_the_region_is_labelled_from_the_whole_article(articles, tmp_path):
    """The label request reads the article as far as generation does (it was cut at
    2,000 characters); 言語 (11,016 characters) is sent whole."""
    text = {r["title"]: r["text"] for r in pq.read_table(articles).to_pylist()}
    assert 2_000 < len(text["言語"]) <= MCQConfig().max_article_chars
    with ChatServer(answer=scripted) as server:
        build_mcq(articles, tmp_path / "mcq.parquet", make_client(server, tmp_path))
    label = [c["messages"][-1]["content"] for c in server.calls if _task(c) == "label"]
    asked = next(u for u in label if u.startswith("言語\n"))
    assert text["言語"][2_000:2_200] in asked and text["言語"][-200:] in asked


def test_balance_positions_is_uniform_and_seeded():
    rows = [{"id": str(i), "choices": ["a", "b", "c", "d"], "answer": "a"} for i in range(810)]
    balance_positions(rows, seed=1)
    counts = collections.Counter(r["answer_index"] for r in rows)
    assert max(counts.values()) - min(counts.values()) <= 1
    again = [{"id": str(i), "choices": ["a", "b", "c", "d"], "answer": "a"} for i in range(810)]
    balance_positions(again, seed=1)
    assert [r["choices"] for r in rows] == [r["choices"] for r in again]


def test_near_duplicates():
    # NFKC: ？ is ?, so 9 of 10 characters agree: 0.9, on the threshold (not lost to 0.9 * 100 > 90)
    assert near_duplicates(["河童はどこに住むか。", "河童はどこに住むか？", "天狗の鼻は長いか。"], 0.9) == {1: (0, 0.9)}
    assert near_duplicates(["ＡＢＣ　ｄｅｆ", "abc   DEF"], 1.0) == {1: (0, 1.0)}  # widths, case, spaces
    assert near_duplicates([], 0.9) == {} and near_duplicates(["x"], 0.9) == {}


def test_near_duplicates_keep_the_earlier_and_name_the_closest_kept():
    a, b, c = (
        "雪女が現れる季節はいつか 冬の夜",
        "雪女が現れる時刻はいつか 夜更け",
        "雪女が現れる時刻はいつか 冬の夜更け",
    )
    # a-b 0.75, a-c 0.82, b-c 0.94: c repeats both kept questions and is named after the closer, b
    assert near_duplicates([a, b, c], 0.8) == {2: (1, 0.9412)}
    # in another order c is dropped first, and b is compared with what was kept (a) only
    assert near_duplicates([a, c, b], 0.8) == {1: (0, 0.8235)}
    assert near_duplicates([c, a, b], 0.8) == {1: (0, 0.8235), 2: (0, 0.9412)}  # the first in order stays
    texts = [a, b, c]
    with pytest.raises(WikioriginError, match=r"near_duplicates: the duplicate threshold is a similarity in \(0, 1\]"):
        near_duplicates(texts, 90)


# The 810 released YokaiEval questions (tests/data/yokaieval, CC BY-NC-SA 4.0: the rows of one
# model's answers, each with its question, options, answer and the article text the generator
# read), without the answer instruction the release appends to every question.
_SUFFIX = re.compile(r"、?以下の4つから回答を1つ選び(、?回答のみ)?出力しなさい。$")


@pytest.fixture(scope="module")
def released(data_dir):
    rows = json.loads(lzma.open(data_dir.parent / "yokaieval" / "responses-calm2-7b-chat.json.xz").read())
    return [{**r["question"], "question": _SUFFIX.sub("", r["question"]["question"])} for r in rows]


@pytest.mark.slow
def test_duplicates_among_the_released_questions(released):
    """The threshold's figures (MCQConfig's docstring): at 0.9, 4 pairs of the 810, each a question
    asked twice of one article text listed under two names; at 0.85, 10 pairs, 4 of them only
    the same question pattern about two different yokai."""
    texts = [q["question"] + "\n" + q["answer"] for q in released]
    assert len(texts) == 810
    found = near_duplicates(texts, 0.9)
    assert {(j, i) for i, (j, _) in found.items()} == {(52, 264), (282, 712), (765, 778), (285, 790)}
    assert all(released[i]["yokai"]["detail"] == released[j]["yokai"]["detail"] for i, (j, _) in found.items())
    looser = near_duplicates(texts, 0.85)
    assert len(looser) == 10
    assert sum(released[i]["yokai"]["detail"] != released[j]["yokai"]["detail"] for i, (j, _) in looser.items()) == 4


# Entries of the released set, each its own article (as the paper's list had them): three pairs
# that repeat a question across two entries (雨傘 / からかさ（小僧）, 気狐 / 妖狐, 龕の精 / マジムン),
# and two pairs of different yokai asked in the same pattern (塗仏 / 龍燈, 鐙口 / 鞍野郎: 0.87, 0.85).
_ENTRIES = [52, 264, 285, 790, 282, 712, 591, 797, 43, 330]


@pytest.fixture(scope="module")
def released_articles(released, tmp_path_factory):
    rows = []
    for page_id in _ENTRIES:
        yokai = released[page_id]["yokai"]
        text, title = yokai["detail"], re.sub(r"\[\d+\]$", "", yokai["name"])
        notes = sorted({int(n) for n in re.findall(r"\[(\d+)\]", text)})
        rows.append(
            {
                "wiki": "jawiki",
                "page_id": page_id,
                "title": title,
                "anchor": None,
                "qid": None,
                "revision_id": 1,
                "revision_timestamp": None,
                "url": f"https://ja.wikipedia.org/wiki/{title}",
                "text": text,
                "sections": [],
                "categories": [],
                "references": [
                    {
                        "number": n,
                        "name": None,
                        "group": None,
                        "text": f"note {n}",
                        "template": None,
                        "authors": [],
                        "title": None,
                    }
                    for n in notes
                ],
            }
        )
    path = tmp_path_factory.mktemp("released") / "articles.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=ARTICLES), path)
    return path


@pytest.mark.slow
def test_near_duplicates_across_articles_are_dropped(released, released_articles, tmp_path):
    """The whole set is compared, not one article's questions (the old rule kept all
    ten); the earlier article's question stays and the failed row names it."""
    by_title = {re.sub(r"\[\d+\]$", "", released[i]["yokai"]["name"]): released[i] for i in _ENTRIES}

    def answer(messages):
        task, user = _task({"messages": messages}), messages[-1]["content"]
        q = by_title[user.splitlines()[0]]
        if task == "generate":
            return json.dumps({"questions": [{k: q[k] for k in ("question", "choices", "answer")}]}, ensure_ascii=False)
        if task == "check":
            return json.dumps({"answer_index": q["choices"].index(q["answer"])})
        if task == "attribute":
            return json.dumps({"refs": [1]})
        return json.dumps({"type": TYPES[0], "region": "不明"}, ensure_ascii=False)

    out = tmp_path / "mcq.parquet"
    with ChatServer(answer=answer) as server:
        report = build_mcq(
            released_articles, out, make_client(server, tmp_path), config=MCQConfig(keep_unreferenced=True)
        )
    assert report.dropped == {"duplicate": 3} and report.kept == 7
    rows = {r["title"]: r for r in pq.read_table(out).to_pylist()}
    assert {"塗仏", "龍燈", "鐙口", "鞍野郎"} <= set(rows)  # the same pattern about other yokai is no repeat
    failed = pq.read_table(tmp_path / "mcq.failed.parquet").to_pylist()
    repeats = {f["source"]: f["reason"] for f in failed if f["step"] == "duplicate"}
    for later, earlier in (("からかさ（小僧）", "雨傘"), ("妖狐", "気狐"), ("マジムン", "龕の精")):
        kept = rows[earlier]
        assert later not in rows
        assert f"of question {kept['id']} of {earlier!r}: {kept['question']} ({kept['answer']})" in repeats[later]


@pytest.mark.slow
def test_cli_build_mcq(articles, tmp_path, capsys):
    from wikiorigin.cli import main

    with ChatServer(answer=scripted) as server:
        args = [
            "build",
            "mcq",
            "--articles",
            str(articles),
            "--out",
            str(tmp_path / "m.parquet"),
            "--model",
            "gen",
            "--base-url",
            server.url,
            "--cache",
            str(tmp_path / "c.sqlite"),
            "--per-article",
            "3",
            "--prices",
            '{"input": 1, "output": 2}',
        ]
        assert main(args + ["--dry-run"]) == 0
        assert "6 calls to make first (0 cached)" in capsys.readouterr().out and not server.calls
        assert main(args) == 0
    captured = capsys.readouterr()
    assert "4 questions from 6 articles (16 generated" in captured.out
    assert "generator: " in captured.err and "$" in captured.err


@pytest.mark.slow
def test_dataset_card_and_load_dataset(articles, tmp_path):
    datasets = pytest.importorskip("datasets", reason="the test extra is not installed")
    from wikiorigin.builders.dataset import write_card

    directory = tmp_path / "yokaieval-mini"
    with ChatServer(answer=scripted) as server:
        build_mcq(
            articles,
            directory / "test.parquet",
            make_client(server, tmp_path),
            config=MCQConfig(per_article=3),
            failed=tmp_path / "failed.parquet",
        )
    from huggingface_hub import DatasetCard

    path = write_card(directory, "mcq", "YokaiEval mini", "Questions on Japanese yokai.")
    card = DatasetCard.load(path)  # a local file: no call to the hub
    assert card.data.to_dict() == {
        "license": "cc-by-sa-4.0",
        "language": ["ja"],
        "task_categories": ["multiple-choice"],
        "task_ids": ["multiple-choice-qa"],
        "size_categories": ["n<1K"],
        "pretty_name": "YokaiEval mini",
        "configs": [{"config_name": "default", "data_files": [{"split": "test", "path": "test.parquet"}]}],
    }
    assert card.text.startswith("\n# YokaiEval mini\n\nQuestions on Japanese yokai.\n\n4 rows in 1 file(s)")
    assert '"generator": "gen"' in card.text and "## License" in card.text
    cache = str(tmp_path / "hf")  # not the user's: a set built at the same path before may be cached there
    loaded = datasets.load_dataset(str(directory), split="test", cache_dir=cache)
    assert len(loaded) == 4 and loaded[0]["choices"][loaded[0]["answer_index"]] == loaded[0]["answer"]
    same = datasets.load_dataset("parquet", data_files=str(directory / "test.parquet"), split="train", cache_dir=cache)
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
