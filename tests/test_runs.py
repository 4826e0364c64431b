"""What a run holds whoever calls it (wikiorigin/runs.py): a notebook's ``MCQBuilder(...).run(...,
out=)`` and ``RunResult.save(dir)`` take the whole-run lock, check the output against the inputs
and the request cache, and sweep what a killed run left, as the command line does."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import wikiorigin as wo
from tests.builders.test_mcq import scripted
from tests.commands import yokai_articles
from tests.openai_server import ChatServer
from wikiorigin.errors import ParameterError, WikioriginError
from wikiorigin.llm import LLMClient, OpenAIBackend, RequestCache
from wikiorigin.runs import guarded_run

TITLES = ["河童", "天狗", "座敷童子"]


@pytest.fixture
def articles(tmp_path):
    return yokai_articles(tmp_path / "articles.parquet", TITLES)


def _client(url, cache) -> LLMClient:
    return LLMClient(OpenAIBackend("gen", base_url=url, timeout=10), RequestCache(cache))


def _dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(done.stdout)


@pytest.mark.slow
def test_a_second_run_on_the_same_out_is_refused_while_the_first_runs(articles, tmp_path):
    """Two notebook runs into one set (two threads, each its own client and cache): the second is
    refused, naming the first, and pays for nothing; the first holds OUT.lock until its set is
    written, then lets it go."""
    out = tmp_path / "mcq.parquet"
    lock = tmp_path / "mcq.parquet.lock"
    with ChatServer(answer=scripted, delay=0.3) as server:
        first = _client(server.url, tmp_path / "a.sqlite")
        done: list = []
        runner = threading.Thread(target=lambda: done.append(wo.MCQBuilder().run(articles, first, out=out)))
        runner.start()
        deadline = time.monotonic() + 30
        while not server.calls and time.monotonic() < deadline:  # the first run is paying
            time.sleep(0.02)
        second = _client(server.url, tmp_path / "b.sqlite")
        with pytest.raises(ParameterError, match=rf"{out} is being written by another run \(process {os.getpid()}"):
            wo.MCQBuilder().run(articles, second, out=out)
        assert lock.exists() and runner.is_alive()  # refused while the first runs
        runner.join(60)
    assert second.usage.requests == 0 and done and done[0].report.kept > 0
    assert pq.read_table(out).num_rows == done[0].report.kept  # run(out=) saved the set
    assert not lock.exists()


@pytest.mark.slow
@pytest.mark.parametrize("cache", ["mcq.parquet", "mcq.failed.parquet", "mcq.parquet.lock"])
def test_a_run_whose_cache_is_its_output_or_input_is_refused_before_any_call(articles, tmp_path, cache):
    out = tmp_path / "mcq.parquet"
    before = articles.read_bytes()
    with ChatServer(answer=scripted) as server:
        llm = _client(server.url, tmp_path / cache)
        with pytest.raises(ParameterError, match="the request cache would overwrite") as refused:
            wo.MCQBuilder().run(articles, llm, out=out)
        assert not server.calls
    assert refused.value.parameter == "cache"
    written = [p for p in (out, tmp_path / "mcq.failed.parquet") if p.exists() and p.name != cache]
    assert articles.read_bytes() == before and written == []  # nothing written, the cache kept


def test_the_output_is_checked_against_its_inputs_and_cache_by_guarded_run(tmp_path):
    out = tmp_path / "run"
    with pytest.raises(ParameterError, match="would overwrite a file of out="):
        with guarded_run(out, cache=out / "c.sqlite"):
            pass
    with pytest.raises(ParameterError, match=r"would overwrite questions="):
        with guarded_run(out, inputs={"questions": tmp_path / "q.json"}, cache=tmp_path / "q.json"):
            pass
    with pytest.raises(ParameterError, match=r"the output would overwrite the input .*give another out="):
        with guarded_run(tmp_path / "q.json", inputs=[tmp_path / "q.json"]):
            pass
    assert not (tmp_path / "run.lock").exists()


def _recorded_result(tmp_path):
    from tests.evaluators.test_mcq_eval import _mcq_parquet

    rows = pq.read_table(_mcq_parquet(tmp_path / "mcq.parquet", 3)).to_pylist()
    responses = tmp_path / "responses.parquet"
    pq.write_table(pa.Table.from_pylist([{**r, "response": r["choices"][r["answer_index"]]} for r in rows]), responses)
    return wo.MCQTask.from_file(responses).run(wo.Recorded())


def test_save_sweeps_what_a_killed_run_left(tmp_path):
    """A run killed outright left a temporary file in its results directory and OUT.lock naming
    its dead process: the next save into it removes them, and keeps a live process's file."""
    result = _recorded_result(tmp_path)
    directory = tmp_path / "run"
    directory.mkdir()
    dead = _dead_pid()
    left = [directory / f".items.parquet.{dead}.tmp.parquet", tmp_path / f".run.{dead}.tmp"]
    for path in left:
        path.write_text("half written")
    (tmp_path / "run.lock").write_text(f"{dead}\nwikiorigin eval mcq ...\n")
    live = directory / f".summary.json.{os.getpid()}.tmp"
    live.write_text("a run still writing")
    assert result.save(directory) == directory
    assert [p for p in left if p.exists()] == [] and not (tmp_path / "run.lock").exists()
    assert live.exists() and (directory / "summary.json").exists()


def test_a_run_stopped_lets_its_lock_go_and_removes_its_own_temporary_files(tmp_path):
    out = tmp_path / "set.parquet"
    mine = tmp_path / f".set.parquet.{os.getpid()}.tmp.parquet"
    with pytest.raises(KeyboardInterrupt):
        with guarded_run(out) as lock:
            assert lock.held and lock.path.exists()
            mine.write_text("half written")
            raise KeyboardInterrupt
    assert not lock.held and not lock.path.exists() and not mine.exists()
    with guarded_run(out):  # taken again at once
        pass


def test_a_lock_given_to_save_must_be_held_on_its_output(tmp_path):
    result = _recorded_result(tmp_path)
    with guarded_run(tmp_path / "run", parameter="directory") as lock:
        with pytest.raises(WikioriginError, match="the lock given is not held on this directory"):
            result.save(tmp_path / "other", lock=lock)
        assert result.save(tmp_path / "run", lock=lock) == tmp_path / "run"


def test_every_stage_that_checks_its_output_sweeps_what_a_killed_run_left(tmp_path):
    """A stage without a run lock (here `wikidata extract`) still finds and removes a killed run's
    temporary file beside its output: the library's output check sweeps it, not the command line."""
    import gzip

    from wikiorigin.cli import main

    dump = tmp_path / "wikidata-20260801-all.json.gz"
    dump.write_bytes(gzip.compress(b"[\n]\n"))
    items = tmp_path / "items.parquet"
    pq.write_table(pa.table({"qid": ["Q1"], "origin_wiki": ["jawiki"]}), items)
    out = tmp_path / "entities.parquet"
    left = tmp_path / f".entities.parquet.{_dead_pid()}.tmp.parquet"
    left.write_text("half written")
    assert main(["wikidata", "extract", str(dump), "--items", str(items), "--out", str(out)]) == 0
    assert out.exists() and not left.exists()


def test_the_lock_lives_beside_every_output_and_stays_importable_from_llm():
    import wikiorigin.llm
    import wikiorigin.llm.lock
    import wikiorigin.lock

    assert wikiorigin.llm.RunLock is wikiorigin.llm.lock.RunLock is wikiorigin.lock.RunLock
    assert wikiorigin.llm.lock.clear_stale is wikiorigin.lock.clear_stale
