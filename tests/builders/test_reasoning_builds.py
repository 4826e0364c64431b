"""Each builder driven end to end through the CLI by a loopback server that behaves as
OpenAI's reasoning models do (refuses sampling parameters and max_tokens, reports reasoning
tokens, takes json_schema response formats); presets and the sampling options."""

import pyarrow.parquet as pq
import pytest

from tests.builders import test_freeform, test_mcq, test_preference
from tests.builders.test_freeform import origin_articles  # noqa: F401 (fixture)
from tests.builders.test_mcq import articles  # noqa: F401 (fixture)
from tests.builders.test_preference import questions  # noqa: F401 (fixture)
from tests.commands import build_mcq
from tests.openai_server import ChatServer
from wikiorigin.cli import main
from wikiorigin.files import read_provenance

SAMPLING = ("temperature", "top_p", "max_tokens")


def _mcq(articles, out, url, *extra):
    return build_mcq(articles, out, url, *extra, model="gpt-5")


def _no_sampling(calls, effort="low"):
    assert calls and all(c["reasoning_effort"] == effort for c in calls)
    assert not any(k in c for c in calls for k in SAMPLING)


def test_build_mcq_with_a_reasoning_model(articles, tmp_path, capsys):  # noqa: F811
    out = tmp_path / "mcq.parquet"
    with ChatServer(test_mcq.scripted, reasoning=True) as server:
        assert main(_mcq(articles, out, server.url, "--reasoning-effort", "low", "--max-tokens", "4000")) == 0
        _no_sampling(server.calls)
        assert all(c["max_completion_tokens"] in (4000,) for c in server.calls)
        assert all(c["response_format"]["type"] == "json_schema" for c in server.calls)
    meta = read_provenance(out)
    usage = meta["usage"]["generator"]
    assert usage["reasoning_tokens"] == 64 * usage["calls"] and usage["structured"] == usage["calls"]
    assert meta["llm"]["generator"]["reasoning_effort"] == "low"
    assert meta["llm"]["generator"]["structured_outputs"] == "json_schema"
    assert pq.read_table(out).num_rows > 0
    assert "reasoning)" in capsys.readouterr().err


def test_build_mcq_without_an_effort_is_one_line_at_the_first_call(articles, tmp_path, capsys):  # noqa: F811
    out = tmp_path / "mcq.parquet"
    with ChatServer(test_mcq.scripted, reasoning=True) as server:
        assert main(_mcq(articles, out, server.url)) == 2
        assert len(server.calls) == 1  # the first call went alone; nothing else was sent
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("wikiorigin:")]
    assert len(err) == 1 and "refuses the parameter 'temperature'" in err[0] and "--reasoning-effort" in err[0]
    assert not out.exists()


@pytest.mark.slow
def test_build_freeform_with_the_wikioriginqa_preset(origin_articles, tmp_path, capsys):  # noqa: F811
    out = tmp_path / "freeform.parquet"
    with ChatServer(test_freeform.scripted, reasoning=True) as server:
        argv = test_freeform._argv(origin_articles, out, server.url, "--preset", "wikioriginqa", model="gpt-5")
        assert main(argv) == 0
        _no_sampling(server.calls)
    meta = read_provenance(out)
    assert meta["preset"] == "wikioriginqa" and meta["rounds"] == 3
    assert meta["llm"]["generator"]["reasoning_effort"] == "low" and meta["usage"]["generator"]["reasoning_tokens"] > 0


@pytest.mark.slow
def test_build_preference_with_a_reasoning_model(questions, tmp_path):  # noqa: F811
    path, _ = questions
    out = tmp_path / "p.parquet"
    with ChatServer(answer=test_preference.scripted, reasoning=True) as server:
        argv = test_preference._models_argv(path, out, server.url, "--reasoning-effort", "medium", "--preset", "care")
        assert main(argv) == 0
        _no_sampling(server.calls, "medium")
        assert all(c["max_completion_tokens"] == 1024 for c in server.calls)
    meta = read_provenance(out)
    assert meta["preset"] == "care" and meta["llm"]["judge"]["reasoning_effort"] == "medium"
    assert pq.read_table(out).num_rows == 6


@pytest.mark.slow
def test_sampling_options_reach_every_step_and_win_over_the_preset(articles, tmp_path):  # noqa: F811
    out = tmp_path / "mcq.parquet"
    with ChatServer(test_mcq.scripted) as server:
        assert (
            main(_mcq(articles, out, server.url, "--preset", "yokaieval", "--temperature", "0.2", "--top-p", "0.9"))
            == 0
        )
        assert all(c["temperature"] == 0.2 and c["top_p"] == 0.9 for c in server.calls)
        assert {c["max_tokens"] for c in server.calls} == {200}  # the preset's limit, one question an article
    meta = read_provenance(out)
    assert meta["preset"] == "yokaieval" and meta["params"] == {"temperature": 0.2, "top_p": 0.9, "max_tokens": 200}


def test_another_builders_preset_is_one_line(articles, tmp_path, capsys):  # noqa: F811
    assert main(_mcq(articles, tmp_path / "m.parquet", "http://127.0.0.1:9/v1", "--preset", "care")) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("wikiorigin: error: --preset: the preset 'care' is CARE's, for `build preference`, not `build mcq`")


def test_bad_sampling_options_are_refused_at_the_command_line(articles, tmp_path, capsys):  # noqa: F811
    import pytest

    for option, value in (
        ("--temperature", "-1"),
        ("--top-p", "1.5"),
        ("--max-tokens", "0"),
        ("--reasoning-effort", "extreme"),
    ):
        with pytest.raises(SystemExit) as exit_:
            main(_mcq(articles, tmp_path / "m.parquet", "http://127.0.0.1:9/v1", option, value))
        assert exit_.value.code == 2 and option in capsys.readouterr().err
