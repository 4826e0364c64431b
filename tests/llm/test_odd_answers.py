"""Answers a server sends that are no answer, and usage that is no count: never a number.

The loopback server of tests/openai_server.py, its 200 answers changed on the wire by
``Odd.change`` (a content that is not text, vLLM's ``abort``, a usage that is negative, NaN or
missing), as a broken server or proxy sends them."""

import copy
import json

import pytest

from tests.evaluators.test_mcq_eval import _answering, _mcq_parquet
from tests.llm.test_money import asks
from tests.openai_server import ChatServer, _Handler, _Server
from wikiorigin.cli import main
from wikiorigin.llm import LLMClient, OpenAIBackend, RequestCache


class _OddHandler(_Handler):
    def _send(self, status, payload, headers=None):
        change = self.server.owner.change
        if status == 200 and change is not None and "choices" in payload:
            payload = copy.deepcopy(payload)
            change(payload)
        super()._send(status, payload, headers)


class Odd(ChatServer):
    """A :class:`ChatServer` whose every 200 answer ``change(payload)`` alters."""

    def __init__(self, answer=None, change=None):
        super().__init__(answer)
        self.change = change

    def __enter__(self):
        super().__enter__()
        self.server.shutdown()
        self.server.server_close()
        self.server = _Server(("127.0.0.1", 0), _OddHandler)
        self.server.owner = self
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        import threading

        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self


def _content(value):
    def change(payload):
        payload["choices"][0]["message"]["content"] = value

    return change


def _finish(value):
    def change(payload):
        payload["choices"][0]["finish_reason"] = value

    return change


def _eval(tmp_path, url, *extra):
    questions = _mcq_parquet(tmp_path / "q.parquet", 6)
    args = ["eval", "mcq", "--questions", str(questions), "--model", "m", "--endpoint", url]
    args += ["--retries", "1", "--max-wait", "0.1", "--cache", str(tmp_path / "c.sqlite"), "--out"]
    return main([*args, str(tmp_path / "run"), *extra])


@pytest.mark.parametrize(
    "change",
    [_content(5), _content([{"type": "text", "text": "回答：選択肢0-0"}]), _finish("abort"), _finish("error")],
    ids=["content-number", "content-parts", "finish-abort", "finish-error"],
)
def test_an_answer_that_is_not_one_is_a_failed_request_never_scored(tmp_path, capsys, change):
    with Odd(_answering, change) as server:
        assert _eval(tmp_path, server.url) == 1
        err = capsys.readouterr().err
        assert "Traceback" not in err and "unexpected" not in err and "all 6 requests failed" in err
        summary = json.loads((tmp_path / "run" / "summary.json").read_text())
        assert summary["complete"] is False and summary["answered"] == 0 and summary["accuracy"] is None
        server.change = None  # mended: the same command asks again, and nothing was cached
        assert _eval(tmp_path, server.url) == 0
    assert len(server.calls) == 12 + 6


@pytest.mark.parametrize(
    "change",
    [
        lambda p: p["usage"].update(prompt_tokens=-100000, completion_tokens=-5),
        lambda p: p["usage"].update(prompt_tokens=float("nan")),
        lambda p: p.pop("usage"),
    ],
    ids=["negative", "nan", "missing"],
)
def test_usage_that_is_no_count_is_counted_as_none_and_said(tmp_path, change):
    with Odd(change=change) as server:
        llm = LLMClient(
            OpenAIBackend("m", base_url=server.url),
            RequestCache(tmp_path / "c.sqlite"),
            prices={"input": 1000, "output": 1000},
        )
        results = llm.run(asks(3))
    assert all(r.error is None for r in results)
    usage = llm.usage
    assert usage.unmetered == 3 and usage.input_tokens >= 0 and usage.output_tokens >= 0
    line = usage.summary(llm.prices)
    assert "nan" not in line and "-" not in line.split("tokens")[0] and "3 calls reported no readable usage" in line
    assert usage.cost(llm.prices) >= 0


def test_a_key_of_blanks_is_no_key(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "   ")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert _eval(tmp_path, "https://api.openai.com/v1") == 2
    err = capsys.readouterr().err
    assert "OPENAI_API_KEY is not set" in err and not (tmp_path / "run").exists()
