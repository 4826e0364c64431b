"""Parity with lm-evaluation-harness itself (``lm_eval[hf]``, the ``test`` extra): its ``hf``
model (``HFLM``) at its defaults against :class:`LocalModel` on a tiny random Llama whose
tokenizer adds ``<s>`` (a Llama-style ``LlamaTokenizerFast`` trained here, nothing
downloaded), on the released YokaiEval rows: the same tokens, the same log-likelihoods
(1e-4), the same ``acc`` and ``acc_norm`` through lm-eval's own task pipeline
(``simple_evaluate`` on a ``multiple_choice`` task), and where we differ on purpose (a token
spanning the cut, BOS in rolling log-likelihoods) what each does."""

import json
import lzma
import warnings

import pytest

pytest.importorskip("lm_eval", reason="the parity tests need lm-evaluation-harness: pip install 'wikiorigin[test]'")

from lm_eval.api.instance import Instance  # noqa: E402
from lm_eval.models.huggingface import HFLM  # noqa: E402

from tests.tiny_model import make_tiny_llama  # noqa: E402
from wikiorigin.evaluators import mcq  # noqa: E402
from wikiorigin.evaluators.models import LocalModel  # noqa: E402

ENGLISH = [
    ("Question: which season does the yuki-onna appear in? Answer: ", "winter."),
    ("The kappa is often said to live in", " rivers."),
    ("", "The kappa is often said to live in rivers."),
    ("Question: which season does the yuki-onna appear in?\nAnswer:", " winter"),
]


@pytest.fixture(scope="module")
def rows(data_dir, tmp_path_factory):
    path = tmp_path_factory.mktemp("yokaieval") / "YokaiEval-first40.json"
    path.write_bytes(lzma.open(data_dir.parent / "yokaieval" / "YokaiEval-first40.json.xz").read())
    return mcq.read_questions(path)


@pytest.fixture(scope="module")
def llama_dir(rows, tmp_path_factory):
    """Merges trained on the prompts with both answer cues, the options and two English
    sentences, so no token spans the cue and an option (the boundary test makes its own)."""
    texts = [mcq.question_prompt(r) + cue for r in rows for cue in mcq.ANSWER_CUES.values()]
    texts += [c for r in rows for c in r["choices"]] + [a + b for a, b in ENGLISH]
    return make_tiny_llama(tmp_path_factory.mktemp("llama") / "tiny-llama", texts * 3)


@pytest.fixture(scope="module")
def hflm(llama_dir):
    return HFLM(pretrained=str(llama_dir), device="cpu", batch_size=16)


@pytest.fixture(scope="module")
def ours(llama_dir):
    return LocalModel(llama_dir, device="cpu", max_batch_size=16)


def _requests(rows, language):
    sep = " " if language == "en" else ""
    return [(mcq.question_prompt(r) + mcq.ANSWER_CUES[language], sep + c) for r in rows for c in r["choices"]]


def _lmeval(hflm, requests):
    return hflm.loglikelihood([Instance("loglikelihood", {}, r, i) for i, r in enumerate(requests)], disable_tqdm=True)


def test_the_tokenizer_adds_bos_and_we_cut_where_lmeval_cuts(ours, hflm, rows):
    bos = ours.tokenizer.bos_token_id
    assert ours.tokenizer("河童")["input_ids"][0] == bos and hflm.tok_encode("河童")[0] == bos
    requests = _requests(rows, "ja") + _requests(rows, "en") + ENGLISH
    pairs = ours._split_many(requests)
    assert pairs == [
        ([bos], hflm.tok_encode(c, add_special_tokens=False)) if not a else hflm._encode_pair(a, c) for a, c in requests
    ]
    assert all(head[0] == bos for head, _ in pairs)
    # a space before the option is the option's: "▁空" after ":", not a lone "▁"
    head, tail = ours._split("回答:", " 空家")
    assert ours.tokenizer.convert_ids_to_tokens(tail)[0].startswith("▁")
    assert ours._split("回答: ", "空家") == (head, tail)


def _task(tmp_path, name, rows, language):
    """A ``multiple_choice`` task: context, options and answer column by column (JSON is YAML)."""
    data = tmp_path / f"{name}.jsonl"
    data.write_text(
        "".join(
            json.dumps(
                {
                    "prompt": mcq.question_prompt(r) + mcq.ANSWER_CUES[language],
                    "choices": r["choices"],
                    "answer": r["answer_index"],
                },
                ensure_ascii=False,
            )
            + "\n"
            for r in rows
        ),
        encoding="utf-8",
    )
    config = {
        "task": name,
        "dataset_path": "json",
        "dataset_kwargs": {"data_files": {"test": str(data)}},
        "test_split": "test",
        "output_type": "multiple_choice",
        "doc_to_text": "prompt",
        "doc_to_choice": "choices",
        "doc_to_target": "answer",
        "num_fewshot": 0,
        "target_delimiter": mcq.delimiter(language),
        "metric_list": [{"metric": m, "aggregation": "mean", "higher_is_better": True} for m in ("acc", "acc_norm")],
        "metadata": {"version": 1.0},
    }
    (tmp_path / f"{name}.yaml").write_text(json.dumps(config, ensure_ascii=False), encoding="utf-8")


@pytest.mark.slow
def test_mcq_items_equal_lmeval_simple_evaluate(ours, hflm, rows, tmp_path):
    """lm-eval builds the requests from the task itself; its per-option log-likelihoods and
    per-question acc and acc_norm are ours, in Japanese (no delimiter), English and Greek (a
    space) and Chinese (none), each with its own answer cue."""
    from lm_eval import simple_evaluate
    from lm_eval.tasks import TaskManager

    languages = ("ja", "en", "el", "zh")
    for language in languages:
        _task(tmp_path, f"yokai_parity_{language}", rows, language)
    result = simple_evaluate(
        model=hflm,
        tasks=[f"yokai_parity_{x}" for x in languages],
        log_samples=True,
        task_manager=TaskManager(include_path=str(tmp_path)),
    )
    assert (mcq.delimiter("el"), mcq.delimiter("zh"), mcq.answer_cue("el")) == (" ", "", "\nΑπάντηση:")
    for language in languages:
        name = f"yokai_parity_{language}"
        items = mcq.evaluate_loglikelihood(rows, ours, language=language)
        samples = sorted(result["samples"][name], key=lambda s: s["doc_id"])
        assert len(samples) == len(items) == 40
        for item, sample in zip(items, samples):
            assert item["loglikelihoods"] == pytest.approx([ll for ll, _ in sample["filtered_resps"]], abs=1e-4)
            assert (item["correct"], item["correct_norm"]) == (sample["acc"] == 1.0, sample["acc_norm"] == 1.0)
        summary = result["results"][name]
        assert summary["acc,none"] == pytest.approx(sum(i["correct"] for i in items) / 40)
        assert summary["acc_norm,none"] == pytest.approx(sum(i["correct_norm"] for i in items) / 40)


@pytest.mark.slow
def test_contexts_with_bos_still_run_once_for_their_options(llama_dir, rows):
    """The speed-ups stay on with ``<s>``: each question's context in one pass, its options
    on its key/value cache, the output layer at their real tokens only."""
    model = LocalModel(llama_dir, device="cpu", max_batch_size=16)
    calls = []
    call = model.loaded.call
    model.loaded.call = lambda **inputs: (
        calls.append((tuple(inputs["input_ids"].shape), "cache" in inputs, bool(inputs.get("output_hidden_states"))))
        or call(**inputs)
    )
    mcq.evaluate_loglikelihood(rows[:4], model)
    assert model.share_context and model.scorer.output_layer() is not None
    contexts = [c for c in calls if not c[1] and c[0][0] == 4]
    options = [c for c in calls if c[1]]
    assert len(contexts) == 1 and len(options) == 1 and options[0][0][0] == 16 and options[0][2]


@pytest.mark.slow
def test_acc_norm_divides_by_the_option_without_the_delimiter(ours, rows):
    items = mcq.evaluate_loglikelihood(rows, ours, language="en")
    for row, item in zip(rows, items):
        by_chars = [ll / len(c) for ll, c in zip(item["loglikelihoods"], row["choices"])]
        by_bytes = [ll / len(c.encode()) for ll, c in zip(item["loglikelihoods"], row["choices"])]
        assert item["pred_norm"] == max(range(4), key=by_chars.__getitem__)
        assert item["pred_bytes"] == max(range(4), key=by_bytes.__getitem__)
    # the old rule (the delimiter counted) picks otherwise on some of these questions
    with_space = [
        max(range(4), key=lambda k: i["loglikelihoods"][k] / (1 + len(r["choices"][k]))) for r, i in zip(rows, items)
    ]
    assert with_space != [i["pred_norm"] for i in items]


@pytest.mark.slow
def test_english_requests_and_an_empty_context(ours, hflm, llama_dir):
    """Trailing spaces, a space before the option, an empty context: lm-eval's numbers, one
    request at a time. In one call, lm-eval 0.4's logits cache (``logits_cache=True``, its
    default) scores ``("The kappa ... live in", " rivers.")`` wrongly: its tokens are those of
    ``("", "The kappa ... rivers.")`` but for the cut, the two share one forward pass, and the
    shorter continuation is read from the first rows of the longer one's logits (``gather``
    without the trailing slice that its greedy check gets)."""
    one_by_one = [_lmeval(hflm, [r])[0] for r in ENGLISH]
    got = ours.loglikelihood(ENGLISH)
    assert [x for x, _ in got] == pytest.approx([x for x, _ in one_by_one], abs=1e-4)
    assert [g for _, g in got] == [g for _, g in one_by_one]
    cached = _lmeval(hflm, ENGLISH)
    assert abs(cached[1][0] - one_by_one[1][0]) > 1e-2
    uncached = HFLM(pretrained=str(llama_dir), device="cpu", batch_size=16, logits_cache=False)
    assert [x for x, _ in _lmeval(uncached, ENGLISH)] == pytest.approx([x for x, _ in got], abs=1e-4)


@pytest.mark.slow
def test_bos_options(llama_dir, ours, rows):
    """``add_bos=False`` is lm-eval's ``add_bos_token=False``; ``True`` changes nothing for a
    tokenizer that adds ``<s>`` itself."""
    requests = _requests(rows[:10], "ja")
    ref = _lmeval(HFLM(pretrained=str(llama_dir), device="cpu", batch_size=16, add_bos_token=False), requests)
    without = LocalModel(llama_dir, device="cpu", add_bos=False)
    assert [x for x, _ in without.loglikelihood(requests)] == pytest.approx([x for x, _ in ref], abs=1e-4)
    assert without._split_many(requests)[0][0][0] != ours.tokenizer.bos_token_id
    always = LocalModel(llama_dir, device="cpu", add_bos=True)
    assert always._split_many(requests) == ours._split_many(requests)
    with pytest.raises(ValueError, match="add_bos must be None, True or False, got 'yes'"):
        LocalModel(llama_dir, device="cpu", add_bos="yes")


def _spanning(tokenizer, text):
    """The first cuts of ``text`` where a token spans the cut: one where the whole has more
    tokens than the context, one where it has no more (lm-eval's continuation is empty)."""
    found = {}
    for i in range(1, len(text)):
        for j in range(i + 1, min(len(text), i + 4) + 1):
            head, whole = tokenizer(text[:i])["input_ids"], tokenizer(text[:j])["input_ids"]
            if whole[: len(head)] != head:
                found.setdefault("longer" if len(whole) > len(head) else "empty", (text[:i], text[i:j]))
        if len(found) == 2:
            return found
    raise AssertionError(f"no token spans a cut of {text!r}")


def test_a_token_spanning_the_cut(ours, hflm, rows):
    """lm-eval cuts the whole text at the context's token count all the same: its continuation
    then lacks characters, or is empty and it stops. We cut before the spanning token."""
    cuts = _spanning(ours.tokenizer, rows[0]["question"])
    context, continuation = cuts["longer"]
    _, lm_tail = hflm._encode_pair(context, continuation)
    assert ours.tokenizer.decode(lm_tail) != continuation  # lm-eval scores a shorter text
    before = ours.cut_inside_token
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        head, tail = ours._split(context, continuation)
    assert ours.cut_inside_token == before + 1 and "1 of 1 contexts end inside a token" in str(caught[0].message)
    whole = ours.tokenizer(context + continuation)["input_ids"]
    assert head + tail == whole and len(head) < len(hflm.tok_encode(context))
    assert ours.tokenizer.decode(tail).endswith(continuation)  # every character scored
    expected = hflm._loglikelihood_tokens([((context, continuation), head, tail)], disable_tqdm=True)[0][0]
    with pytest.warns(UserWarning, match="scored from the token boundary before it"):
        assert ours.loglikelihood([(context, continuation)])[0][0] == pytest.approx(expected, abs=1e-4)

    context, continuation = cuts["empty"]
    assert hflm._encode_pair(context, continuation)[1] == []
    with pytest.raises(AssertionError):
        _lmeval(hflm, [(context, continuation)])
    with pytest.warns(UserWarning, match="1 of 1 contexts end inside a token"):
        head, tail = ours._split(context, continuation)
    assert head + tail == ours.tokenizer(context + continuation)["input_ids"] and tail


def test_rolling_loglikelihood_in_disjoint_windows(llama_dir, ours, rows):
    """Sums of ``token_logprobs(windows="disjoint")`` under a 16-token context are lm-eval's
    ``loglikelihood_rolling`` without its BOS; at its defaults lm-eval adds ``<s>`` to the text
    as well as before it, so it scores ``<s>`` given ``<s>`` and everything after two."""
    texts = [mcq.question_prompt(r) for r in rows[:6]]
    model = LocalModel(llama_dir, device="cpu", max_length=16, max_batch_size=8)
    lengths = [len(model.encode(t)) for t in texts]
    assert min(lengths) > 16 and max(lengths) > 3 * 16  # two windows and more
    sums = [sum(x) for x in model.token_logprobs(texts)]
    requests = [Instance("loglikelihood_rolling", {}, (t,), i) for i, t in enumerate(texts)]
    plain = HFLM(pretrained=str(llama_dir), device="cpu", batch_size=8, max_length=16, add_bos_token=False)
    assert sums == pytest.approx(plain.loglikelihood_rolling(requests, disable_tqdm=True), abs=1e-3)
    default = HFLM(pretrained=str(llama_dir), device="cpu", batch_size=8, max_length=16)
    assert default.tok_encode(texts[0])[0] == default.prefix_token_id == ours.tokenizer.bos_token_id
    doubled = default.loglikelihood_rolling(requests, disable_tqdm=True)
    assert all(abs(a - b) > 1e-2 for a, b in zip(sums, doubled))
    # overlapping windows see more context: other numbers, the same tokens
    overlap = model.token_logprobs(texts, windows="overlap")
    assert [len(x) for x in overlap] == [len(model.encode(t)) for t in texts]
