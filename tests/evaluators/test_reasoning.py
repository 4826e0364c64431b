"""Reasoning models in generation mode: the answer is what follows the trace;
a trace that never closes, or a response stopped by the token limit, is no answer, counted as
``truncated`` (the failure of lm-evaluation-harness's issue 3382: a cut trace read for the option
it names). Through the loopback server (traces inline, or apart as ``reasoning_content``), in
recorded responses, and from a tiny local model (cut by ``max_new_tokens``, the trace's tokens
kept, the template's ``enable_thinking`` switched and signed)."""

import json
import shutil

import pytest

from tests.evaluators.test_mcq_eval import _mcq_parquet
from tests.openai_server import ChatServer
from wikiorigin import cli
from wikiorigin.errors import WikioriginError
from wikiorigin.evaluators import mcq
from wikiorigin.evaluators.answers import read_choice
from wikiorigin.evaluators.models import EndpointModel, LocalModel
from wikiorigin.llm import LLMClient, OpenAIBackend, RequestCache
from wikiorigin.schemas import MCQ_REGIONS, MCQ_TYPES


def _asked(messages):
    """The question number and options of a prompt (or None for the judge's prompt)."""
    prompt = messages[-1]["content"]
    if "task: read-answer" in messages[0]["content"]:
        return None, None
    options = [line[2:] for line in prompt.splitlines() if line.startswith("- ")]
    return int(prompt.split("：")[0].removeprefix("問")), options


def _thinking(messages):
    """Questions 0-2: a long trace that names the right option (the server cuts it in half: it
    never closes); 3-7: a trace that doubts another option, then the right answer; 8-9: a
    wrong answer. The judge says every answer it is shown is right."""
    i, options = _asked(messages)
    if i is None:
        return json.dumps({"verdict": True})
    right, other = options[i % 4], options[(i + 1) % 4]
    if i < 3:
        doubt = "念のため他の選択肢も確かめる。" * 20
        return f"<think>正解は「{right}」だろう。{doubt}</think>\n回答：{right}"
    if i < 8:
        return f"<think>「{other}」かもしれない。いや、違う。</think>\n回答：{right}"
    return f"<think>考える。</think>\n回答：{other}"


def test_truncated_traces_are_no_answer_and_counted(tmp_path):
    """The issue's case: three traces cut while naming the right option, five right answers,
    two wrong: accuracy 5 of 10, 5 of 7 over the read answers (not 0.8), 3 truncated; the
    judge is not shown them either."""
    rows = mcq.read_questions(_mcq_parquet(tmp_path / "mcq.parquet", 10))
    with ChatServer(_thinking) as server:
        server.faults = ["length"] * 3  # the first three calls: questions 0-2, asked one at a time
        model = EndpointModel(
            LLMClient(OpenAIBackend("thinker", base_url=server.url), RequestCache(tmp_path / "c.sqlite"), concurrency=1)
        )
        judge = LLMClient(OpenAIBackend("judge", base_url=server.url), RequestCache(tmp_path / "c.sqlite"))
        items = mcq.evaluate_generate(rows, model, judge=judge)
        cut = [_asked(c["messages"])[0] for c in server.calls[:3]]
        judged = [c for c in server.calls if c["model"] == "judge"]
    assert cut == [0, 1, 2] and not judged
    assert [i["read_as"] for i in items[:3]] == ["truncated"] * 3
    assert all(i["pred"] is None and i["correct"] is False and i["finish_reason"] == "length" for i in items[:3])
    assert "正解は「選択肢0-0」" in items[0]["response"] and "</think>" not in items[0]["response"]
    assert [i["pred"] for i in items[3:]] == [3, 0, 1, 2, 3, 1, 2] and items[3]["finish_reason"] == "stop"
    summary = mcq.summarize(items)
    assert summary["truncated"] == 3 and summary["read_as"]["truncated"] == 3 and summary["judged"] == 0
    assert summary["accuracy"] == 5 / 10 and summary["accuracy_read"] == 5 / 7 and summary["coverage"] == 7 / 10
    mcq.write_mcq_results(tmp_path / "run", items, summary)
    report = (tmp_path / "run" / "report.md").read_text()
    assert "3 responses were cut by the token limit or left their reasoning unclosed" in report


def _apart(messages):
    """A server that returns the trace apart (``reasoning_content``): the trace names the right
    option, the answer (``content``) another for odd questions."""
    i, options = _asked(messages)
    trace = f"「{options[i % 4]}」が正しいはずだ。" + "確かめる。" * 10
    return {"reasoning_content": trace, "content": f"回答：{options[(i + i % 2) % 4]}"}


def test_reasoning_content_is_not_the_answer(tmp_path):
    """vLLM's reasoning parsers and DeepSeek's API: the answer is ``content``, whatever the trace
    says; a response cut inside the trace has no content, and is truncated, not empty."""
    rows = mcq.read_questions(_mcq_parquet(tmp_path / "mcq.parquet", 5))
    with ChatServer(_apart) as server:
        server.faults = ["length"]  # question 0, cut inside its trace
        items = mcq.evaluate_generate(
            rows,
            EndpointModel(
                LLMClient(
                    OpenAIBackend("apart", base_url=server.url), RequestCache(tmp_path / "c.sqlite"), concurrency=1
                )
            ),
        )
    assert items[0]["response"] == "" and items[0]["read_as"] == "truncated"
    assert [i["pred"] for i in items[1:]] == [2, 2, 0, 0]  # odd questions answered with the next option
    summary = mcq.summarize(items)
    assert summary["truncated"] == 1 and summary["accuracy"] == 2 / 5 and summary["coverage"] == 4 / 5


CHOICES = ["河童", "天狗", "狐", "狸"]
# (closed: the trace doubts 天狗, the answer is 河童; unclosed: a trace naming 河童 that never ends)
MARKERS = {
    "think": ("<think>天狗かもしれない。</think>\n\n河童", "<think>正解は河童だろう。しかし"),
    "thinking": ("<thinking>Maybe 天狗?</thinking>河童", "<thinking>The answer is 河童, unless"),
    "reasoning": ("<reasoning>天狗か。</reasoning>\n答え：河童", "<reasoning>答えは「河童」。念のため"),
    "kimi": ("◁think▷天狗ではない。◁/think▷河童", "◁think▷河童が正解。ただし"),
    "magistral": ("[THINK]天狗?[/THINK]河童", "[THINK]河童です。待って"),
    "harmony": (
        "<|channel|>analysis<|message|>天狗?<|end|><|start|>assistant<|channel|>final<|message|>河童<|return|>",
        "<|channel|>analysis<|message|>The answer is 河童. Check",
    ),
    "harmony decoded bare": ("analysisThe user asks. 天狗? No.assistantfinal河童", "analysisThe answer is 河童<think>"),
    "opened by the template": ("天狗かと思ったが違う。\n</think>\n\n河童", "<think>\n正解は「河童」"),
    "reopened": ("<think>天狗?</think><think>いや</think>河童", "<think>天狗?</think>河童<think>いや、"),
}


@pytest.mark.parametrize("marker", MARKERS)
def test_recorded_traces(marker):
    """Each trace style: closed, the answer after it is read (not the option the trace
    doubts); never closed, no answer, whatever option it names."""
    closed, unclosed = MARKERS[marker]
    assert read_choice(closed, CHOICES).index == 0
    assert read_choice(unclosed, CHOICES).how == "truncated" and read_choice(unclosed, CHOICES).index is None
    rows = [
        {
            "id": f"r{k}",
            "title": None,
            "type": MCQ_TYPES[0],
            "region": MCQ_REGIONS[0],
            "question": "問",
            "choices": CHOICES,
            "answer_index": 0,
            "response": text,
        }
        for k, text in enumerate((closed, unclosed))
    ]
    summary = mcq.summarize(mcq.evaluate_generate(rows, recorded="traces"))
    assert (summary["accuracy"], summary["truncated"], summary["coverage"]) == (0.5, 1, 0.5)


# -- local models ------------------------------------------------------------------------------

QWEN3_STYLE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}<|end|>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>"
    "{% if enable_thinking is defined and enable_thinking is false %}<think>\n\n</think>\n\n{% endif %}{% endif %}"
)
OPENS_THE_TRACE = (  # QwQ, DeepSeek-R1: the template starts the model's trace
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}<|end|>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|><think>\n{% endif %}"
)


def _thinking_model(source, directory, template):
    """The tiny model with ``<think>`` and ``</think>`` as special tokens and another chat template."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    shutil.copytree(source, directory)
    tokenizer = AutoTokenizer.from_pretrained(directory)
    tokenizer.add_special_tokens({"additional_special_tokens": ["<think>", "</think>"]})
    tokenizer.chat_template = template
    tokenizer.save_pretrained(directory)
    model = AutoModelForCausalLM.from_pretrained(directory)
    model.resize_token_embeddings(len(tokenizer))
    model.save_pretrained(directory)
    return directory


def _always_stops(model: LocalModel) -> LocalModel:
    """``model`` made to write its end-of-sequence token first, whatever the prompt (the last
    layer norm gives one vector, which the EOS embedding matches)."""
    import torch

    gpt = model.model.transformer
    with torch.no_grad():
        direction = torch.randn(gpt.ln_f.bias.shape[0])
        gpt.ln_f.weight.zero_()
        gpt.ln_f.bias.copy_(direction)
        gpt.wte.weight[model.tokenizer.eos_token_id] = 50 * direction / direction.dot(direction)
    return model


def test_a_local_response_cut_by_max_new_tokens_is_truncated(tiny_model_dir, tmp_path):
    model = LocalModel(tiny_model_dir, device="cpu")
    prompts = [mcq.question_prompt(r) for r in mcq.read_questions(_mcq_parquet(tmp_path / "mcq.parquet", 4))]
    responses = model.generate(prompts, max_new_tokens=3, temperature=0)
    for prompt, response in zip(prompts, responses):  # stopped iff the model wrote EOS in its 3 tokens
        ids = model.tokenizer(model.format_prompt(prompt), add_special_tokens=False, return_tensors="pt")["input_ids"]
        new = model.model.generate(ids, max_new_tokens=3, do_sample=False, pad_token_id=model.tokenizer.pad_token_id)
        wrote_eos = model.tokenizer.eos_token_id in new[0, ids.shape[1] :].tolist()
        assert response.finish_reason == ("stop" if wrote_eos else "length") and response.truncated != wrote_eos
    assert any(r.truncated for r in responses)  # a random model rarely stops within 3 tokens
    stopping = _always_stops(LocalModel(tiny_model_dir, device="cpu"))
    assert [(r, r.finish_reason) for r in stopping.generate(prompts[:2], max_new_tokens=3)] == [("", "stop")] * 2
    rows = mcq.read_questions(tmp_path / "mcq.parquet")
    items = mcq.evaluate_generate(rows, model, max_new_tokens=3, temperature=0)
    assert [i["read_as"] == "truncated" for i in items] == [r.truncated for r in responses]
    assert mcq.summarize(items)["truncated"] == sum(r.truncated for r in responses)


def test_a_trace_the_template_opens_is_the_models_and_its_tokens_are_kept(tiny_model_dir, tmp_path):
    """A template that ends the prompt with ``<think>\\n``: the response begins with it, and a
    response that stops without closing the trace is no answer. Special trace tokens survive
    decoding; other special tokens do not."""
    path = _thinking_model(tiny_model_dir, tmp_path / "qwq", OPENS_THE_TRACE)
    model = _always_stops(LocalModel(path, device="cpu"))
    assert model.format_prompt("問").endswith("<|assistant|><think>\n")
    (response,) = model.generate(["問0：どれが正しいか。\n- 河童\n- 天狗"], max_new_tokens=3)
    assert (response, response.finish_reason) == ("<think>\n", "stop")
    assert read_choice(response, ["河童", "天狗"]).how == "truncated"
    ids = model.tokenizer("<think>天狗</think>河童<|end|><|pad|>", add_special_tokens=False)["input_ids"]
    assert model.generator._decode(ids) == "<think>天狗</think>河童"


def test_the_thinking_switch(tiny_model_dir, tmp_path, capsys):
    """``--thinking on|off`` sets a Qwen3-style template's ``enable_thinking`` and goes into the
    signature; a template without the switch, an endpoint or log-likelihood mode refuse it."""
    path = _thinking_model(tiny_model_dir, tmp_path / "qwen3ish", QWEN3_STYLE)
    model = LocalModel(path, device="cpu", thinking="off")
    assert model.format_prompt("問").endswith("<|assistant|><think>\n\n</think>\n\n") and model.thinking_mode == "off"
    model.set_thinking("on")
    assert model.format_prompt("問").endswith("<|assistant|>")
    questions = str(_mcq_parquet(tmp_path / "mcq.parquet", 2))
    run = ["eval", "mcq", "--questions", questions, "--device", "cpu", "--max-new-tokens", "4"]
    assert cli.main(run + ["--model", str(path), "--thinking", "off", "--out", str(tmp_path / "off")]) == 0
    summary = json.loads((tmp_path / "off" / "summary.json").read_text())
    assert summary["settings"]["thinking"] == "off" and "|think:off|" in summary["signature"]
    assert cli.main(run + ["--model", str(path), "--out", str(tmp_path / "default")]) == 0
    assert "|think:template-default|" in json.loads((tmp_path / "default" / "summary.json").read_text())["signature"]
    assert cli.main(run + ["--model", str(tiny_model_dir), "--out", str(tmp_path / "plain")]) == 0
    assert "|think:" not in json.loads((tmp_path / "plain" / "summary.json").read_text())["signature"]
    capsys.readouterr()
    for argv, message in [
        (["--model", str(tiny_model_dir), "--thinking", "on"], "needs a chat template that takes enable_thinking"),
        (
            ["--model", "m", "--endpoint", "http://127.0.0.1:9", "--thinking", "off"],
            "for an endpoint give --reasoning-effort",
        ),
        (["--model", str(path), "--mode", "loglikelihood", "--thinking", "on"], "--thinking is for generation mode"),
    ]:
        assert cli.main(run + argv + ["--out", str(tmp_path / "refused")]) == 2
        last = capsys.readouterr().err.strip().splitlines()[-1]  # after a loaded model's progress bar
        assert last.startswith("wikiorigin: error: ") and message in last
    with pytest.raises(WikioriginError, match="this one has no such switch"):
        LocalModel(tiny_model_dir, device="cpu", thinking="off")
    with pytest.raises(ValueError, match="thinking must be one of template-default, on, off, not 'yes'"):
        LocalModel(tiny_model_dir, device="cpu", thinking="yes")
