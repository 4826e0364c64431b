"""Nothing paid twice, everything paid counted: the same server typed another way, refusals,
usage of failed answers, two runs on one cache, identical requests in one run; a missing key
said before anything runs; a full disk and a damaged cache row without a traceback. All against
the loopback server of tests/openai_server.py."""

import json
import sqlite3
import subprocess
import sys
import time

import pyarrow.parquet as pq
import pytest

from tests.builders.test_mcq import scripted
from tests.commands import yokai_articles
from tests.llm.test_failures import build, error_line
from tests.openai_server import ChatServer
from wikiorigin.cli import main
from wikiorigin.files import read_provenance
from wikiorigin.llm import ChatRequest, LLMClient, OpenAIBackend, RequestCache
from wikiorigin.llm.cache import request_key
from wikiorigin.llm.openai_backend import endpoint_key

REFUSAL = "I'm sorry, but I can't help with that."


def _articles(path, titles):
    return yokai_articles(path, titles)


@pytest.fixture
def articles(tmp_path):
    return _articles(tmp_path / "articles.parquet", ["河童", "天狗", "座敷童子"])


def asks(n, prefix="q"):
    return [ChatRequest([{"role": "user", "content": f"{prefix}{i}"}]) for i in range(n)]


def generations(server) -> int:
    return sum(1 for c in server.calls if c["messages"][0]["content"].startswith("task: generate"))


# --- 1. one server, one key ------------------------------------------------------------------


@pytest.mark.parametrize(
    "typed,again",
    [
        ("http://127.0.0.1:{port}/v1", "http://localhost:{port}/v1/"),
        ("HTTP://LOCALHOST:{port}/v1", "http://[::1]:{port}/v1"),
        ("http://127.0.0.1:{port}/v1/", "http://127.0.0.2:{port}/v1"),
    ],
)
def test_the_same_server_typed_another_way_pays_nothing_again(articles, tmp_path, capsys, typed, again):
    with ChatServer(answer=scripted) as server:
        port = server.server.server_address[1]
        assert main(build(articles, tmp_path / "m.parquet", typed.format(port=port))) == 0
        paid = len(server.calls)
        capsys.readouterr()
        assert main(build(articles, tmp_path / "n.parquet", again.format(port=port), cache=tmp_path / "c.sqlite")) == 0
        assert len(server.calls) == paid
    assert f"0 calls, {paid} cache hits" in capsys.readouterr().err


def test_the_endpoint_in_the_key_is_normalised():
    assert endpoint_key("HTTPS://API.OpenAI.com:443/v1/") == "https://api.openai.com/v1"
    assert endpoint_key("http://user:secret@Example.org:80/v1") == "http://example.org/v1"
    assert endpoint_key("http://example.org:8080/v1") == "http://example.org:8080/v1"
    assert endpoint_key("http://[fe80::1]:8000/v1") == "http://[fe80::1]:8000/v1"
    loopback = ("localhost", "127.0.0.1", "[::1]", "127.1.2.3", "127.1", "[::ffff:127.0.0.1]", "LocalHost")
    assert len({endpoint_key(f"http://{h}:8000/v1") for h in loopback}) == 1
    assert {endpoint_key(f"http://localhost:8000{p}") for p in ("/v1", "/./v1", "//v1/", "/v1/", "/x/../v1")} == {
        "http://localhost:8000/v1"
    }
    assert endpoint_key("http://example.org") == endpoint_key("http://example.org/") == "http://example.org"
    assert endpoint_key("http://10.0.0.1:8000/v1") == "http://10.0.0.1:8000/v1"  # not a loopback address
    assert (
        OpenAIBackend("m", base_url="http://localhost:8/v1/").key
        == OpenAIBackend("m", base_url="http://127.0.0.1:8/v1").key
    )


def test_answers_cached_under_the_endpoint_as_typed_are_still_found(tmp_path):
    """A cache written before the normalisation keyed the endpoint as typed: the same URL typed
    the same way finds those answers, and the next run finds them at once."""
    with ChatServer() as server:
        typed = server.url.replace("127.0.0.1", "localhost") + "/"
        cache = RequestCache(tmp_path / "c.sqlite")
        for r in asks(3):
            cache.put(
                request_key(f"openai:{typed}", "m", r.messages, {}, ""),
                {"text": "old", "input_tokens": 1, "output_tokens": 1},
            )
        llm = LLMClient(OpenAIBackend("m", base_url=typed), cache)
        assert llm.dry_run(asks(3))["calls"] == 0
        assert [r.text for r in llm.run(asks(3))] == ["old"] * 3
        assert not server.calls and llm.usage.cache_hits == 3
        assert len(cache) == 6  # copied under the normalised key
        cache.close()


# --- 2. a refusal is the model's answer --------------------------------------------------------


def _refusing(title):
    def answer(messages):
        if messages[0]["content"].startswith("task: generate") and messages[-1]["content"].startswith(title):
            return {"refusal": REFUSAL}
        return scripted(messages)

    return answer


def test_a_refusal_is_a_failed_row_not_retried_and_not_paid_again(articles, tmp_path, capsys):
    out = tmp_path / "m.parquet"
    with ChatServer(answer=_refusing("天狗")) as server:
        args = build(articles, out, server.url, "--prices", '{"input": 1, "output": 1}')
        assert main(args) == 1  # an incomplete run
        err = capsys.readouterr().err
        assert generations(server) == 3  # asked once: not retried as an empty answer
        assert f"the first: refusal: {REFUSAL}" in error_line(err)
        assert "the model refused it (remembered: --retry-refusals asks again)" in error_line(err)
        assert "1 failed (1 refused by the model)" in err and "$0.0000" not in err
        assert "kept in the cache, so running again does not ask them again; --retry-refusals asks them again" in err
        failed = pq.read_table(tmp_path / "m.failed.parquet").to_pylist()
        assert [(f["step"], f["reason"]) for f in failed] == [("generate", f"refusal: {REFUSAL}")]
        calls = len(server.calls)
        assert main(args) == 1  # remembered: reported again, not paid again
        err = capsys.readouterr().err
        assert len(server.calls) == calls and "0 calls" in err and f"refusal: {REFUSAL}" in error_line(err)
        assert main([*args, "--retry-refusals"]) == 1  # asked again, when asked to
        assert generations(server) == 4


def test_content_filter_is_a_refusal_too(tmp_path):
    with ChatServer() as server:
        server.faults = ["content_filter", "refusal"]
        llm = LLMClient(OpenAIBackend("m", base_url=server.url), RequestCache(tmp_path / "c.sqlite"), concurrency=1)
        results = llm.run(asks(3))
        assert len(server.calls) == 3
        assert results[0].error == "content_filter: the server's content filter stopped the answer"
        assert results[1].error == f"refusal: {REFUSAL}" and results[2].error is None
        assert llm.usage.failures == 2 and llm.usage.refused == 2 and llm.usage.retries == 0
        again = LLMClient(OpenAIBackend("m", base_url=server.url), RequestCache(tmp_path / "c.sqlite"))
        assert [r.error is None for r in again.run(asks(3))] == [False, False, True]
        assert len(server.calls) == 3 and again.usage.failures == 2 and again.usage.cache_hits == 3
        retry = LLMClient(
            OpenAIBackend("m", base_url=server.url), RequestCache(tmp_path / "c.sqlite"), retry_refusals=True
        )
        assert all(r.error is None for r in retry.run(asks(3)))
        assert len(server.calls) == 5
        assert all(r.error is None and r.cached for r in again.run(asks(3)))  # the new answers replaced them


# --- 3. what the server billed is counted ------------------------------------------------------


def test_usage_counts_completions_that_failed(tmp_path):
    with ChatServer() as server:
        server.faults = ["refusal", "length", "empty", "empty"]
        llm = LLMClient(
            OpenAIBackend("m", base_url=server.url),
            RequestCache(tmp_path / "c.sqlite"),
            concurrency=1,
            retries=1,
            backoff=0.01,
            prices={"input": 1e6, "output": 1e6},
        )
        results = llm.run(asks(3, prefix="a question long enough to cost tokens "))
    assert [r.error is None for r in results] == [False, False, False]
    assert llm.usage.calls == 4 == len(server.calls)
    billed = sum(len(c["messages"][0]["content"]) // 4 for c in server.calls) + len(REFUSAL) // 4
    assert llm.usage.input_tokens + llm.usage.output_tokens >= billed
    assert llm.usage.cost(llm.prices) > 0 and "$0.0000" not in llm.usage.summary(llm.prices)


# --- 4. two runs on one cache pay once ----------------------------------------------------------


@pytest.mark.slow
def test_two_runs_sharing_a_cache_pay_once(tmp_path):
    articles = _articles(tmp_path / "articles.parquet", ["河童", "天狗", "座敷童子", "雪女", "鬼", "狐"])
    with ChatServer(answer=scripted) as reference:
        assert main(build(articles, tmp_path / "ref" / "m.parquet", reference.url)) == 0
        one_run = len(reference.calls)
    with ChatServer(answer=scripted, delay=1.0) as server:
        cache = tmp_path / "shared.sqlite"
        runs = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "wikiorigin.cli",
                    *build(articles, tmp_path / f"{name}.parquet", server.url, cache=cache),
                ],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for name in ("a", "b")
        ]
        outcomes = [(run.wait(120), run.stderr.read()) for run in runs]
        assert [code for code, _ in outcomes] == [0, 0], outcomes
        assert len(server.calls) == one_run  # 2 x one_run before
    assert pq.read_table(tmp_path / "a.parquet").num_rows == pq.read_table(tmp_path / "b.parquet").num_rows > 0
    assert not sqlite3.connect(cache).execute("SELECT count(*) FROM claims").fetchone()[0]


def test_a_claim_of_a_dead_process_is_taken_over(tmp_path):
    path = tmp_path / "c.sqlite"
    RequestCache(path).close()
    with ChatServer() as server:
        backend = OpenAIBackend("m", base_url=server.url)
        [request] = asks(1)
        key = request_key(backend.key, "m", request.messages, {}, "")
        subprocess.run(  # claims the key for an hour, then dies without ending the claim
            [
                sys.executable,
                "-c",
                "import os, sys; from wikiorigin.llm import RequestCache; "
                "RequestCache(sys.argv[1]).claim(sys.argv[2], 3600); os._exit(0)",
                str(path),
                key,
            ],
            check=True,
        )
        assert sqlite3.connect(path).execute("SELECT count(*) FROM claims").fetchone()[0] == 1
        llm = LLMClient(backend, RequestCache(path))
        started = time.monotonic()
        [result] = llm.run([request])
        assert result.error is None and len(server.calls) == 1 and time.monotonic() - started < 5


# --- 5. identical requests in one run are sent once ---------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("cached", [True, False])
def test_identical_requests_in_one_run_are_sent_once(tmp_path, cached):
    with ChatServer(delay=0.2) as server:
        cache = RequestCache(tmp_path / "c.sqlite") if cached else None
        llm = LLMClient(OpenAIBackend("m", base_url=server.url), cache)
        results = llm.run(asks(3) * 3)
        assert len(server.calls) == 3 and llm.usage.calls == 3 and llm.usage.cache_hits == 6
        assert [r.text for r in results] == [r.text for r in results[:3]] * 3 and results[0].text
        server.faults = ["500"] * 10
        failed = llm.run(asks(2, prefix="x") * 2)  # one failure each, shared
        assert len(server.calls) == 3 + 2 * 4 and all(r.error for r in failed) and llm.usage.failures == 4


# --- 6. a missing key is said before anything runs ----------------------------------------------


def test_no_key_and_no_base_url_names_the_variable(articles, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    args = build(articles, tmp_path / "m.parquet", "x")
    del args[args.index("--base-url") : args.index("--base-url") + 2]
    assert main(args) == 2
    assert error_line(capsys.readouterr().err) == (
        "wikiorigin: error: no API key for https://api.openai.com/v1: OPENAI_API_KEY is not set: set it, "
        "or give --base-url for a server that needs none"
    )
    assert not (tmp_path / "m.parquet").exists() and not (tmp_path / "c.sqlite").exists()


@pytest.mark.parametrize("url", ["https://api.openai.com/v1", "https://API.openai.com:443/v1/"])
def test_openais_own_url_given_needs_its_key_too(articles, tmp_path, capsys, monkeypatch, url):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert main(build(articles, tmp_path / "m.parquet", url)) == 2
    assert "OPENAI_API_KEY is not set" in error_line(capsys.readouterr().err)


@pytest.mark.slow
def test_the_server_openai_base_url_names_is_the_one_in_the_cache_key(articles, tmp_path, capsys, monkeypatch):
    """OPENAI_BASE_URL, when no --base-url is given, is the server asked: its answers are never
    served for another server's, and the provenance names it."""
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    with ChatServer(answer=scripted) as a, ChatServer(answer=scripted) as b:
        for server in (a, b):
            monkeypatch.setenv("OPENAI_BASE_URL", server.url)
            args = build(articles, tmp_path / f"{len(a.calls)}.parquet", "x", cache=tmp_path / "c.sqlite")
            del args[args.index("--base-url") : args.index("--base-url") + 2]
            assert main(args) == 0
        assert len(a.calls) == len(b.calls) > 0  # b answered its own, not a's from the cache
        capsys.readouterr()
        monkeypatch.delenv("OPENAI_BASE_URL")
        assert main(build(articles, tmp_path / "typed.parquet", a.url, cache=tmp_path / "c.sqlite")) == 0
        assert "0 calls" in capsys.readouterr().err  # the same server given as --base-url: paid once
    port = a.url.split("//")[1].split("/")[0].split(":")[1]
    assert port in str(read_provenance(tmp_path / "0.parquet")) and "api.openai.com" not in str(
        read_provenance(tmp_path / "0.parquet")
    )


def test_azure_without_a_key_names_the_variable(articles, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("AZURE_OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("AZURE_OPENAI_AD_TOKEN", raising=False)
    with ChatServer(answer=scripted) as server:
        args = build(articles, tmp_path / "m.parquet", server.url)
        args[args.index("--base-url")] = "--azure-endpoint"
        assert main(args) == 2
        assert not server.calls and not server.probes
    line = error_line(capsys.readouterr().err)
    assert line.startswith(f"wikiorigin: error: no API key for {server.url}: AZURE_OPENAI_API_KEY is not set")


def test_a_judge_without_a_key_is_said_before_the_model_loads(tmp_path, capsys, monkeypatch):
    from tests.evaluators.test_mcq_eval import _mcq_parquet

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    args = [
        "eval",
        "mcq",
        "--questions",
        str(_mcq_parquet(tmp_path / "q.parquet", 4)),
        "--model",
        str(tmp_path / "no-model"),
    ]
    args += ["--judge-model", "gpt-4o-mini", "--cache", str(tmp_path / "c.sqlite"), "--out", str(tmp_path / "run")]
    assert main(args) == 2
    assert "OPENAI_API_KEY is not set" in error_line(capsys.readouterr().err)


# --- 7. a full disk, a damaged row ----------------------------------------------------------------


@pytest.mark.slow
def test_a_full_disk_under_the_cache_is_one_line_without_a_traceback(tmp_path, small_disk):
    """In a process of its own: asyncio reports tasks left behind through logging, at exit."""
    articles = _articles(tmp_path / "articles.parquet", [f"妖怪{i}" for i in range(40)])
    big = "河童" * 3000  # ~18 KB an answer: the 256 KiB disk fills after a dozen
    with ChatServer(answer=lambda messages: big) as server:
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "wikiorigin.cli",
                *build(
                    articles, tmp_path / "m.parquet", server.url, "--concurrency", "32", cache=small_disk / "c.sqlite"
                ),
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert run.returncode == 2
    line = error_line(run.stderr)
    assert line.startswith(f"wikiorigin: error: {small_disk / 'c.sqlite'}: cannot ") and "disk is full" in line
    assert "unhandled exception" not in run.stderr and "Traceback" not in run.stderr


def test_a_damaged_cache_row_is_named_and_asked_again(articles, tmp_path, capsys):
    cache = tmp_path / "c.sqlite"
    with ChatServer(answer=scripted) as server:
        assert main(build(articles, tmp_path / "m.parquet", server.url)) == 0
        paid = len(server.calls)
        db = sqlite3.connect(cache)
        keys = [k for (k,) in db.execute("SELECT key FROM answers ORDER BY key LIMIT 3")]
        db.execute("UPDATE answers SET answer = ? WHERE key = ?", (json.dumps({"answer": "x"}), keys[0]))
        db.execute("UPDATE answers SET answer = ? WHERE key = ?", ("not json {", keys[1]))
        db.execute("UPDATE answers SET answer = ? WHERE key = ?", (json.dumps(["a list"]), keys[2]))
        db.commit()
        capsys.readouterr()
        assert main(build(articles, tmp_path / "n.parquet", server.url)) == 0
        assert len(server.calls) == paid + 3
    captured = capsys.readouterr()
    for key in keys:
        assert sum(key in line and line.startswith("wikiorigin: warning: ") for line in captured.err.splitlines()) == 1
    assert "unexpected" not in captured.err and "3 questions from 3 articles" in captured.out
    stored = [json.loads(a) for (a,) in db.execute("SELECT answer FROM answers WHERE key IN (?, ?, ?)", keys)]
    assert all(isinstance(a, dict) and "text" in a for a in stored)
