"""Settings records and signatures: the fixed field order, model revisions (directory hash,
git checkout, hub commit, endpoint host), what counts as a difference, each evaluator's fields."""

import hashlib
import json
import math
from types import SimpleNamespace

import pytest

from wikiorigin import __version__
from wikiorigin.errors import ParameterError
from wikiorigin.evaluators import freeform, judge, leakage, mcq
from wikiorigin.evaluators.signature import (
    MODEL_FIELDS,
    client_name,
    context_bos,
    data_hash,
    differences,
    mcq_settings,
    model_revision,
    model_settings,
    run_settings,
    signature,
    text_hash,
)

TEMPLATE = "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}<|end|>{% endfor %}"


def _model_dir(tmp_path, weights=b"\0" * 64):
    path = tmp_path / "Qwen2.5-7B-Instruct"
    path.mkdir()
    (path / "config.json").write_text('{"model_type": "qwen2", "vocab_size": 152064}')
    (path / "model-00001-of-00002.safetensors").write_bytes(weights)
    (path / "model-00002-of-00002.safetensors").write_bytes(b"\0" * 8)
    (path / "tokenizer.json").write_text("{}")  # not a weight file: left out of the hash
    return path


class _Described:
    """A model that says what it is: ``describe()`` returns ``description``."""

    def __init__(self, name, description):
        self.name, self.description = name, description

    def describe(self):
        return self.description


def _local(path, chat=True, dtype="torch.bfloat16", commit=None, add_bos=None):
    """A model describing itself as LocalModel.describe does (dtype and device as on a GPU)."""
    template = f"chat@{text_hash(TEMPLATE)}" if chat else "raw"
    return _Described(
        path.name,
        {
            "model": f"{path.name}@{model_revision(path, commit)}",
            "dtype": dtype.removeprefix("torch."),
            "device": "cuda",
            "max_length": 32768,
            "generate": {"template": template, "bos": "template" if chat else "tokenizer"},
            "loglikelihood": {"bos": context_bos(add_bos), "split": "whole"},
            "token_logprobs": {"bos": "always"},
        },
    )


def test_signature_of_a_generation_run(tmp_path):
    path = _model_dir(tmp_path)
    settings = run_settings(
        "mcq",
        _local(path),
        capability="generate",
        sampling={"temperature": 0.1, "seed": None},
        mode="generate",
        instruction=text_hash(mcq.INSTRUCTIONS["ja"]),
        language="ja",
        parser=2,
        judge=None,
        data="0a1b2c3d",
    )
    revision = model_revision(path)
    assert settings == {
        "task": "mcq",
        "model": f"Qwen2.5-7B-Instruct@{revision}",
        "dtype": "bfloat16",
        "device": "cuda",
        "template": f"chat@{text_hash(TEMPLATE)}",
        "max_length": 32768,
        "temperature": 0.1,
        "top_p": 1.0,
        "seed": 0,
        "max_new_tokens": 128,
        "mode": "generate",
        "instruction": text_hash(mcq.INSTRUCTIONS["ja"]),
        "language": "ja",
        "bos": "template",
        "parser": 2,
        "data": "0a1b2c3d",
        "version": __version__,
    }
    assert signature(settings) == (
        f"wikiorigin-eval|task:mcq|mode:generate|model:Qwen2.5-7B-Instruct@{revision}|dtype:bfloat16|"
        f"device:cuda|template:chat@{text_hash(TEMPLATE)}|instruction:{text_hash(mcq.INSTRUCTIONS['ja'])}|"
        f"lang:ja|temp:0.1|top_p:1.0|seed:0|max_new:128|bos:template|ctx:32768|parser:2|data:0a1b2c3d|"
        f"version:{__version__}"
    )


def test_signature_unknown_fields_none_and_separators():
    line = signature({"version": "9", "zeta": True, "task": "leakage", "alpha": "a|b", "model": None})
    assert line == "wikiorigin-eval|task:leakage|alpha:a/b|zeta:yes|version:9"
    with pytest.raises(TypeError, match="expected a settings dict, got list"):
        signature([("task", "mcq")])
    with pytest.raises(ValueError, match="run_settings: temperature is nan"):
        run_settings("freeform", None, sampling={"temperature": math.nan})


def test_model_revision_hashes_config_and_weight_sizes(tmp_path):
    path = _model_dir(tmp_path)
    expected = hashlib.sha1(
        (path / "config.json").read_bytes()
        + b"\nmodel-00001-of-00002.safetensors 64\nmodel-00002-of-00002.safetensors 8"
    ).hexdigest()[:8]
    assert model_revision(path) == expected
    (path / "model-00001-of-00002.safetensors").write_bytes(b"\0" * 65)  # other weights
    assert model_revision(path) != expected
    assert model_revision(path, commit_hash="0123456789abcdef") == "hf-01234567"


def test_model_revision_of_a_git_checkout(tmp_path):
    path = _model_dir(tmp_path)
    git = path / ".git"
    (git / "refs" / "heads").mkdir(parents=True)
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    (git / "packed-refs").write_text(
        "# pack-refs with: peeled fully-peeled sorted\n3f1c2d9e8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e refs/heads/main\n"
    )
    assert model_revision(path) == "git-3f1c2d9e"
    (git / "refs" / "heads" / "main").write_text("a1b2c3d4e5f60718293a4b5c6d7e8f9012345678\n")
    assert model_revision(path, commit_hash="ffff") == "git-a1b2c3d4"  # the checkout wins
    (git / "HEAD").write_text("0badc0ffee0ddf00d0badc0ffee0ddf00d0badc0\n")  # detached
    assert model_revision(path) == "git-0badc0ff"


def test_model_settings_of_endpoints_and_recordings(tmp_path):
    from wikiorigin.evaluators.models import EndpointModel
    from wikiorigin.llm import LLMClient, OpenAIBackend, RequestCache

    client = LLMClient(
        OpenAIBackend("gpt-4o-mini", base_url="HTTP://127.0.0.1:8000//v1/"), RequestCache(tmp_path / "c.sqlite")
    )
    endpoint = EndpointModel(client)
    described = endpoint.describe()
    assert (described["model"], described["base_url"]) == ("gpt-4o-mini@127.0.0.1:8000", "http://localhost:8000/v1")
    assert model_settings(endpoint) == {"model": "gpt-4o-mini@127.0.0.1:8000", "base_url": "http://localhost:8000/v1"}
    assert model_settings(endpoint, "generate")["template"] == "server"
    assert model_settings(endpoint, "loglikelihood") == {
        **model_settings(endpoint),
        "bos": "server",
        "split": "offsets",
    }  # no tokenizer: the server's special tokens, the cut at its text offsets
    assert "template" not in model_settings(endpoint, "token_logprobs")
    assert (
        client_name(LLMClient(OpenAIBackend("gpt-4o"), RequestCache(tmp_path / "d.sqlite"))) == "gpt-4o@api.openai.com"
    )
    assert (
        client_name(SimpleNamespace(backend=SimpleNamespace(name="transformers", model="/m/Llama-3-8B")))
        == "Llama-3-8B@transformers"
    )
    assert model_settings(None) == {}
    with pytest.raises(TypeError, match=r"_Described.describe\(\) gave list, not a dict"):
        model_settings(_Described("x", ["a"]))
    assert model_settings(_Described("plain", {})) == {"model": "plain"}  # the name, nothing more


def test_a_local_model_describes_itself(tiny_model, tiny_model_dir):
    from wikiorigin.evaluators.models import LocalModel

    revision = model_revision(tiny_model.path)
    template = f"chat@{text_hash(tiny_model.tokenizer.chat_template)}"
    assert tiny_model.describe() == {
        "model": f"tiny@{revision}",
        "dtype": "float32",
        "device": "cpu",
        "max_length": 1024,
        "generate": {"template": template, "bos": "template"},
        "loglikelihood": {"bos": "tokenizer", "split": "whole"},
        "token_logprobs": {"bos": "always"},
    }
    generate = model_settings(tiny_model, "generate")
    assert (generate["template"], generate["bos"], generate["max_length"]) == (template, "template", 1024)
    assert "template" not in model_settings(tiny_model, "loglikelihood")
    raw = LocalModel(tiny_model_dir, device="cpu", chat=False, add_bos=False).describe()
    assert (raw["generate"], raw["loglikelihood"]["bos"]) == ({"template": "raw", "bos": "tokenizer"}, "none")


def test_differences_leave_out_the_model():
    a = {
        "task": "mcq",
        "model": "a@1",
        "template": "chat@11111111",
        "max_length": 4096,
        "temperature": 0.1,
        "version": "0.1.0",
    }
    b = {**a, "model": "b@2", "template": "chat@22222222", "max_length": 8192}
    assert differences(a, b) == {}
    b.update(template="raw", temperature=0.7, seed=1)
    assert differences(a, b) == {"template": ("chat@11111111", "raw"), "temperature": (0.1, 0.7), "seed": (None, 1)}
    assert list(differences(a, {**b, "version": "0.2.0", "aaa": 1})) == [
        "template",
        "temperature",
        "seed",
        "version",
        "aaa",
    ]  # the signature's order, unknown last


def test_each_evaluator_records_its_own_fields(tmp_path):
    rows = [{"id": "Q1", "question": "Which being?", "answers": ["河童", "Kappa"], "extra": 1}]
    digest = data_hash(rows, ("id", "question", "question_source", "answers"))
    assert digest == data_hash(
        [{**rows[0], "extra": 2, "response": "x"}], ("id", "question", "question_source", "answers")
    )  # other columns: same
    model = _local(_model_dir(tmp_path))
    ff = freeform.freeform_settings(model, source_language=True, rows=[{**rows[0], "language": "ja"}], seed=3)
    assert (ff["task"], ff["temperature"], ff["max_new_tokens"], ff["seed"], ff["chrf"], ff["language"]) == (
        "freeform",
        0.0,
        32,
        3,
        "c6w0b2",
        "source",
    )
    ja = "{question}\n\n名前だけを答えてください。Answer with the name only."  # the prompt asked in Japanese
    assert (ff["instruction"], ff["data"], ff["parser"]) == (text_hash(ja), digest, 1)
    greek = freeform.freeform_settings(model, source_language=True, rows=rows, language="el")["instruction"]
    assert greek == text_hash(freeform.source_prompt("el")) != ff["instruction"]  # each language its own line
    with pytest.raises(ParameterError, match="'Q1' says no language .* give language="):
        freeform.freeform_settings(model, source_language=True, rows=rows)

    from wikiorigin.llm import LLMClient, OpenAIBackend

    recorded = judge.judge_settings(
        None, LLMClient(OpenAIBackend("gpt-4o", base_url="https://example.org/v1"), None), temperature=0.7
    )
    assert recorded["model"] == "recorded" and recorded["judge"] == "gpt-4o@example.org"
    assert "temperature" not in recorded and len(recorded["judge_prompt"]) == 8

    questions = [{"id": "y1", "question": "q", "choices": ["a", "b", "c", "d"], "answer_index": 2}]
    ll = mcq_settings(model, mode="loglikelihood", language="en", rows=questions)
    assert (ll["split"], ll["bos"], ll["instruction"]) == ("whole", "tokenizer", text_hash("\nAnswer:"))
    assert (
        mcq_settings(_local(tmp_path / model.name, add_bos=False), mode="loglikelihood", language="en")["bos"] == "none"
    )
    with pytest.raises(ParameterError, match="without a cue needs the language of its answer cue: give language="):
        mcq_settings(model, mode="loglikelihood")
    assert ll["data"] == data_hash(questions, ("id", "question", "choices", "answer_index"))
    assert "template" not in ll and "temperature" not in ll
    gen = mcq_settings(None, recorded="calm2-7b-chat", instruction="ignored")
    assert gen["model"] == "recorded:calm2-7b-chat" and gen["parser"] == getattr(mcq, "PARSER_VERSION", None)
    assert not {"instruction", "language", "temperature", "judge"} & set(gen)
    with pytest.raises(ValueError, match="mode is 'generate' or 'loglikelihood', not 'rank'"):
        mcq_settings(model, mode="rank")

    paraphraser = SimpleNamespace(backend=SimpleNamespace(model="gpt-4o", base_url=None))
    leak = leakage.leakage_settings(
        model, articles={"河童": "text"}, paraphrases={"河童": "other"}, paraphraser=paraphraser
    )
    assert (leak["windows"], leak["stride"], leak["bos"], leak["max_chars"], leak["min_k"]) == (
        "overlap",
        16384,
        "always",
        1500,
        0.2,
    )
    assert leak["paraphraser"] == f"gpt-4o@api.openai.com#{text_hash(leakage.PARAPHRASE_PROMPT)}"
    assert leak["data"] != leak["paraphrases"] and "template" not in leak
    assert "stride" not in leakage.leakage_settings(model, windows="disjoint")
    json.dumps(leak, allow_nan=False)


def test_recorded_answers_describe_their_file(tmp_path):
    from wikiorigin.evaluators.recorded import Recorded

    path = tmp_path / "responses-gpt4o-mini.json"
    path.write_text('[{"question": "q", "response": "a"}]', encoding="utf-8")
    assert Recorded(path).describe() == {
        "model": "recorded:gpt4o-mini",
        "file": "responses-gpt4o-mini.json",
        "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
    }
    assert Recorded(name="people").describe() == {"model": "recorded:people"}
    assert {"file", "sha256"} <= MODEL_FIELDS  # runs of other answers differ there by design


def test_a_models_fields_named_like_the_runs_are_kept_apart():
    model = _Described("mine", {"model": "mine-2", "version": "2.1", "temperature": 0.0, "task": "x"})
    settings = run_settings("freeform", model, sampling={"temperature": 0.5})
    assert (settings["model"], settings["model_version"], settings["model_temperature"]) == ("mine-2", "2.1", 0.0)
    assert (settings["task"], settings["version"], settings["temperature"]) == ("freeform", __version__, 0.5)
