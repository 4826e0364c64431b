"""Runs that fail must not look done: a dead endpoint, a refused key or an unknown
model is one line and exit 2 before anything is paid; a run whose every request failed exits 1;
every wait is bounded (--timeout, --retries, --max-wait); two runs on one --out are refused.
All against the loopback server of tests/openai_server.py."""

import email.utils
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.builders.test_mcq import scripted
from tests.commands import build_mcq, yokai_articles
from tests.openai_server import ChatServer
from wikiorigin.cli import main
from wikiorigin.errors import WikioriginError
from wikiorigin.llm import ChatRequest, LLMClient, OpenAIBackend, RequestCache, RunLock, worst_case_seconds

TITLES = ["河童", "天狗", "座敷童子"]


@pytest.fixture
def articles(tmp_path):
    return yokai_articles(tmp_path / "articles.parquet", TITLES)


def build(articles, out, url, *extra, cache=None):
    return build_mcq(articles, out, url, *extra, cache=cache)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.startswith("wikiorigin: error: ")]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


# --- 1. the endpoint is checked before the first paid call ---------------------------------


def test_a_dead_endpoint_is_one_line_and_exit_2_within_seconds(articles, tmp_path, capsys):
    url = f"http://127.0.0.1:{closed_port()}/v1"
    started = time.monotonic()
    assert main(build(articles, tmp_path / "m.parquet", url)) == 2
    assert time.monotonic() - started < 10
    line = error_line(capsys.readouterr().err)
    assert line == (
        f"wikiorigin: error: cannot reach {url}: Connection refused (is the server running? check --base-url)"
    )
    assert not (tmp_path / "m.parquet").exists() and not (tmp_path / "m.parquet.lock").exists()


def test_eval_against_a_dead_endpoint_is_exit_2_not_accuracy_0(tmp_path, capsys):
    from tests.evaluators.test_mcq_eval import _mcq_parquet

    url = f"http://127.0.0.1:{closed_port()}/v1"
    started = time.monotonic()
    assert (
        main(
            [
                "eval",
                "mcq",
                "--questions",
                str(_mcq_parquet(tmp_path / "q.parquet", 4)),
                "--model",
                "m",
                "--endpoint",
                url,
                "--cache",
                str(tmp_path / "c.sqlite"),
                "--out",
                str(tmp_path / "run"),
            ]
        )
        == 2
    )
    assert time.monotonic() - started < 10
    captured = capsys.readouterr()
    assert error_line(captured.err) == (
        f"wikiorigin: error: cannot reach {url}: Connection refused (is the server running? check --endpoint)"
    )
    assert "accuracy" not in captured.out and not (tmp_path / "run" / "summary.json").exists()


def test_a_refused_key_names_the_variable(articles, tmp_path, capsys, monkeypatch):
    with ChatServer(answer=scripted, api_key="right") as server:
        monkeypatch.setenv("OPENAI_API_KEY", "wrong")
        assert main(build(articles, tmp_path / "m.parquet", server.url)) == 2
        line = error_line(capsys.readouterr().err)
        assert line == (
            f"wikiorigin: error: {server.url} refused the API key (401: Incorrect API key "
            "provided): set OPENAI_API_KEY to a key it accepts"
        )
        monkeypatch.delenv("OPENAI_API_KEY")
        assert main(build(articles, tmp_path / "m.parquet", server.url)) == 2
        assert error_line(capsys.readouterr().err).endswith("(OPENAI_API_KEY is not set)")
        monkeypatch.setenv("AZURE_OPENAI_API_KEY", "wrong")  # Azure sends it as api-key: refused here
        args = build(articles, tmp_path / "m.parquet", server.url)
        args[args.index("--base-url") : args.index("--base-url") + 2] = ["--azure-endpoint", server.url]
        assert main(args) == 2
        assert "set AZURE_OPENAI_API_KEY to a key it accepts" in error_line(capsys.readouterr().err)
        assert not server.calls or all(c.get("max_tokens") == 1 for c in server.calls)  # probes only
        monkeypatch.setenv("OPENAI_API_KEY", "right")
        assert main(build(articles, tmp_path / "m.parquet", server.url)) == 0


def test_an_unknown_model_is_one_line_naming_what_the_server_lists(articles, tmp_path, capsys):
    with ChatServer(answer=scripted, models=["gen"]) as server:
        args = build(articles, tmp_path / "m.parquet", server.url)
        args[args.index("--model") + 1] = "gne"
        assert main(args) == 2
        assert error_line(capsys.readouterr().err) == (
            f"wikiorigin: error: {server.url} does not serve the model 'gne' (404: The model `gne` does not "
            "exist.); it lists gen"
        )
        assert [c["max_tokens"] for c in server.calls] == [1]  # the 1-token probe, nothing else
        assert main(build(articles, tmp_path / "m.parquet", server.url)) == 0
        assert server.probes[-1] == "/v1/models/gen"


def test_a_server_that_lists_no_models_is_checked_with_one_token(articles, tmp_path, capsys):
    def answer(messages):  # the probe is one user message, "ping"
        return "pong" if len(messages) == 1 else scripted(messages)

    with ChatServer(answer=answer, list_models=False) as server:
        assert main(build(articles, tmp_path / "m.parquet", server.url)) == 0
        assert server.calls[0]["max_tokens"] == 1 and len(server.calls) == 1 + 12
    assert "3 questions from 3 articles" in capsys.readouterr().out


def test_a_rerun_from_the_cache_and_a_dry_run_need_no_server(articles, tmp_path, capsys):
    with ChatServer(answer=scripted) as server:
        assert main(build(articles, tmp_path / "m.parquet", server.url)) == 0
        url = server.url
    capsys.readouterr()
    assert main(build(articles, tmp_path / "again.parquet", url, cache=tmp_path / "c.sqlite")) == 0
    captured = capsys.readouterr()
    assert "3 questions from 3 articles" in captured.out and "0 calls, 12 cache hits" in captured.err
    assert (
        main(
            build(
                articles,
                tmp_path / "dry.parquet",
                f"http://127.0.0.1:{closed_port()}/v1",
                "--dry-run",
                cache=tmp_path / "empty.sqlite",
            )
        )
        == 0
    )
    assert "3 calls to make first (0 cached)" in capsys.readouterr().out


@pytest.mark.slow
def test_a_run_with_failed_requests_exits_1_reruns_only_those_or_is_accepted_when_allowed(articles, tmp_path, capsys):
    with ChatServer(answer=scripted) as server:
        server.faults = ["500"] * 3
        assert main(build(articles, tmp_path / "m.parquet", server.url, "--retries", "0")) == 1
        captured = capsys.readouterr()
        assert "0 questions from 3 articles" in captured.out
        assert error_line(captured.err) == (
            "wikiorigin: error: all 3 requests failed; the first: gave up after 1 tries: 500: internal "
            f"(rows and reasons -> {tmp_path / 'm.failed.parquet'})"
        )
        failed = pq.read_table(tmp_path / "m.failed.parquet").to_pylist()
        assert [f["reason"] for f in failed] == ["gave up after 1 tries: 500: internal"] * 3
        server.faults = ["500"]
        args = build(
            articles,
            tmp_path / "n.parquet",
            server.url,
            "--retries",
            "0",
            "--concurrency",
            "1",
            cache=tmp_path / "other.sqlite",
        )
        assert main(args) == 1  # an incomplete run is not a complete one
        captured = capsys.readouterr()
        assert "2 questions from 3 articles" in captured.out
        assert error_line(captured.err).startswith(
            "wikiorigin: error: 1 of 9 requests failed after their retries; the first: gave up after 1 "
            f"tries: 500: internal (rows and reasons -> {tmp_path / 'n.failed.parquet'}); the run is "
            "incomplete (complete: false): run the same command again to retry only those"
        )
        assert main(args) == 0  # the same command: the 8 answers paid for come from the cache
        captured = capsys.readouterr()
        assert "3 questions from 3 articles" in captured.out
        # the failed generation is asked again, then the three steps that waited on it
        assert "generator: 4 calls, 8 cache hits, 0 retries, 0 failed" in captured.err
        server.faults = ["500"]
        accepted = build(
            articles,
            tmp_path / "a.parquet",
            server.url,
            "--retries",
            "0",
            "--allow-failures",
            cache=tmp_path / "third.sqlite",
        )
        assert main(accepted) == 0
        assert "accepted as it is (--allow-failures)" in capsys.readouterr().err


# --- 2. every wait is bounded -----------------------------------------------------------------


def _run_in_thread(llm, requests, seconds):
    """The results, or a failure when the run is still waiting after ``seconds``."""
    box = {}
    thread = threading.Thread(target=lambda: box.setdefault("results", llm.run(requests)), daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"the run still waits after {seconds} s"
    return box["results"]


@pytest.mark.parametrize("form", ["seconds", "http-date"])  # the date made when the test runs: its id stays the same
def test_a_retry_after_longer_than_max_wait_ends_that_request_at_once(tmp_path, form):
    retry_after = "100000" if form == "seconds" else email.utils.formatdate(time.time() + 100000, usegmt=True)
    with ChatServer() as server:
        server.faults, server.retry_after = ["429"], retry_after
        llm = LLMClient(
            OpenAIBackend("m", base_url=server.url), RequestCache(tmp_path / "c.sqlite"), concurrency=1, max_wait=1
        )
        started = time.monotonic()
        results = _run_in_thread(llm, [ChatRequest([{"role": "user", "content": f"q{i}"}]) for i in range(3)], 20)
        assert time.monotonic() - started < 5
    assert re.match(
        r"the server asked to wait (100,000|99,\d\d\d) s, longer than max_wait 1 s: 429: slow down$", results[0].error
    )
    assert [r.error for r in results[1:]] == [None, None]  # the run went on
    assert llm.usage.failures == 1 and llm.usage.retries == 0 and llm.usage.waited == 0


@pytest.mark.slow
def test_a_retry_after_within_max_wait_is_honoured_and_counted(tmp_path):
    with ChatServer() as server:
        server.faults, server.retry_after = ["429", "429"], "0.3"
        llm = LLMClient(OpenAIBackend("m", base_url=server.url), None, max_wait=1)
        [result] = llm.run([ChatRequest([{"role": "user", "content": "q"}])])
    assert result.error is None and llm.usage.retries == 2 and llm.usage.waited == pytest.approx(0.6)
    assert "0.6 s waiting" in llm.usage.summary()


@pytest.mark.slow
def test_a_hanging_server_costs_at_most_the_worst_case(articles, tmp_path, capsys):
    with ChatServer(answer=scripted, delay=3) as server:  # every completion hangs for 3 s
        started = time.monotonic()
        assert (
            main(
                build(
                    articles,
                    tmp_path / "m.parquet",
                    server.url,
                    "--timeout",
                    "0.3",
                    "--retries",
                    "1",
                    "--max-wait",
                    "0.2",
                )
            )
            == 1
        )
        took = time.monotonic() - started
    assert took < worst_case_seconds(0.3, 1, 0.2) + 2  # 3 requests at once: one request's worst case
    err = capsys.readouterr().err
    assert "all 3 requests failed; the first: gave up after 2 tries: no answer within 0.3 s (timeout)" in err
    waited = float(err.split("generator: ")[1].split(" s waiting")[0].rsplit(", ", 1)[1])
    assert 0 < waited <= 3 * 0.2


@pytest.mark.slow
def test_a_server_that_stops_answering_mid_run_is_given_up_on(tmp_path):
    """After stop_after requests in a row gave up, the rest of the run is not sent: a server
    that died mid-run costs a few requests' worst case, not every request's."""
    with ChatServer() as server:
        server.faults = [None] * 2 + ["500"] * 100
        llm = LLMClient(
            OpenAIBackend("m", base_url=server.url),
            RequestCache(tmp_path / "c.sqlite"),
            concurrency=1,
            retries=1,
            backoff=0.01,
            stop_after=3,
        )
        asked = [ChatRequest([{"role": "user", "content": f"q{i}"}]) for i in range(30)]
        results = llm.run(asked)
        assert len(server.calls) == 2 + 3 * 2
        assert [r.error for r in results[:2]] == [None, None]
        assert [r.error for r in results[2:5]] == ["gave up after 2 tries: 500: internal"] * 3
        assert all(
            r.error == "not sent: the endpoint seems down (3 requests in a row gave up; the last: gave "
            "up after 2 tries: 500: internal)"
            for r in results[5:]
        )
        assert llm.usage.failures == 28 and llm.usage.requests == 30
        server.faults = []  # back: the next run asks again, and the cache keeps the 2 answers
        assert all(r.error is None for r in llm.run(asked)) and len(server.calls) == 8 + 28


def test_help_says_the_worst_case(capsys):
    assert worst_case_seconds(60, 3, 120) == 600  # the defaults: 10 min
    with pytest.raises(SystemExit):
        main(["build", "mcq", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "one request takes at most (RETRIES + 1) x TIMEOUT + RETRIES x MAX_WAIT (10 min with the defaults)" in text
    for option in ("--timeout SECONDS", "--retries N", "--max-wait SECONDS"):
        assert option in text
    with pytest.raises(SystemExit) as exc:
        main(["build", "mcq", "--articles", "a", "--out", "o", "--model", "m", "--timeout", "0"])
    assert exc.value.code == 2 and "expected a number > 0, got '0'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["build", "mcq", "--articles", "a", "--out", "o", "--model", "m", "--max-wait", "inf"])
    assert "expected a number >= 0, got 'inf'" in capsys.readouterr().err


# --- 3. one run per output ----------------------------------------------------------------------


@pytest.mark.slow
def test_a_second_run_on_the_same_out_is_refused_naming_the_first(articles, tmp_path, capsys):
    with ChatServer(answer=scripted) as reference:
        assert main(build(articles, tmp_path / "ref" / "m.parquet", reference.url)) == 0
        one_run = len(reference.calls)
    out = tmp_path / "m.parquet"
    with ChatServer(answer=scripted, delay=0.3) as server:
        first = subprocess.Popen(
            [sys.executable, "-m", "wikiorigin.cli", *build(articles, out, server.url)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        lock = tmp_path / "m.parquet.lock"
        deadline = time.monotonic() + 30
        while not (lock.exists() and lock.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert main(build(articles, out, server.url)) == 2
        line = error_line(capsys.readouterr().err)
        assert line.startswith(f"wikiorigin: error: {out} is being written by another run (process {first.pid}: ")
        assert line.endswith("wait for it to end, or give another --out")
        assert first.wait(60) == 0, first.stderr.read()
        assert len(server.calls) == one_run  # the refused run paid for nothing
    assert not lock.exists()


def test_a_lock_of_a_killed_process_is_taken_over(tmp_path):
    out = tmp_path / "m.parquet"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from wikiorigin.llm import RunLock; "
            "RunLock(sys.argv[1]).acquire(); print('held', flush=True); time.sleep(60)",
            str(out),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline() == "held\n"
        with pytest.raises(WikioriginError, match=rf"is being written by another run \(process {holder.pid}: -c "):
            RunLock(out).acquire()
    finally:
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait()
    assert (tmp_path / "m.parquet.lock").read_text().startswith(f"{holder.pid}\n")  # left behind, stale
    with RunLock(out) as lock:
        assert lock.path.read_text().startswith(f"{os.getpid()}\n")
    assert not lock.path.exists()


def test_bad_prices_and_concurrency_are_refused_at_the_command_line(tmp_path, capsys):
    from wikiorigin.cli import main

    for bad in (["--prices", "abc"], ["--prices", '{"input": 0.15}'], ["--concurrency", "0"]):
        with pytest.raises(SystemExit) as stop:
            main(
                [
                    "build",
                    "freeform",
                    "--articles",
                    "a.parquet",
                    "--out",
                    str(tmp_path / "f.parquet"),
                    "--model",
                    "m",
                    *bad,
                ]
            )
        assert stop.value.code == 2
    assert "is not JSON such as" in capsys.readouterr().err


def test_a_file_where_the_lock_goes_is_never_replaced(tmp_path, capsys):
    """OUT.lock is the run's own file: one of that name that no run wrote (an input kept under
    that name) is refused, exit 2, and left as it was, for a results directory and a set alike."""
    from tests.evaluators.test_mcq_eval import _mcq_parquet

    rows = pq.read_table(_mcq_parquet(tmp_path / "mcq.parquet", 3)).to_pylist()
    responses = tmp_path / "run.lock"
    pq.write_table(pa.Table.from_pylist([{**r, "response": r["choices"][r["answer_index"]]} for r in rows]), responses)
    before = responses.read_bytes()
    assert main(["eval", "mcq", "--responses", str(responses), "--out", str(tmp_path / "run")]) == 2
    assert "run.lock: a file that is no run's lock" in capsys.readouterr().err
    assert responses.read_bytes() == before and not (tmp_path / "run" / "summary.json").exists()
    with pytest.raises(WikioriginError, match="no run's lock"):
        with RunLock(tmp_path / "run"):
            pass
    assert responses.read_bytes() == before
