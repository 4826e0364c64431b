"""`export lm-eval` with tokenizers that merge the answer cue with an option.

A Qwen2-style pretokenizer keeps a punctuation mark with the letters after it (``：河童`` is one
piece), and its BPE may hold a token ``：河``: lm-evaluation-harness, cutting ``回答：河童`` at
the context's token count, scores ``童`` alone; an option swallowed whole by ``：狐`` it scores
at log-likelihood 0 (certain: it wins every question, lm-eval 0.4.13 with its logits cache) or,
without the cache, stops on ``assert len(continuation_enc) > 0``. Given the tokenizer, the export
ends the cue with a space; the harness then runs and gives the acc and acc_norm of `wikiorigin
eval mcq --mode loglikelihood --answer-cue '\\n回答： '` with the same tiny model. The tokenizers
are made here, with explicit merges: nothing is downloaded."""

import json
import warnings

import pyarrow.parquet as pq
import pytest

from wikiorigin import cli
from wikiorigin.errors import WikioriginError
from wikiorigin.evaluators import mcq
from wikiorigin.export_lmeval import export_lmeval
from wikiorigin.testing import mcq_row, write_mcq

lm_eval = pytest.importorskip("lm_eval", reason="needs lm-evaluation-harness (pip install 'lm_eval[hf]')")
yaml = pytest.importorskip("yaml", reason="PyYAML comes with lm-evaluation-harness")

# Qwen2's pretokenizer: one character that is no letter, digit or line break may open a run of letters
QWEN2_SPLIT = r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
OPTIONS = ["河童", "天狗", "狐", "狸"]
QUESTIONS = [  # question, the options in their order, index of the answer
    ("頭に皿を載せ、川に住むとされる妖怪はどれか。", OPTIONS, 0),
    ("山に住み、鼻が高く羽団扇を持つとされる妖怪はどれか。", OPTIONS[1:] + OPTIONS[:1], 0),
    ("稲荷神の使いとされる動物はどれか。", OPTIONS[2:] + OPTIONS[:2], 0),
    ("腹鼓を打つとされる動物はどれか。", OPTIONS[::-1], 0),
    ("きゅうりを好むとされる妖怪はどれか。", OPTIONS[::-1], 3),
    ("九本の尾を持つとされる妖怪の姿はどれか。", OPTIONS, 2),
]
SPECIAL = ["<|end|>", "<|pad|>", "<unk>"]


@pytest.fixture(scope="module", autouse=True)
def datasets_cache(tmp_path_factory):
    """The datasets the harness builds from our JSONL go to a temporary cache."""
    import datasets

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(datasets.config, "HF_DATASETS_CACHE", str(tmp_path_factory.mktemp("hf-datasets")))
        yield


def _questions(path):
    rows = [
        mcq_row(i, q, c, k, type=mcq.MCQ_TYPES[0], region="日本全国", title=c[k])
        for i, (q, c, k) in enumerate(QUESTIONS)
    ]
    write_mcq(path, rows)
    return path


def _tokenizer(merges: list[tuple[str, str]], split: bool = True):
    """A character-level BPE over every character of the prompts, with ``merges`` and no other,
    behind Qwen2's pretokenizer (``split``) or none."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers

    texts = [
        mcq.question_prompt({"question": q, "choices": c}) + mcq.answer_cue("ja") + " \n" + "".join(c)
        for q, c, _ in QUESTIONS
    ]
    chars = sorted(set("".join(texts)))
    vocab = {t: i for i, t in enumerate(SPECIAL + chars + [a + b for a, b in merges])}
    tok = Tokenizer(models.BPE(vocab, merges, unk_token="<unk>"))
    if split:
        tok.pre_tokenizer = pre_tokenizers.Split(Regex(QWEN2_SPLIT), behavior="isolated")
    tok.decoder = decoders.Fuse()
    tok.add_special_tokens(SPECIAL)
    return tok


def _model(directory, merges):
    """A random GPT-2 with :func:`_tokenizer`'s tokenizer, saved as lm-eval and wikiorigin load one."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=_tokenizer(merges), eos_token="<|end|>", pad_token="<|pad|>", unk_token="<unk>"
    )
    tokenizer.save_pretrained(directory)
    torch.manual_seed(0)
    config = GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=512,
        n_embd=32,
        n_layer=2,
        n_head=2,
        bos_token_id=tokenizer.eos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    GPT2LMHeadModel(config).save_pretrained(directory)
    return directory


@pytest.fixture(scope="module")
def merging_model(tmp_path_factory):
    """Tokens ``：河`` (the cue's colon and the first character of 河童) and ``：狐`` (all of 狐)."""
    return _model(tmp_path_factory.mktemp("merging") / "merging", [("：", "河"), ("：", "狐")])


def _harness(export, model, options=""):
    from lm_eval.tasks import TaskManager

    tasks = TaskManager(include_path=str(export.yaml.parent), include_defaults=False)
    result = lm_eval.simple_evaluate(
        model="hf",
        model_args=f"pretrained={model}{options}",
        tasks=[export.task],
        task_manager=tasks,
        batch_size=8,
        device="cpu",
    )
    return result["results"][export.task], result["samples"][export.task]


@pytest.mark.slow
def test_a_tokenizer_that_merges_the_cue_with_options_gets_a_cue_that_keeps_them_apart(merging_model, tmp_path):
    from transformers import AutoTokenizer

    questions = _questions(tmp_path / "mcq.parquet")
    tokenizer = AutoTokenizer.from_pretrained(merging_model)
    assert tokenizer.tokenize("回答：河童")[-2:] == ["：河", "童"] and tokenizer.tokenize("回答：")[-1] == "："
    # as exported by default, the harness takes 狐 (swallowed by ：狐) for certain, or stops on it
    plain = export_lmeval(questions, tmp_path / "plain")
    assert plain.cue == "\n回答：" and plain.merged == 0
    broken, samples = _harness(plain, merging_model)
    assert all(s["filtered_resps"][s["doc"]["choices"].index("狐")][0] == 0.0 for s in samples)
    assert broken["acc,none"] == sum(c[k] == "狐" for _, c, k in QUESTIONS) / len(QUESTIONS)
    with pytest.raises(AssertionError):
        _harness(plain, merging_model, ",logits_cache=False")
    # given the tokenizer, the export says so and ends the cue with a space
    checked = export_lmeval(questions, tmp_path / "checked", tokenizer=merging_model)
    assert checked.cue == "\n回答： " and checked.merged == 2 * len(QUESTIONS)  # 河童 and 狐 in every question
    docs = [json.loads(line) for line in checked.data.read_text().splitlines()]
    assert all(d["prompt"].endswith("\n- " + d["choices"][-1] + "\n回答： ") for d in docs)
    readme = checked.readme.read_text()
    assert f"merges the language's answer cue with the first characters of {checked.merged} options" in readme
    assert "--answer-cue '\\n回答： '" in readme
    config = yaml.safe_load(checked.yaml.read_text())
    assert config["metadata"]["answer_cue"] == "\n回答： " and config["metadata"]["merged_options"] == 12
    # the harness runs, and gives our acc and acc_norm with the cue the README names
    theirs, samples = _harness(checked, merging_model)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert (
            cli.main(
                [
                    "eval",
                    "mcq",
                    "--mode",
                    "loglikelihood",
                    "--questions",
                    str(questions),
                    "--model",
                    str(merging_model),
                    "--device",
                    "cpu",
                    "--answer-cue",
                    "\\n回答： ",
                    "--out",
                    str(tmp_path / "ours"),
                ]
            )
            == 0
        )
    assert not [w for w in caught if "inside a token" in str(w.message)]  # no token spans the cut
    ours = json.loads((tmp_path / "ours" / "summary.json").read_text())
    assert ours["n"] == theirs["sample_len"] == len(QUESTIONS)
    assert ours["acc"] == pytest.approx(theirs["acc,none"], abs=1e-9)
    assert ours["acc_norm"] == pytest.approx(theirs["acc_norm,none"], abs=1e-9)
    items = {i["id"]: i for i in pq.read_table(tmp_path / "ours" / "items.parquet").to_pylist()}
    for sample in samples:
        assert items[sample["doc"]["id"]]["loglikelihoods"] == pytest.approx(
            [ll for ll, _ in sample["filtered_resps"]], abs=1e-4
        )


def test_a_tokenizer_that_keeps_options_apart_changes_nothing(tiny_model_dir, tmp_path):
    """GPT-2's pretokenizer splits ``：`` from the letters after it: the export is the default one."""
    questions = _questions(tmp_path / "mcq.parquet")
    plain = export_lmeval(questions, tmp_path / "plain")
    checked = export_lmeval(questions, tmp_path / "checked", tokenizer=tiny_model_dir)
    assert (checked.cue, checked.merged) == ("\n回答：", 0)
    assert checked.data.read_bytes() == plain.data.read_bytes()
    assert "every option keeps its own tokens" in checked.readme.read_text()
    assert "export again with `--tokenizer MODEL`" in plain.readme.read_text()


def test_a_tokenizer_that_merges_across_every_cue_is_an_error(tmp_path):
    """No pretokenizer, and merges across the space and the new line too: no cue helps."""
    questions = _questions(tmp_path / "mcq.parquet")
    merges = [("：", "河"), ("：", " "), ("： ", "河"), ("：", "\n"), ("：\n", "河")]
    path = tmp_path / "tokenizer.json"
    _tokenizer(merges, split=False).save(str(path))
    with pytest.raises(
        WikioriginError,
        match=r"the tokenizer merges the answer cue '\\n回答：' with the first "
        r"characters of 6 options \(e.g. '河童' of question q0\), and still",
    ):
        export_lmeval(questions, tmp_path / "t", tokenizer=path)
    assert not (tmp_path / "t").exists()
    with pytest.raises(WikioriginError, match="nope: no such tokenizer"):
        export_lmeval(questions, tmp_path / "t", tokenizer=tmp_path / "nope")


def test_the_command_line_checks_the_tokenizer_and_takes_a_cue(merging_model, tmp_path, capsys):
    questions = _questions(tmp_path / "mcq.parquet")
    assert (
        cli.main(["export", "lm-eval", str(questions), "--out", str(tmp_path / "x"), "--tokenizer", str(merging_model)])
        == 0
    )
    config = yaml.safe_load(next((tmp_path / "x").glob("*.yaml")).read_text())
    assert config["metadata"]["answer_cue"] == "\n回答： " and config["metadata"]["merged_options"] == 12
    assert (
        cli.main(["export", "lm-eval", str(questions), "--out", str(tmp_path / "y"), "--answer-cue", "\\nAnswer:"]) == 0
    )
    config = yaml.safe_load(next((tmp_path / "y").glob("*.yaml")).read_text())
    assert config["metadata"]["answer_cue"] == "\nAnswer:"
