"""The local model runner on a tiny random model: batched numbers equal one-by-one numbers and
hand computations; the batch halves on out-of-memory; no torch on import."""

import random
import subprocess
import sys

import pytest

from wikiorigin.errors import WikioriginError
from wikiorigin.evaluators.models import LocalModel

torch = pytest.importorskip("torch", reason="a local model needs the eval extra: pip install -e '.[eval]'")

# REQUESTS has contexts that end inside a token; test_the_whole_text_is_cut_at_the_context checks the warning
pytestmark = pytest.mark.filterwarnings("ignore:LocalModel.*end inside a token:UserWarning")

REQUESTS = [
    ("河童は川に", "住む"),
    ("天狗は", "山に住むと伝えられる。"),
    ("", "The kappa"),
    ("Question: which season? Answer:", " winter."),
    ("問題：雪女の季節は？ 回答：", "冬"),
    ("A long context " * 20, " end"),
]


def _by_hand(model, context_ids, continuation_ids):
    ids = torch.tensor([context_ids + continuation_ids])
    with torch.no_grad():
        logp = model.model(ids).logits[0].float().log_softmax(-1)
    n = len(context_ids)
    return sum(float(logp[n - 1 + j, t]) for j, t in enumerate(continuation_ids))


@pytest.mark.slow
def test_batched_loglikelihoods_equal_one_by_one(tiny_model):
    batched = tiny_model.loglikelihood(REQUESTS * 2, batch_size=5)
    single = [tiny_model.loglikelihood([r], batch_size=1)[0] for r in REQUESTS * 2]
    for (a, ga), (b, gb) in zip(batched, single):
        assert a == pytest.approx(b, abs=1e-4) and ga == gb


def test_options_sharing_a_context_are_scored_on_one_pass_over_it(tiny_model_dir):
    shared = [(f"問{q}：雪女が現れる季節は？\n回答：", c) for q in range(5) for c in ("春", "夏", "秋", "冬の夜")]
    together = LocalModel(tiny_model_dir, device="cpu", max_batch_size=8)
    apart = LocalModel(tiny_model_dir, device="cpu", max_batch_size=8, share_context=False)
    calls = []
    call = together.loaded.call  # the forward pass the model's parts share
    together.loaded.call = lambda **inputs: calls.append(inputs["input_ids"].shape) or call(**inputs)
    a, b = together.loglikelihood(shared + REQUESTS), apart.loglikelihood(shared + REQUESTS)
    assert [x for x, _ in a] == pytest.approx([x for x, _ in b], abs=1e-4)
    assert [g for _, g in a] == [g for _, g in b]
    assert calls[0][0] == 2 and 8 in [c[0] for c in calls]  # 2 contexts, then their 8 options


@pytest.mark.slow
def test_loglikelihood_equals_a_hand_computation(tiny_model):
    for context, continuation in REQUESTS:
        head, tail = tiny_model._split(context, continuation)
        expected = _by_hand(tiny_model, head, tail)
        assert tiny_model.loglikelihood([(context, continuation)])[0][0] == pytest.approx(expected, abs=1e-4)
    # an empty context is conditioned on the BOS (here EOS) token
    assert tiny_model._split("", "x")[0] == [tiny_model.tokenizer.eos_token_id]


def test_the_whole_text_is_cut_at_the_context(tiny_model):
    """A GPT-2-style tokenizer adds no BOS: the context is its own tokens (the default, as
    lm-eval's), with ``add_bos=True`` the EOS token before them; trailing spaces go with the
    continuation; a token spanning the cut goes with the continuation."""
    eos = tiny_model.tokenizer.eos_token_id
    head, tail = tiny_model._split("Question: which season? Answer: ", "winter.")
    assert head == tiny_model.encode("Question: which season? Answer:")
    assert head + tail == tiny_model.encode("Question: which season? Answer: winter.")
    assert tiny_model.encode_contexts(["Answer:"]) == [tiny_model.encode("Answer:")]
    always = LocalModel(tiny_model.path, device="cpu", add_bos=True)
    head, tail = tiny_model._split("Answer:", " winter.")
    assert always._split("Answer:", " winter.") == ([eos] + head, tail)
    assert always.encode_contexts(["<|end|>Answer:"]) == [tiny_model.encode("<|end|>Answer:")]  # no second one
    whole = tiny_model.encode("河童は川に住む")
    with pytest.warns(UserWarning, match="1 of 1 contexts end inside a token"):
        head, tail = tiny_model._split("河童は川に", "住む")
    assert head + tail == whole and len(head) < len(tiny_model.encode("河童は川に"))
    with pytest.raises(ValueError, match=r"request 0: the continuation '' has no tokens after the context ending '河"):
        tiny_model.loglikelihood([("河童", "")])


def test_greedy_flag(tiny_model):
    ids = tiny_model.encode("天狗は山に")
    with torch.no_grad():
        out = tiny_model.model.generate(
            torch.tensor([ids]), max_new_tokens=3, do_sample=False, pad_token_id=tiny_model.tokenizer.pad_token_id
        )
    greedy = out[0, len(ids) :].tolist()
    other = greedy[:2] + [(greedy[2] + 1) % 300]
    assert [g for _, g in tiny_model.loglikelihood_tokens([(ids, greedy), (ids, other)])] == [True, False]


def _window_text(model):
    rng = random.Random(1)
    text = "".join(rng.choice("河童天狗は山に住むと伝えられる。 kappa river") for _ in range(120))
    seq = [model._prefix()] + model.encode(text)
    assert len(seq) > 3 * 24
    return text, seq


def _given(model, seq, target, start):
    """log P(seq[target] | seq[start:target]) by one plain forward pass."""
    with torch.no_grad():
        logp = model.model(torch.tensor([seq[start:target]])).logits[0, -1].log_softmax(-1)
    return float(logp[seq[target]])


def test_token_logprobs_in_overlapping_windows(tiny_model_dir):
    model = LocalModel(tiny_model_dir, device="cpu", max_length=24, max_batch_size=4)
    text, seq = _window_text(model)
    logprobs = model.token_logprobs([text, "short"], windows="overlap", stride=8)[0]
    assert len(logprobs) == len(seq) - 1
    for target in (1, 5, 8, 9, 24, 25, 40, len(seq) - 1):
        # windows predict seq[1:9], seq[9:17], ...: each sees the 24 tokens before its end
        end = min(((target - 1) // 8) * 8 + 9, len(seq))
        assert logprobs[target - 1] == pytest.approx(_given(model, seq, target, max(0, end - 1 - 24)), abs=1e-4)


def test_token_logprobs_in_disjoint_windows_as_lmeval_lays_them_out(tiny_model_dir):
    """The windows of lm-eval's ``loglikelihood_rolling`` (its own functions, the prefix
    token first): each token given what its window holds before it."""
    utils = pytest.importorskip("lm_eval.utils", reason="needs lm-evaluation-harness (the test extra)")
    model = LocalModel(tiny_model_dir, device="cpu", max_length=24, max_batch_size=4)
    text, seq = _window_text(model)
    logprobs = model.token_logprobs([text])[0]
    expected = []
    for context, predicted in map(
        utils.make_disjoint_window,
        utils.get_rolling_token_windows(seq[1:], prefix_token=seq[0], max_seq_len=24, context_len=1),
    ):
        inputs = (context + predicted)[-25:][:-1]  # as HFLM._loglikelihood_tokens cuts them
        with torch.no_grad():
            logp = model.model(torch.tensor([inputs])).logits[0].log_softmax(-1)
        expected += [float(logp[len(inputs) - len(predicted) + j, t]) for j, t in enumerate(predicted)]
    assert logprobs == pytest.approx(expected, abs=1e-4)
    assert logprobs[24] == pytest.approx(_given(model, seq, 25, 24), abs=1e-4)  # a window's first: one token before


def test_window_options(tiny_model):
    with pytest.raises(ValueError, match="windows must be one of"):
        tiny_model.token_logprobs(["河童"], windows="sliding")
    with pytest.raises(ValueError, match="stride is for windows='overlap' only"):
        tiny_model.token_logprobs(["河童"], stride=8)
    with pytest.raises(ValueError, match="stride must be 1 to 1024, got 2000"):
        tiny_model.token_logprobs(["河童"], windows="overlap", stride=2000)


def test_short_texts_need_no_window(tiny_model):
    text = "河童は川に住むと言われることが多い。" * 3
    one = tiny_model.token_logprobs([text])[0]
    assert tiny_model.token_logprobs([text], windows="overlap", stride=4)[0] == pytest.approx(one, abs=1e-4)
    assert tiny_model.token_logprobs([text], windows="overlap")[0] == pytest.approx(one, abs=1e-4)


def _SmallMemory(path, **options):
    """A model that runs out of memory on batches of more than two rows, as a small GPU would."""
    model = LocalModel(path, **options)
    call = model.loaded.call

    def small(**inputs):
        if inputs["input_ids"].shape[0] > 2:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return call(**inputs)

    model.loaded.call = small
    return model


@pytest.mark.slow
def test_batch_halves_on_out_of_memory(tiny_model_dir, tiny_model):
    model = _SmallMemory(tiny_model_dir, device="cpu", max_batch_size=16)
    assert [x for x, _ in model.loglikelihood(REQUESTS)] == pytest.approx(
        [x for x, _ in tiny_model.loglikelihood(REQUESTS)], abs=1e-4
    )
    assert model.batch_size == 2
    model = _SmallMemory(tiny_model_dir, device="cpu", max_batch_size=16)  # options sharing a context
    shared = [("問：どれか。\n回答：", c) for c in ("河童", "天狗", "雪女", "ぬらりひょん")] * 2
    assert [x for x, _ in model.loglikelihood(shared)] == pytest.approx(
        [x for x, _ in tiny_model.loglikelihood(shared, batch_size=1)], abs=1e-4
    )
    assert model.share_context and model.batch_size <= 2


def test_other_errors_are_not_taken_for_out_of_memory(tiny_model_dir):
    def broken(**inputs):
        raise RuntimeError("shape mismatch")

    model = LocalModel(tiny_model_dir, device="cpu")
    model.loaded.call = broken
    with pytest.raises(RuntimeError, match="shape mismatch"):
        model.loglikelihood(REQUESTS[:2])


def test_out_of_memory_is_told_by_its_type():
    from wikiorigin.llm.hf import is_oom

    assert is_oom(torch.OutOfMemoryError("no message needed")) and is_oom(torch.cuda.OutOfMemoryError("x"))
    assert is_oom(RuntimeError("MPS backend out of memory (MPS allocated: 8 GB)"))  # a backend's RuntimeError
    assert not is_oom(RuntimeError("shape mismatch")) and not is_oom(ValueError("out of memory"))


def test_a_model_without_a_reusable_cache_scores_options_apart(tiny_model_dir, tiny_model):
    """The cache is checked once, up front; only that sends shared contexts to the plain path."""

    assert tiny_model.scorer.reusable_cache() is True  # GPT-2: key/value layers
    model = LocalModel(tiny_model_dir, device="cpu", max_batch_size=8)
    model.scorer.reusable_cache = lambda: False  # a model without a cache to reuse
    calls = []
    call = model.loaded.call
    model.loaded.call = lambda **inputs: calls.append("cache" in inputs) or call(**inputs)
    shared = [("問：どれか。\n回答：", c) for c in ("河童", "天狗", "雪女", "ぬらりひょん")]
    assert [x for x, _ in model.loglikelihood(shared)] == pytest.approx(
        [x for x, _ in tiny_model.loglikelihood(shared, batch_size=1)], abs=1e-4
    )
    assert not model.share_context and calls and not any(calls)


def test_a_bug_in_the_shared_path_is_not_taken_for_a_missing_cache(tiny_model_dir):
    def buggy(*args):
        raise TypeError("a bug")

    model = LocalModel(tiny_model_dir, device="cpu")
    model.scorer._score_shared = buggy
    with pytest.raises(TypeError, match="a bug"):
        model.loglikelihood([("問：", "甲"), ("問：", "乙")])


def test_batched_generation_equals_one_at_a_time(tiny_model_dir):
    model = LocalModel(tiny_model_dir, device="cpu", chat=False, max_batch_size=4)
    prompts = ["河童は", "天狗は山に住むと伝えられる。The kappa", "Answer with JSON only.", "冬"]
    batched = model.generate(prompts, max_new_tokens=6, temperature=0)
    single = [model.generate([p], max_new_tokens=6, temperature=0)[0] for p in prompts]
    assert batched == single and any(batched)


def test_chat_template_is_used_when_the_model_has_one(tiny_model, tiny_model_dir):
    assert tiny_model.format_prompt("質問") == "<|user|>質問<|end|><|assistant|>"
    assert LocalModel(tiny_model_dir, device="cpu", chat=False).format_prompt("質問") == "質問"


def test_prompt_too_long_and_missing_model(tiny_model, tmp_path):
    with pytest.raises(WikioriginError, match="exceed the model's 1024 positions"):
        tiny_model.generate(["河童" * 2000], max_new_tokens=8)
    with pytest.raises(WikioriginError, match="no such model directory"):
        LocalModel(tmp_path / "nothing")


def test_importing_the_evaluators_does_not_import_torch():
    code = (
        "import sys, wikiorigin.evaluators.models, wikiorigin.evaluators.mcq, wikiorigin.evaluators.freeform, "
        "wikiorigin.evaluators.judge, wikiorigin.evaluators.leakage, wikiorigin.evaluators.report, wikiorigin.cli; "
        "print('torch' in sys.modules, 'transformers' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def test_a_device_that_is_not_there(tiny_model_dir, tmp_path, capsys):
    """--device cuda on a machine without CUDA is one line and exit 2, before any work."""
    import torch

    from wikiorigin import cli
    from wikiorigin.errors import ParameterError
    from wikiorigin.evaluators.models import LocalModel

    with pytest.raises(ParameterError, match="^device='tpu': not a device"):
        LocalModel(tiny_model_dir, device="tpu")
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    questions = tmp_path / "q.json"
    questions.write_text('[{"question": "問", "choices": ["甲", "乙"], "answer": "甲", "language": "ja"}]')
    code = cli.main(
        [
            "eval",
            "mcq",
            "--questions",
            str(questions),
            "--model",
            str(tiny_model_dir),
            "--mode",
            "loglikelihood",
            "--device",
            "cuda",
            "--out",
            str(tmp_path / "o"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "error: --device cuda: CUDA is not available here" in err
