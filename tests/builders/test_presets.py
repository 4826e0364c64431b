"""The papers' presets from the library: ``Config.from_preset(name, **overrides)`` runs the
preset's settings (a notebook gets what ``--preset`` gives), records the preset, and refuses
another builder's preset or an unknown name; a bare ``preset=`` label is gone."""

import itertools
import json

import pytest

from tests.builders import test_freeform, test_mcq
from tests.builders.test_freeform import origin_articles  # noqa: F401 (fixture)
from tests.builders.test_mcq import articles  # noqa: F401 (fixture)
from tests.openai_server import ChatServer
from wikiorigin.builders.freeform import FreeformBuilder, FreeformConfig
from wikiorigin.builders.mcq import MCQBuilder, MCQConfig
from wikiorigin.builders.preference import PreferenceConfig
from wikiorigin.cli import main
from wikiorigin.files import read_provenance
from wikiorigin.llm import LLMClient, OpenAIBackend, RequestCache


def test_each_builder_s_preset_sets_its_paper_s_settings():
    mcq = MCQConfig.from_preset("yokaieval")
    assert mcq.preset == "yokaieval" and mcq.labels == "yokaieval" and mcq.label_steps == 2
    assert mcq.params == {"temperature": 0.7, "top_p": 1.0, "max_tokens": 200}
    assert (mcq.answer_positions, mcq.max_article_chars, mcq.checker_abstains) == ("as-generated", 0, False)
    free = FreeformConfig.from_preset("wikioriginqa")
    assert (free.preset, free.reasoning_effort, free.rounds, free.instructions) == ("wikioriginqa", "low", 3, "auto")
    assert free.max_article_chars == 0
    care = PreferenceConfig.from_preset("care")
    assert care.preset == "care" and care.pairs == "best-worst"
    assert care.answer_params == care.judge_params == {"temperature": 0.7, "top_p": 1.0, "max_tokens": 1024}
    assert MCQConfig().preset is None and FreeformConfig().preset is None and PreferenceConfig().preset is None


def test_overrides_win_and_presets_do_not_share_their_settings():
    config = FreeformConfig.from_preset("wikioriginqa", rounds=1, reasoning_effort="high")
    assert (config.rounds, config.reasoning_effort, config.preset) == (1, "high", "wikioriginqa")
    care = PreferenceConfig.from_preset("care")
    care.answer_params["temperature"] = 0
    assert PreferenceConfig.from_preset("care").answer_params["temperature"] == 0.7


def test_another_builder_s_preset_or_an_unknown_name_is_a_value_error():
    with pytest.raises(ValueError, match=r"MCQConfig.from_preset: the preset 'care' is CARE's, for the preference"):
        MCQConfig.from_preset("care")
    with pytest.raises(ValueError, match=r"the preset 'yokaieval' .* for the mcq builder .*not the freeform"):
        FreeformConfig.from_preset("yokaieval")
    with pytest.raises(ValueError, match=r"no preset 'carre': the presets are yokaieval, wikioriginqa, care"):
        PreferenceConfig.from_preset("carre")


def test_a_preset_is_never_a_bare_label():
    for cls, name in ((MCQConfig, "yokaieval"), (FreeformConfig, "wikioriginqa"), (PreferenceConfig, "care")):
        with pytest.raises(TypeError):
            cls(preset=name)
        with pytest.raises(AttributeError):
            cls().preset = name


def _rewriting(messages):
    """The scripted generator, but each refinement gives a new question (no pass a cache hit)."""
    task = messages[0]["content"].splitlines()[0].removeprefix("task: ")
    if task == "freeform-refine":
        return json.dumps({"question": f"問い{next(_COUNTER)}"}, ensure_ascii=False)
    return test_freeform.scripted(messages)


_COUNTER = itertools.count()


def test_a_config_from_the_wikioriginqa_preset_runs_its_settings(origin_articles, tmp_path):  # noqa: F811
    """A notebook's FreeformBuilder from the preset asks with effort low (no sampling: the
    reasoning server refuses it) and refines 3 rounds, as ``--preset wikioriginqa`` does."""
    config = FreeformConfig.from_preset("wikioriginqa")
    with ChatServer(answer=_rewriting, reasoning=True) as server:
        llm = LLMClient(OpenAIBackend("gpt-5", base_url=server.url), RequestCache(tmp_path / "c.sqlite"))
        result = FreeformBuilder(config).run(origin_articles, llm)
        calls = [c for c in server.calls if "messages" in c]
    assert calls and all(c["reasoning_effort"] == "low" and "temperature" not in c for c in calls)
    refines = [c for c in calls if test_freeform._task(c) == "freeform-refine"]
    assert len(refines) == 3 * 4  # 3 rounds of the 4 articles' questions
    assert result.meta["preset"] == "wikioriginqa" and result.meta["rounds"] == 3
    assert result.meta["llm"]["generator"]["reasoning_effort"] == "low"


def test_the_cli_preset_is_the_library_s_with_the_options_given_winning(origin_articles, tmp_path):  # noqa: F811
    out = tmp_path / "f.parquet"
    with ChatServer(answer=_rewriting, reasoning=True) as server:
        argv = test_freeform._argv(origin_articles, out, server.url, "--preset", "wikioriginqa", "--rounds", "1")
        assert main([*argv, "--reasoning-effort", "medium"]) == 0
        calls = [c for c in server.calls if "messages" in c]
    assert all(c["reasoning_effort"] == "medium" for c in calls)
    meta = read_provenance(out)
    assert (meta["preset"], meta["rounds"], meta["max_article_chars"]) == ("wikioriginqa", 1, 0)


def test_a_config_from_the_yokaieval_preset_runs_its_settings(articles, tmp_path):  # noqa: F811
    """Every step at the paper's sampling, labels in the paper's two steps in its classes, a
    checker that must choose: the ``yokaieval`` preset's settings, from the library."""
    with ChatServer(answer=test_mcq.scripted) as server:
        result = MCQBuilder(MCQConfig.from_preset("yokaieval")).run(articles, test_mcq.make_client(server, tmp_path))
        calls = [c for c in server.calls if "messages" in c]
    tasks = {c["messages"][0]["content"].splitlines()[0].removeprefix("task: ") for c in calls}
    assert {"label-type", "label-region"} <= tasks and "label" not in tasks
    assert all((c["temperature"], c["top_p"], c["max_tokens"]) == (0.7, 1.0, 200) for c in calls)
    checks = [c for c in calls if c["messages"][0]["content"].startswith("task: check")]
    assert checks and all("null" not in c["messages"][0]["content"] for c in checks)  # no way out
    assert (result.meta["preset"], result.meta["labels"], result.meta["answer_positions"]) == (
        "yokaieval",
        "yokaieval",
        "as-generated",
    )


@pytest.mark.parametrize("builder", ["mcq", "freeform", "preference"])
def test_the_help_claims_no_paper_setting_the_defaults_lack(builder, capsys):
    """The builders' defaults differ from the papers where methods.md says (a cut article,
    balanced answers, one label step, WikiOriginQA's temperature): the help says so and names
    the preset, never "defaults follow the paper"."""
    with pytest.raises(SystemExit):
        main(["build", builder, "--help"])
    said = " ".join(capsys.readouterr().out.split())
    assert "follow the paper" not in said and "(default: the paper's)" not in said
    assert "methods.md" in said and "--preset" in said
