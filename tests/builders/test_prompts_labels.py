"""The MCQ builder's prompts chosen by labels and language: Japanese questions get
the paper's yokai prompts only with labels that ask for them (``yokai-ja``), every other
build the any-language prompts naming its language; the yokai prompts and their hash are
pinned (the generate prompt was changed on purpose to five examples of our own where there
was one; check, attribute and label are as they were)."""

import hashlib
import json
import re
import warnings

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.openai_server import ChatServer
from wikiorigin.builders.mcq import MCQConfig, build_mcq
from wikiorigin.builders.prompts import label_prompt, mcq_prompt, prompt_sha1
from wikiorigin.corpora.articles import article_row
from wikiorigin.dumps.pages import iter_pages
from wikiorigin.labels import load_labels
from wikiorigin.llm import LLMClient, OpenAIBackend, RequestCache
from wikiorigin.presets import culture
from wikiorigin.presets.yokaieval.prompts import STEPS as YOKAI_STEPS
from wikiorigin.schemas import ARTICLES, ORIGIN_ARTICLES

JA = "jawiki-20230501-pages-articles-multistream_first100k-lines.xml.xz"
TITLES = ["アンパサンド", "地理", "音楽家"]

# The yokai-ja builds' hashes with five examples (with one: bc0f7108... and c8edbf0f..., the
# generate text 5e0b57c3...).
YOKAI_SHA1 = "b05a720445c323cd5acc3b032c9199f2d66d9002"
YOKAI_WIKIDATA_SHA1 = "da0264d02f2c701390677fb3eff28d9a571317da"
YOKAI_TEXT_SHA1 = {
    "generate": "cbc50cc4e0d5b9174329021828c76e1994ad174b",
    "check": "571fa34d1f3ab7bda6dd825148171f72017c09bd",
    "attribute": "40835169119fbaad6be0f0b955a518dfcc5051ab",
    "label": "ab6cebe58bbabcf43955ae3337558eebff5d6a28",
}


def _sha1(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


@pytest.fixture(scope="module")
def ja_rows(data_dir):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pages = [p for p in iter_pages(data_dir / JA, namespaces=[0]) if p.title in TITLES]
    return [article_row(p, "jawiki", "ja.wikipedia.org", {})[0] for p in pages]


@pytest.fixture(scope="module")
def ja_origin(ja_rows, tmp_path_factory):
    """jawiki articles as an origin corpus (a region column from Wikidata)."""
    rows = [
        {
            **r,
            "label_en": None,
            "aliases": [],
            "enwiki_title": None,
            "origin_wiki": "jawiki",
            "n_wikis": 1,
            "region": "東京都",
            "region_qid": "Q1490",
        }
        for r in ja_rows
    ]
    path = tmp_path_factory.mktemp("origin") / "articles.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=ORIGIN_ARTICLES), path)
    return path


@pytest.fixture(scope="module")
def ja_list(ja_rows, tmp_path_factory):
    path = tmp_path_factory.mktemp("list") / "articles.parquet"
    pq.write_table(pa.Table.from_pylist(ja_rows, schema=ARTICLES), path)
    return path


class Scripted:
    """Answers by task, recording every system prompt."""

    def __init__(self):
        self.systems: list[str] = []

    def __call__(self, messages):
        system, title = messages[0]["content"], messages[-1]["content"].splitlines()[0]
        self.systems.append(system)
        task = system.splitlines()[0].removeprefix("task: ")
        if task == "generate":
            return json.dumps(
                {"questions": [{"question": f"{title}の問い", "choices": ["甲", "乙", "丙", "丁"], "answer": "乙"}]},
                ensure_ascii=False,
            )
        if task == "check":
            return json.dumps({"answer_index": 1})
        if task == "attribute":
            return json.dumps({"refs": [1]})
        if task == "label":
            listed = re.findall(r"^- ([^:]+):", system, re.M)
            kind = listed[0] if listed else "妖怪の行う行動"
            return json.dumps({"type": kind, "region": "関東"}, ensure_ascii=False)
        raise AssertionError(task)


def _client(server, tmp_path):
    return LLMClient(
        OpenAIBackend("gen", base_url=server.url), RequestCache(tmp_path / "gen.sqlite"), concurrency=2, backoff=0.01
    )


def test_japanese_origin_corpus_is_not_asked_about_yokai(ja_origin, tmp_path):
    scripted = Scripted()
    with ChatServer(answer=scripted) as server:
        report = build_mcq(
            ja_origin, tmp_path / "o.parquet", _client(server, tmp_path), config=MCQConfig(keep_unreferenced=True)
        )  # default labels: origin
    assert report.kept == len(TITLES)
    systems = "\n".join(scripted.systems)
    assert "妖怪" not in systems and "yokai" not in systems
    assert "in Japanese" in systems and "the article's subject" in systems
    assert any("- customs and beliefs:" in s for s in scripted.systems)  # the origin classes, glossed
    rows = pq.read_table(tmp_path / "o.parquet").to_pylist()
    assert {r["prompt_sha1"] for r in rows} == {prompt_sha1("ja", "wikidata")}
    assert prompt_sha1("ja", "wikidata") not in (YOKAI_WIKIDATA_SHA1, prompt_sha1("el", "wikidata"))
    assert {r["language"] for r in rows} == {"ja"} and {r["region"] for r in rows} == {"東京都"}


def test_japanese_with_a_labels_file_of_its_own(ja_list, tmp_path):
    labels = tmp_path / "festivals.json"
    labels.write_text(
        json.dumps(
            {
                "name": "matsuri",
                "subject": "the festival the article describes",
                "types": [{"class": "時期", "description": "when"}, {"class": "場所", "description": "where"}],
                "regions": [{"class": "東日本", "description": "east"}, {"class": "関東", "description": "Kanto"}],
            }
        ),
        encoding="utf-8",
    )
    scripted = Scripted()
    with ChatServer(answer=scripted) as server:
        build_mcq(
            ja_list,
            tmp_path / "f.parquet",
            _client(server, tmp_path),
            config=MCQConfig(labels=str(labels), keep_unreferenced=True),
        )
    systems = "\n".join(scripted.systems)
    assert "妖怪" not in systems and "about the festival the article describes, in Japanese" in systems
    assert {r["prompt_sha1"] for r in pq.read_table(tmp_path / "f.parquet").to_pylist()} == {prompt_sha1("ja")}


def test_yokai_prompts_and_hash_are_pinned(ja_list, tmp_path):
    yokai = load_labels("yokai-ja")
    assert yokai.prompts == "yokai-ja"
    scripted = Scripted()
    with ChatServer(answer=scripted) as server:
        build_mcq(
            ja_list, tmp_path / "y.parquet", _client(server, tmp_path), config=MCQConfig(keep_unreferenced=True)
        )  # default labels of Japanese list pages
    rows = pq.read_table(tmp_path / "y.parquet").to_pylist()
    assert rows and {r["prompt_sha1"] for r in rows} == {YOKAI_SHA1} == {
        prompt_sha1("ja", own=culture("yokaieval").prompts)
    }
    assert prompt_sha1("ja", "wikidata", own=culture("yokaieval").prompts) == YOKAI_WIKIDATA_SHA1
    sent = {s.splitlines()[0].removeprefix("task: "): s for s in scripted.systems}
    assert sent["generate"] == YOKAI_STEPS["generate"].format(n=1)
    assert {step: _sha1(text) for step, text in sent.items()} == YOKAI_TEXT_SHA1
    assert _sha1(label_prompt("ja", yokai)) == YOKAI_TEXT_SHA1["label"]


def _examples(prompt: str) -> list[tuple[str, dict]]:
    """The example questions of a generate prompt: (the line's lead, the JSON object)."""
    found = re.findall(r"^(.*?): (\{\"question\".*\})$", prompt, re.M)
    return [(lead, json.loads(obj)) for lead, obj in found]


@pytest.mark.parametrize(
    "prompt, footnote",
    [
        (YOKAI_STEPS["generate"].format(n=1), r"脚注\[\d\]"),
        (mcq_prompt("el", "generate", n=1), r"footnote \[\d\]"),
        (mcq_prompt("ja", "generate", "the festival the article describes", n=2), r"footnote \[\d\]"),
    ],
)
def test_five_examples_in_the_generation_prompt(prompt, footnote):
    """Five example questions of our own (there was one), each with four distinct
    options, the answer among them and the footnote that backs it; varied, not one pattern."""
    examples = _examples(prompt)
    assert len(examples) == 5
    for lead, example in examples:
        assert set(example) == {"question", "choices", "answer"} and re.search(footnote, lead)
        assert len(set(example["choices"])) == 4 and example["answer"] in example["choices"]
    assert len({re.search(r"[（(]([^。;]+)", lead)[1] for lead, _ in examples}) == 5  # five kinds of question
    assert len({e["choices"].index(e["answer"]) for _, e in examples}) == 4  # the answer not always first


def test_the_yokai_examples_are_sent(ja_list, tmp_path):
    scripted = Scripted()
    with ChatServer(answer=scripted) as server:
        build_mcq(ja_list, tmp_path / "y.parquet", _client(server, tmp_path), config=MCQConfig(keep_unreferenced=True))
    generate = next(s for s in scripted.systems if s.startswith("task: generate"))
    assert [e["answer"] for _, e in _examples(generate)] == [
        "キュウリ",
        "後頭部の大きな老人",
        "鹿児島県",
        "家が衰える",
        "1970年代の終わり",
    ]
