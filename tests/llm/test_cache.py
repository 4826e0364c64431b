"""The request cache is checked before any call is paid for, and keeps every paid answer:
damaged, foreign, locked, read-only and full caches; a --cache that names an input or output."""

import json
import sqlite3
import subprocess

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.builders.test_mcq import scripted
from tests.openai_server import ChatServer
from wikiorigin.cli import main
from wikiorigin.llm import ChatRequest, LLMClient, OpenAIBackend, RequestCache
from wikiorigin.llm.cache import CacheError
from wikiorigin.schemas import ARTICLES


@pytest.fixture
def articles(tmp_path):
    path = tmp_path / "articles.parquet"
    pq.write_table(
        pa.Table.from_pylist(
            [
                {
                    "wiki": "jawiki",
                    "page_id": 1,
                    "title": "河童",
                    "text": "河童は日本の妖怪である[1]。",
                    "revision_id": 5,
                    "references": [{"number": 1, "text": "柳田国男『妖怪談義』"}],
                    "url": "https://ja.wikipedia.org/wiki/河童",
                }
            ],
            schema=ARTICLES,
        ),
        path,
    )
    return path


def build(articles, out, url, cache):
    return [
        "build",
        "mcq",
        "--articles",
        str(articles),
        "--out",
        str(out),
        "--model",
        "gen",
        "--base-url",
        url,
        "--cache",
        str(cache),
    ]


def one_line(capsys) -> str:
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("wikiorigin:")]
    assert len(lines) == 1, lines
    return lines[0]


def _garbage(path):
    path.write_bytes(b"this is not a database" * 100)


def _truncated(path):
    cache = RequestCache(path)
    for i in range(200):
        cache.put(f"k{i}", {"text": "x" * 200})
    cache.close()
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])


def _other_version(path):
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE answers (key TEXT PRIMARY KEY, answer TEXT NOT NULL)")
    db.execute("PRAGMA user_version = 7")
    db.commit()
    db.close()


def _foreign(path):
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE review (id INTEGER)")
    db.commit()
    db.close()


def _directory(path):
    path.mkdir()


@pytest.mark.parametrize(
    "spoil,said",
    [
        (_garbage, "not a usable request cache"),
        (_truncated, "c.sqlite: "),
        (_other_version, "schema version 7"),
        (_foreign, "tables review"),
        (_directory, "a directory, not a request cache"),
    ],
)
def test_an_unusable_cache_is_one_line_before_any_call(articles, tmp_path, capsys, spoil, said):
    cache = tmp_path / "c.sqlite"
    spoil(cache)
    with ChatServer(answer=scripted) as server:
        assert main(build(articles, tmp_path / "m.parquet", server.url, cache)) == 2
        assert not server.calls
    line = one_line(capsys)
    assert line.startswith(f"wikiorigin: error: {cache}") and said in line and "unexpected" not in line


def test_a_cache_locked_by_another_process_is_waited_for_then_told(tmp_path):
    path = tmp_path / "c.sqlite"
    RequestCache(path).close()
    holder = sqlite3.connect(path)
    holder.execute("BEGIN IMMEDIATE")
    with pytest.raises(CacheError, match="locked.*another process is writing it"):
        RequestCache(path, busy_seconds=0.2)
    holder.rollback()
    RequestCache(path, busy_seconds=0.2).close()


@pytest.mark.parametrize("cache", ["m.parquet", "m.failed.parquet", "articles.parquet", "m.parquet.lock"])
def test_a_cache_naming_an_input_or_output_is_refused(articles, tmp_path, capsys, cache):
    before = articles.read_bytes()
    assert main(build(articles, tmp_path / "m.parquet", "http://127.0.0.1:9/v1", tmp_path / cache)) == 2
    line = one_line(capsys)
    assert line.startswith(f"wikiorigin: error: --cache {tmp_path / cache}: the request cache would overwrite")
    assert articles.read_bytes() == before and not (tmp_path / "m.parquet").exists()


def test_a_cache_inside_a_results_directory_is_refused(tmp_path, capsys):
    from tests.llm.test_reasoning import _questions

    out = tmp_path / "run"
    assert (
        main(
            [
                "eval",
                "mcq",
                "--questions",
                str(_questions(tmp_path)),
                "--model",
                "m",
                "--endpoint",
                "http://127.0.0.1:9/v1",
                "--out",
                str(out),
                "--cache",
                str(out / "summary.json"),
            ]
        )
        == 2
    )
    line = one_line(capsys)  # eval's own check of its inputs (the cache one of them) comes first
    assert str(out / "summary.json") in line and "give another --out" in line and not out.exists()


def test_a_read_only_cache_is_told_before_any_call(small_disk):
    path = small_disk / "c.sqlite"
    RequestCache(path).close()
    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    with pytest.raises(CacheError, match="c.sqlite: .*(readonly|read-only|unable to open)"):
        RequestCache(path)


def test_a_full_disk_stops_the_run_and_keeps_every_answer_stored(small_disk):
    big = "河童" * 3000  # ~18 KB an answer: the 256 KiB disk fills after a dozen
    with ChatServer(answer=lambda messages: big + messages[-1]["content"]) as server:
        llm = LLMClient(OpenAIBackend("m", base_url=server.url), RequestCache(small_disk / "c.sqlite"), concurrency=1)
        asked = [ChatRequest([{"role": "user", "content": f"q{i}"}]) for i in range(40)]
        with pytest.raises(CacheError, match="cannot store an answer .*full"):
            llm.run(asked)
        paid = len(server.calls)
    db = sqlite3.connect(small_disk / "c.sqlite")
    stored = [json.loads(a)["text"] for (a,) in db.execute("SELECT answer FROM answers")]
    assert 0 < len(stored) and len(stored) >= paid - 2  # at most the answer that did not fit is lost
    assert all(text.startswith(big) for text in stored)
