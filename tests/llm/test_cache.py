"""The request cache is checked before any call is paid for, and keeps every paid answer:
damaged, foreign, locked, read-only and full caches; a --cache that names an input or output."""

import json
import sqlite3
import subprocess
import sys
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.builders.test_mcq import scripted
from tests.commands import build_mcq
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
    return build_mcq(articles, out, url, cache=cache)


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


@pytest.mark.slow
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
        sent = [call["messages"][-1]["content"] for call in server.calls]
    db = sqlite3.connect(small_disk / "c.sqlite")
    stored = sorted(json.loads(a)["text"] for (a,) in db.execute("SELECT answer FROM answers"))
    # every answer before the one that did not fit is kept, "before" in the order they were paid
    # (not the list's: claims in batches may send q12 second); lost: that one, and those paid
    # while its write was failing (answers are written in batches, by a thread of their own)
    assert 0 < len(stored) < len(sent) < len(asked)
    assert stored == sorted(big + q for q in sent[: len(stored)])


@pytest.mark.slow
def test_a_killed_run_leaves_whole_answers_and_pays_only_for_the_rest(tmp_path):
    """Killed outright (SIGKILL) while answers pour in: the cache opens, every row is a whole
    answer, at most the answers of the last write and those in flight are lost, and a re-run
    asks exactly the requests whose answers are not stored."""
    path = tmp_path / "c.sqlite"
    script = (
        "import sys; from wikiorigin.llm import ChatRequest, LLMClient, OpenAIBackend, RequestCache; "
        "LLMClient(OpenAIBackend('m', base_url=sys.argv[1]), RequestCache(sys.argv[2]), concurrency=16).run("
        "[ChatRequest([{'role': 'user', 'content': f'q{i}'}]) for i in range(1000)])"
    )
    with ChatServer(answer=lambda messages: "answer to " + messages[-1]["content"]) as server:
        run = subprocess.Popen([sys.executable, "-c", script, server.url, str(path)])
        while len(server.calls) < 300 and run.poll() is None:
            time.sleep(0.01)
        run.kill()
        run.wait()
        paid = -1
        while paid != len(server.calls):  # a request the run sent before it died may still be read
            paid = len(server.calls)
            time.sleep(0.3)
        cache = RequestCache(path)  # opens: checked whole
        stored = {k: json.loads(a) for k, a in sqlite3.connect(path).execute("SELECT key, answer FROM answers")}
        assert all(a["text"] == "answer to " + a["text"].removeprefix("answer to ") for a in stored.values())
        assert paid - 16 - 32 <= len(stored) <= paid and paid < 1000  # lost: 16 in flight, one write (12-16 here)
        llm = LLMClient(OpenAIBackend("m", base_url=server.url), cache, concurrency=16)
        llm.run([ChatRequest([{"role": "user", "content": f"q{i}"}]) for i in range(1000)])
        assert len(server.calls) - paid == 1000 - len(stored) and llm.usage.cache_hits == len(stored)


def test_a_cache_opened_again_in_the_same_process_finds_every_answer_written(tmp_path):
    """Answers are written by the cache's writer thread: a second cache object on the same file
    (the next command run in the same process, as a notebook does) has them all on disk first."""
    first = RequestCache(tmp_path / "c.sqlite")
    for i in range(3000):
        first.put(f"k{i}", {"text": f"answer {i}" * 1000, "input_tokens": 1, "output_tokens": 1})
    RequestCache(tmp_path / "c.sqlite")
    assert sqlite3.connect(tmp_path / "c.sqlite").execute("SELECT count(*) FROM answers").fetchone()[0] == 3000
