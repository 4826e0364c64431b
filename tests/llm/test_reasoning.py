"""Reasoning models, structured outputs and usable answers, against a loopback server that
behaves as OpenAI's reasoning models do (tests/openai_server.py, ``reasoning=True``)."""

import json

import jsonschema
import pytest

from tests.openai_server import ChatServer
from wikiorigin.llm import ChatRequest, EndpointError, LLMClient, OpenAIBackend, RequestCache
from wikiorigin.llm.client import strict_schema

SCHEMA = {"type": "object", "required": ["echo"], "properties": {"echo": {"type": "string", "minLength": 1}}}
PARAMS = {"temperature": 0.7, "top_p": 1.0, "max_tokens": 200}


def client(server, tmp_path, **kw):
    backend = OpenAIBackend("gpt-5", base_url=server.url, timeout=10)
    return LLMClient(backend, RequestCache(tmp_path / "cache.sqlite"), backoff=0.01, **kw)


def asks(n, schema=SCHEMA, params=PARAMS):
    return [ChatRequest([{"role": "user", "content": f"question {i}"}], dict(params), "v1", schema) for i in range(n)]


def test_the_command_line_offers_the_efforts_the_client_takes():
    from wikiorigin.cli import options
    from wikiorigin.llm import client

    assert options.REASONING_EFFORTS == client.REASONING_EFFORTS


def test_an_effort_sends_no_sampling_parameter_and_counts_reasoning_tokens(tmp_path):
    with ChatServer(reasoning=True) as server:
        llm = client(server, tmp_path, reasoning_effort="low")
        results = llm.run(asks(4))
        assert [r.data["echo"] for r in results] == [f"question {i}" for i in range(4)]
        for body in server.calls:
            assert body["reasoning_effort"] == "low"
            assert "temperature" not in body and "top_p" not in body and "max_tokens" not in body
        assert len(server.calls) == 4 and all(b["max_completion_tokens"] == 200 for b in server.calls)
        assert llm.usage.calls == 4 and llm.usage.reasoning_tokens == 4 * 64
        assert llm.usage.output_tokens >= 4 * 64 and "(256 reasoning)" in llm.usage.summary()
        assert llm.usage.as_dict()["reasoning_tokens"] == 256 and llm.warnings() == []
        assert llm.settings()["reasoning_effort"] == "low"


def test_a_server_that_refuses_max_tokens_gets_max_completion_tokens(tmp_path):
    with ChatServer(reasoning=True) as server:  # no effort, no sampling parameter: only the limit is refused
        llm = client(server, tmp_path)
        results = llm.run(asks(3, params={"max_tokens": 50}))
        assert all(r.error is None for r in results)
        assert len(server.calls) == 4 and "max_tokens" in server.calls[0]  # refused once (a 400), learned
        assert all(b["max_completion_tokens"] == 50 and "max_tokens" not in b for b in server.calls[1:])


def test_a_refused_seed_is_dropped_not_fatal(tmp_path):
    with ChatServer(reasoning=True) as server:
        server.refuse_seed = True
        llm = client(server, tmp_path, reasoning_effort="low")
        results = llm.run(asks(3, params={"seed": 0, "max_tokens": 50}))
        assert all(r.error is None for r in results)
        assert len(server.calls) == 4 and all("seed" not in b for b in server.calls[1:])


def test_the_effort_is_part_of_the_cache_key(tmp_path):
    with ChatServer(reasoning=True) as server:
        client(server, tmp_path, reasoning_effort="low").run(asks(2))
        again = client(server, tmp_path, reasoning_effort="low")
        again.run(asks(2))
        assert again.usage.calls == 0 and again.usage.cache_hits == 2
        higher = client(server, tmp_path, reasoning_effort="high")
        higher.run(asks(2))
        assert higher.usage.calls == 2 and higher.usage.cache_hits == 0


def test_sampling_parameters_refused_by_a_reasoning_model_stop_the_run_at_the_first_call(tmp_path):
    with ChatServer(reasoning=True) as server:
        llm = client(server, tmp_path, concurrency=8)
        with pytest.raises(EndpointError) as caught:
            llm.run(asks(20))
        message = str(caught.value)
        assert "refuses the parameter 'temperature'" in message and "give reasoning_effort= (" in message
        assert "\n" not in message and caught.value.parameter == "temperature"
        # the first call went alone; nothing else was sent
        assert len(server.calls) <= 2 and llm.usage.calls == 0


def test_an_effort_the_server_ignores_is_reported_from_the_usage(tmp_path):
    with ChatServer() as server:  # a plain server: takes the parameter, reports no reasoning
        llm = client(server, tmp_path, reasoning_effort="medium")
        llm.run(asks(3))
        [warning] = llm.warnings()
        assert "reasoning_effort 'medium' was sent" in warning and "no reasoning tokens in 3 answers" in warning


def test_schemas_go_as_json_schema_response_formats_where_the_server_takes_them(tmp_path):
    with ChatServer() as server:
        llm = client(server, tmp_path)
        llm.run(asks(3))
        formats = [b["response_format"] for b in server.calls]
        assert all(f["type"] == "json_schema" and f["json_schema"]["strict"] for f in formats)
        sent = formats[0]["json_schema"]["schema"]
        assert sent["additionalProperties"] is False and "minLength" not in sent["properties"]["echo"]
        assert llm.usage.structured == 3 and llm.usage.repairs == 0
        assert llm.settings()["structured_outputs"] == "json_schema"


def test_a_server_without_structured_outputs_falls_back_to_the_prompt(tmp_path):
    with ChatServer(json_schema=False) as server:
        llm = client(server, tmp_path)
        results = llm.run(asks(3))
        assert all(r.error is None for r in results)
        answered = [b for b in server.calls if "response_format" not in b]
        assert len(answered) == 3 and len(server.calls) == 4  # one refusal, learned once
        assert llm.usage.structured == 0 and llm.settings()["structured_outputs"] == "prompt"


def test_structured_outputs_off_sends_no_response_format(tmp_path):
    with ChatServer() as server:
        client(server, tmp_path, structured_outputs=False).run(asks(2))
        assert all("response_format" not in b for b in server.calls)


def test_the_strict_schema_takes_the_same_answers():
    schema = {
        "type": "object",
        "required": ["a"],
        "properties": {
            "a": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["x"],
                    "properties": {"x": {"type": "integer"}, "y": {"type": "string"}},
                },
            },
            "b": {"type": "string", "minLength": 2},
        },
    }
    strict = strict_schema(schema)
    assert strict["required"] == ["a", "b"] and strict["properties"]["b"]["type"] == ["string", "null"]
    item = strict["properties"]["a"]["items"]
    assert item["additionalProperties"] is False and item["required"] == ["x", "y"]
    jsonschema.validate({"a": [{"x": 1, "y": None}], "b": None}, strict)
    assert schema["properties"]["b"] == {"type": "string", "minLength": 2}  # not changed in place


@pytest.mark.parametrize("fault", ["empty", "null", "html", "nochoices"])
def test_an_unusable_answer_is_retried_never_cached(tmp_path, fault):
    with ChatServer() as server:
        server.faults = [fault] * 3
        llm = client(server, tmp_path, retries=1)
        [result] = llm.run(asks(1, schema=None, params={"temperature": 0}))
        assert result.error is not None and result.text is None and llm.usage.failures == 1
        again = client(server, tmp_path)  # healthy now: asked again, not served a bad answer from the cache
        [fine] = again.run(asks(1, schema=None, params={"temperature": 0}))
        assert fine.error is None and json.loads(fine.text) == {"echo": "question 0"}
        # the third fault answers its first try: a completion the server sent (and billed) is counted
        billed = fault in ("empty", "null")
        assert again.usage.calls == 1 + billed and again.usage.retries == 1 and again.usage.cache_hits == 0
        assert llm.usage.calls == 2 * billed  # the failed run's two completions too


def test_an_answer_cut_off_by_the_limit_is_no_answer_unless_asked_for(tmp_path):
    with ChatServer() as server:
        server.faults = ["length"]
        llm = client(server, tmp_path)
        [cut] = llm.run(asks(1, schema=None))
        assert cut.error == "cut off by the output limit of 200 tokens: raise max_tokens="
        assert len(llm.cache) == 0
        server.faults = ["length"]
        request = ChatRequest([{"role": "user", "content": "q"}], {"max_tokens": 5}, "v1", truncated_ok=True)
        [taken] = llm.run([request])
        assert taken.error is None and taken.finish_reason == "length" and len(llm.cache) == 1


def _questions(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from wikiorigin.schemas import MCQ

    rows = [
        {
            "id": f"q{i}",
            "question": f"河童の好物は何か。{i}",
            "choices": ["胡瓜", "茄子", "大根", "蕪"],
            "answer": "胡瓜",
            "answer_index": 0,
            "ref": [1],
            "title": "河童",
            "wiki": "jawiki",
            "page_id": 1,
            "url": "https://ja.wikipedia.org/wiki/河童",
            "language": "ja",
        }
        for i in range(3)
    ]
    path = tmp_path / "mcq.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=MCQ), path)
    return path


@pytest.mark.slow
def test_an_endpoint_evaluation_of_a_reasoning_model(tmp_path, capsys):
    from wikiorigin import cli

    questions = _questions(tmp_path)
    with ChatServer(lambda messages: "胡瓜", reasoning=True) as server:
        base = [
            "eval",
            "mcq",
            "--questions",
            str(questions),
            "--model",
            "gpt-5",
            "--endpoint",
            server.url,
            "--cache",
            str(tmp_path / "c.sqlite"),
        ]
        assert cli.main([*base, "--out", str(tmp_path / "plain")]) == 2  # temperature refused: one line
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "refuses the parameter 'temperature'" in err[0] and "--reasoning-effort" in err[0]
        assert len(server.calls) == 1
        assert cli.main([*base, "--reasoning-effort", "low", "--out", str(tmp_path / "run")]) == 0
        sent = server.calls[1:]
        assert len(sent) == 3 and all(b["reasoning_effort"] == "low" and "temperature" not in b for b in sent)
        assert all(b["max_completion_tokens"] == 128 for b in sent)
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["accuracy"] == 1.0
    assert (
        "|effort:low|" in json.dumps(summary)
        and "temp:" not in json.dumps(summary)
        and summary["settings"]["reasoning_effort"] == "low"
    )
