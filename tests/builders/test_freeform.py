import json
import warnings

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.openai_server import ChatServer
from wikiorigin.builders.freeform import FreeformConfig, build_freeform
from wikiorigin.builders.prompts import FREEFORM_PROMPTS
from wikiorigin.corpora.articles import article_row
from wikiorigin.dumps.pages import iter_pages
from wikiorigin.llm import LLMClient, OpenAIBackend, RequestCache
from wikiorigin.schemas import FAILED, FREEFORM, FREEFORM_CRITERIA as CRITERIA, ORIGIN_ARTICLES

JA = "jawiki-20230501-pages-articles-multistream_first100k-lines.xml.xz"
ITEMS = {"アンパサンド": ("Q11212", "Ampersand", ["&", "and sign"]),
         "地理": ("Q1071", "Geography", []),
         "音楽家": ("Q639669", "Musician", ["music artist"]),
         "個人": ("Q795052", "Individual", [])}


@pytest.fixture(scope="module")
def origin_articles(tmp_path_factory, data_dir):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pages = [p for p in iter_pages(data_dir / JA, namespaces=[0]) if p.title in ITEMS]
    rows = []
    for page in pages:
        qid, english, aliases = ITEMS[page.title]
        row = article_row(page, "jawiki", "ja.wikipedia.org", {}, qid=qid)[0]
        row.update(label_en=english.lower(), aliases=[page.title, *aliases], enwiki_title=english,
                   origin_wiki="jawiki", n_wikis=3)
        rows.append(row)
    path = tmp_path_factory.mktemp("origin") / "articles.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=ORIGIN_ARTICLES), path)
    return path


def scripted(messages):
    task = messages[0]["content"].splitlines()[0].removeprefix("task: ")
    system, user = messages[0]["content"], messages[-1]["content"]
    if task == "freeform-generate":
        if "(個人)" in system:
            return json.dumps({"question": "個人とは何か。"}, ensure_ascii=False)  # names the answer
        return json.dumps({"question": "草案の問い"}, ensure_ascii=False)
    if task == "freeform-refine":
        title = system.split("whose answer is ", 1)[1].split(":", 1)[0]
        if title == "個人":  # the refined question still names its answer
            return json.dumps({"question": "個人とは何か。"}, ensure_ascii=False)
        return json.dumps({"question": f"{len(title)}文字のこの日本語の言葉は何か。"}, ensure_ascii=False)
    if task == "freeform-translate":
        return json.dumps({"question_en": f"Which Japanese word is this? ({user})", "answer_en": "the answer"})
    if task == "freeform-score":
        low = "文字" in user and "3文字" in user  # 音楽家 (3 characters) scores 4 on one criterion
        return json.dumps({c: (4 if low and c == "not_trivial" else 5) for c in CRITERIA})
    raise AssertionError(task)


def test_build_freeform(origin_articles, tmp_path):
    out = tmp_path / "freeform.parquet"
    with ChatServer(answer=scripted) as server:
        llm = LLMClient(OpenAIBackend("gen", base_url=server.url), RequestCache(tmp_path / "c.sqlite"))
        counts = build_freeform(origin_articles, out, llm, FreeformConfig(rounds=2))
        refines = [c for c in server.calls if c["messages"][0]["content"].startswith("task: freeform-refine")]
        assert len(refines) == 7  # 2 rounds x 4, less one: 個人 asked the same twice, a cache hit
    assert counts == {"articles": 4, "leak": 1, "score": 1, "kept": 2}
    table = pq.read_table(out)
    assert table.schema.remove_metadata() == FREEFORM
    rows = {r["title"]: r for r in table.to_pylist()}
    assert set(rows) == {"アンパサンド", "地理"}
    amp = rows["アンパサンド"]
    assert amp["answers"] == ["アンパサンド", "Ampersand", "the answer", "ampersand", "&", "and sign"]
    assert amp["question_source"] == "6文字のこの日本語の言葉は何か。" and amp["has_enwiki"]
    assert amp["criteria"] == {c: 5 for c in CRITERIA} and amp["language"] == "ja"
    table = pq.read_table(tmp_path / "freeform.failed.parquet")
    assert table.schema.remove_metadata() == FAILED
    failed = {f["source"]: f for f in table.to_pylist()}
    assert failed["音楽家"]["reason"] == "below 5 on not_trivial=4" and failed["音楽家"]["step"] == "score"
    assert failed["個人"]["reason"] == "the question contains the answer '個人'"
    assert (failed["個人"]["qid"], failed["個人"]["wiki"], failed["個人"]["model"]) == ("Q795052", "jawiki", "gen")
    made = json.loads(failed["音楽家"]["item"])
    assert made["question_source"] == "3文字のこの日本語の言葉は何か。" and made["criteria"]["not_trivial"] == 4


def test_the_score_prompt_names_every_criterion():
    assert all(f"{c}:" in FREEFORM_PROMPTS["score"] for c in CRITERIA)


def test_cli_build_freeform(origin_articles, tmp_path, capsys):
    from wikiorigin.cli import main

    with ChatServer(answer=scripted) as server:
        assert main(["build", "freeform", "--articles", str(origin_articles), "--out",
                     str(tmp_path / "f.parquet"), "--model", "gen", "--base-url", server.url,
                     "--cache", str(tmp_path / "c.sqlite")]) == 0
    assert "2 questions from 4 articles (dropped: leak 1, score 1)" in capsys.readouterr().out


def test_freeform_dry_run(origin_articles, tmp_path, capsys):
    from wikiorigin.cli import main

    assert main(["build", "freeform", "--articles", str(origin_articles), "--out", str(tmp_path / "f.parquet"),
                 "--model", "gen", "--base-url", "http://127.0.0.1:9/v1", "--cache", str(tmp_path / "c.sqlite"),
                 "--rounds", "2", "--dry-run"]) == 0
    assert "4 calls to make first (0 cached)" in capsys.readouterr().out



def test_the_wrong_stage_s_file_fails_before_any_call(origin_articles, tmp_path, capsys):
    """A yokai corpus (no origin columns) given to build freeform, a pages file to build mcq, a
    directory as --out: one line each, exit 2, and the server never asked."""
    from wikiorigin.cli import main

    yokai = tmp_path / "yokai.parquet"
    pq.write_table(pq.read_table(origin_articles).drop_columns(["origin_wiki", "n_wikis"]), yokai)
    pages = tmp_path / "pages.parquet"
    pq.write_table(pa.table({"wiki": ["jawiki"], "page_id": [1], "title": ["x"]}), pages)
    with ChatServer(answer=scripted) as server:
        common = ["--model", "gen", "--base-url", server.url, "--cache", str(tmp_path / "c.sqlite")]
        assert main(["build", "freeform", "--articles", str(yokai), "--out", str(tmp_path / "f.parquet"), *common]) == 2
        err = capsys.readouterr().err
        assert "yokai.parquet: not the output of `wikiorigin corpus origin`: no column origin_wiki, n_wikis" in err
        assert main(["build", "mcq", "--articles", str(pages), "--out", str(tmp_path / "m.parquet"), *common]) == 2
        assert "pages.parquet: not the output of `wikiorigin corpus yokai (or corpus origin)`: no column " \
               "revision_id, url, text, references" in capsys.readouterr().err
        assert main(["build", "freeform", "--articles", str(origin_articles), "--out", str(tmp_path), *common]) == 2
        assert "a directory; give a file name" in capsys.readouterr().err
        asked = [c for c in server.calls if "messages" in c]
    assert asked == []
