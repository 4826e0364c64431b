import json

import pytest

from tests.openai_server import ChatServer
from wikiorigin.llm import ChatRequest, LLMClient, OpenAIBackend, RequestCache

SCHEMA = {"type": "object", "required": ["echo"], "properties": {"echo": {"type": "string"}}}


def client(server, tmp_path, **kw):
    backend = OpenAIBackend("test-model", base_url=server.url, timeout=kw.pop("timeout", 10))
    return LLMClient(backend, RequestCache(tmp_path / "cache.sqlite"), backoff=0.01, **kw)


def requests(n, version="v1", schema=SCHEMA):
    return [
        ChatRequest(
            [{"role": "user", "content": f"question {i}"}], {"temperature": 0}, prompt_version=version, schema=schema
        )
        for i in range(n)
    ]


def test_answers_in_order_and_cached(tmp_path):
    with ChatServer() as server:
        llm = client(server, tmp_path, concurrency=4)
        results = llm.run(requests(10))
        assert [r.data["echo"] for r in results] == [f"question {i}" for i in range(10)]
        assert llm.usage.calls == 10 and len(server.calls) == 10
        again = client(server, tmp_path)
        assert [r.data for r in again.run(requests(10))] == [r.data for r in results]
        assert again.usage.calls == 0 and again.usage.cache_hits == 10 and len(server.calls) == 10
        changed = client(server, tmp_path)
        changed.run(requests(3, version="v2"))  # a changed prompt is not a cache hit
        assert changed.usage.calls == 3


@pytest.mark.slow
def test_retries_on_429_500_timeouts_and_bad_bodies(tmp_path):
    with ChatServer() as server:
        server.faults = ["429", "500", "truncated", "nonjson", "slow"]
        server.slow_seconds = 1.5
        llm = client(server, tmp_path, concurrency=1, timeout=0.5, retries=5)
        [result] = llm.run(requests(1))
        assert result.error is None and result.data == {"echo": "question 0"}
        assert llm.usage.retries == 5 and llm.usage.calls == 1


def test_giving_up_is_a_failed_row_not_an_exception(tmp_path):
    with ChatServer() as server:
        server.faults = ["500"] * 10
        llm = client(server, tmp_path, concurrency=1, retries=2)
        [result] = llm.run(requests(1))
        assert result.error.startswith("gave up after 3 tries: 500") and llm.usage.failures == 1


def test_json_repair_round(tmp_path):
    answers = iter(["Sure! Here it is: {oops", json.dumps({"echo": "fixed"})])
    with ChatServer(answer=lambda messages: next(answers)) as server:
        llm = client(server, tmp_path)
        [result] = llm.run(requests(1))
        assert result.data == {"echo": "fixed"} and llm.usage.repairs == 1
        assert "not valid JSON" in server.calls[1]["messages"][-1]["content"]


def test_json_still_invalid_after_repair(tmp_path):
    with ChatServer(answer=lambda messages: json.dumps({"wrong": 1})) as server:
        llm = client(server, tmp_path)
        [result] = llm.run(requests(1))
        assert result.error.startswith("invalid JSON after one repair: schema: 'echo' is a required property")


def test_dry_run_and_usage(tmp_path):
    with ChatServer() as server:
        llm = client(server, tmp_path)
        plan = llm.dry_run(requests(5))
        assert plan["calls"] == 5 and plan["input_tokens"] > 0 and not server.calls
        llm.run(requests(2))
        assert llm.dry_run(requests(5))["calls"] == 3
        assert "2 calls" in llm.usage.summary({"input": 1.0, "output": 2.0})


@pytest.mark.slow
def test_killed_half_way_loses_nothing(tmp_path):
    """Answers are stored as they come: a second run after a crash repeats no call."""
    with ChatServer() as server:
        server.faults = [None] * 4 + ["500"] * 50
        first = client(server, tmp_path, concurrency=1, retries=0)
        results = first.run(requests(8))
        done = [r for r in results if not r.error]
        assert len(done) == 4
        server.faults = []
        second = client(server, tmp_path, concurrency=2)
        assert all(not r.error for r in second.run(requests(8)))
        assert second.usage.cache_hits == 4 and second.usage.calls == 4
        asked = [
            c["messages"][-1]["content"] for c in server.calls if c["messages"][-1]["content"].startswith("question")
        ]
        assert len(asked) == len(set(asked)) + 4  # only the 4 failed ones were asked twice


def test_rate_limit(tmp_path):
    import time

    with ChatServer() as server:
        llm = client(server, tmp_path, concurrency=8, rpm=3)
        started = time.monotonic()
        llm.run(requests(3))
        assert time.monotonic() - started < 5


def test_run_inside_a_running_event_loop(tmp_path):
    """As in a notebook, whose event loop is already running."""
    import asyncio

    async def main():
        with ChatServer() as server:
            return client(server, tmp_path).run(requests(2))

    results = asyncio.run(main())
    assert [r.data["echo"] for r in results] == ["question 0", "question 1"]


def test_local_transformers_backend(tmp_path, tiny_model_dir):
    pytest.importorskip("transformers", reason="the eval extra is not installed")
    from wikiorigin.llm.transformers_backend import TransformersBackend

    backend = TransformersBackend(tiny_model_dir, max_new_tokens=8)
    llm = LLMClient(backend, RequestCache(tmp_path / "cache.sqlite"), concurrency=2)
    plain = [ChatRequest(r.messages, r.params, r.prompt_version, truncated_ok=True) for r in requests(2, schema=None)]
    answered = llm.run(plain)  # 8 tokens of random weights: cut off, and taken as they are
    assert all(r.error is None and isinstance(r.text, str) for r in answered)
    assert llm.usage.calls == 2 and llm.usage.output_tokens > 0
    again = LLMClient(backend, RequestCache(tmp_path / "cache.sqlite"))
    assert [r.text for r in again.run(plain)] == [r.text for r in answered]
    assert again.usage.calls == 0
    # random weights answer garbage: a JSON request fails cleanly (cut off, or invalid after one repair)
    [bad] = llm.run(requests(1, version="json"))
    assert bad.error and bad.error.startswith(("invalid JSON after one repair", "cut off by the output limit"))


@pytest.mark.slow
def test_cli_with_a_local_model(tmp_path, capsys, data_dir):
    pytest.importorskip("transformers", reason="the eval extra is not installed")
    import pyarrow as pa
    import pyarrow.parquet as pq

    from tests.tiny_model import make_tiny_model
    from wikiorigin.cli import main
    from wikiorigin.schemas import ARTICLES

    # its own model: the MCQ build prompt (~1,000 tokens of this small vocabulary) + 256 new
    # tokens do not fit the 1,024 positions of the tiny_model_dir fixture
    model = make_tiny_model(tmp_path / "tiny")
    articles = tmp_path / "articles.parquet"
    pq.write_table(
        pa.Table.from_pylist(
            [
                {
                    "wiki": "jawiki",
                    "page_id": 1,
                    "title": "河童",
                    "text": "河童は川に住むと言われる[1]。",
                    "references": [{"number": 1, "text": "柳田国男『妖怪談義』"}],
                    "revision_id": 5,
                    "url": "https://ja.wikipedia.org/wiki/%E6%B2%B3%E7%AB%A5",
                }
            ],
            schema=ARTICLES,
        ),
        articles,
    )
    assert (
        main(
            [
                "build",
                "mcq",
                "--articles",
                str(articles),
                "--out",
                str(tmp_path / "m.parquet"),
                "--model",
                str(model),
                "--backend",
                "transformers",
                "--cache",
                str(tmp_path / "c.sqlite"),
            ]
        )
        == 1
    )
    captured = capsys.readouterr()  # a random model writes no JSON: every request failed, exit 1
    assert "0 questions from 1 articles" in captured.out
    # random weights run to the output limit (a cut answer is no answer) or write no valid JSON
    reasons = ("invalid JSON after one repair", "cut off by the output limit")
    assert any(f"wikiorigin: error: the only request failed: {r}" in captured.err for r in reasons)
    failed = pq.read_table(tmp_path / "m.failed.parquet").to_pylist()
    assert failed[0]["step"] == "generate" and failed[0]["reason"].startswith(reasons)


def test_a_prompt_too_long_for_a_local_model_is_a_failed_row(tiny_model_dir):
    pytest.importorskip("transformers", reason="the eval extra is not installed")
    from wikiorigin.llm.transformers_backend import TransformersBackend

    backend = TransformersBackend(tiny_model_dir, max_new_tokens=8)
    llm = LLMClient(backend, None)
    [long, short] = llm.run(
        [
            ChatRequest([{"role": "user", "content": "河童 " * 2000}]),
            ChatRequest([{"role": "user", "content": "河童"}], truncated_ok=True),
        ]
    )
    assert long.error.startswith("refused: ") and "exceed the model's 1024 positions" in long.error
    assert short.error is None


def test_the_backend_loads_as_the_evaluators_do(tiny_model_dir, tmp_path):
    """One loader (wikiorigin.llm.hf): the same device and dtype choice, the same one-line errors."""
    pytest.importorskip("transformers", reason="the eval extra is not installed")
    import torch

    from wikiorigin.errors import WikioriginError
    from wikiorigin.evaluators.models import LocalModel
    from wikiorigin.llm.transformers_backend import TransformersBackend

    backend, local = TransformersBackend(tiny_model_dir), LocalModel(tiny_model_dir)
    assert backend.device == local.device and backend.lm.dtype == local.model.dtype
    with pytest.raises(WikioriginError, match="^device='tpu': not a device"):
        TransformersBackend(tiny_model_dir, device="tpu")
    with pytest.raises(WikioriginError, match="no such model directory"):
        TransformersBackend(tmp_path / "nothing")
    if not torch.cuda.is_available():
        with pytest.raises(WikioriginError, match="^device='cuda': CUDA is not available here"):
            TransformersBackend(tiny_model_dir, device="cuda")
