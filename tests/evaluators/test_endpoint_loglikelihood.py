"""Log-likelihoods through a completions server: ``eval mcq --mode
loglikelihood --endpoint`` and ``eval leakage --endpoint`` against a loopback server that scores
prompts with transformers as vLLM answers (tests/completions_server.py), on the weights local
mode loads: the same numbers, with and without ``--tokenizer``; cached; and a server that cannot
score prompts stopped in one line before anything is scored."""

import json
import math
import random

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.completions_server import CompletionsServer
from tests.tiny_model import SENTENCES, make_tiny_llama
from wikiorigin import cli
from wikiorigin.evaluators import leakage
from wikiorigin.evaluators.models import EndpointModel, LocalModel
from wikiorigin.llm import LLMClient, OpenAIBackend, RequestCache
from wikiorigin.schemas import MCQ_REGIONS, MCQ_TYPES
from wikiorigin.testing import mcq_row, write_mcq


def _questions(path, n=12):
    rows = []
    for i in range(n):
        choices = [f"選択肢{i}-{k}" for k in range(4)] if i % 2 else [f"option {k} of {i}" for k in range(4)]
        rows.append(
            mcq_row(
                i,
                f"問{i}：どれが正しいか。",
                choices,
                i % 4,
                type=MCQ_TYPES[i % 6],
                region=MCQ_REGIONS[i % 3],
                title=f"妖怪{i}",
            )
        )
    write_mcq(path, rows)
    return path


def _run(tmp_path, name, *args):
    out = tmp_path / name
    code = cli.main(["eval", *args, "--out", str(out)])
    assert code == 0
    summary = json.loads((out / "summary.json").read_text())
    return summary, pq.read_table(out / "items.parquet").to_pylist()


def _mcq(questions, model, *options):
    """The `eval mcq` arguments of loglikelihood mode: ``questions`` by ``model``, then ``options``."""
    return ["mcq", "--questions", questions, "--mode", "loglikelihood", "--model", model, *options]


def _served(questions, url, tmp_path, *options):
    """`_mcq` by the model "served" at the endpoint ``url``, cached in ``tmp_path``/c.sqlite."""
    return _mcq(questions, "served", "--endpoint", url, "--cache", str(tmp_path / "c.sqlite"), *options)


def load_tokenizer(path):
    from wikiorigin.evaluators.completions import load_tokenizer as load

    return load(path)


def _endpoint(server, tmp_path, **kwargs):
    client = LLMClient(OpenAIBackend("served", base_url=server.url), RequestCache(tmp_path / "c.sqlite"))
    return EndpointModel(client, **kwargs)


@pytest.fixture(scope="module")
def tiny_llama(tmp_path_factory):
    """A random Llama whose tokenizer puts ``<s>`` before a text (as a server then does too)."""
    questions = [f"問{i}：どれが正しいか。選択肢{i}-{k} 回答" for i in range(6) for k in range(4)]
    texts = SENTENCES * 5 + questions
    return make_tiny_llama(tmp_path_factory.mktemp("llama") / "llama", texts, vocab_size=600)


@pytest.mark.slow
@pytest.mark.parametrize("tokenizer", [False, True], ids=["text-offsets", "token-ids"])
def test_loglikelihood_mode_through_a_server_equals_local_mode(tmp_path, tiny_model_dir, capsys, tokenizer):
    """acc and acc_norm exactly, every log-likelihood to 1e-4; the signature names the server
    and how its prompts were cut."""
    questions = str(_questions(tmp_path / "mcq.parquet"))
    local, local_items = _run(tmp_path, "local", *_mcq(questions, str(tiny_model_dir), "--device", "cpu"))
    with CompletionsServer(tiny_model_dir) as server:
        tokenizer_options = ["--tokenizer", str(tiny_model_dir)] if tokenizer else []
        served, items = _run(tmp_path, "served", *_served(questions, server.url, tmp_path, *tokenizer_options))
        calls = list(server.calls)
    for key in ("acc", "acc_norm", "acc_norm_bytes", "by_type", "by_region"):
        assert served[key] == local[key], key
    for a, b in zip(local_items, items):
        assert b["loglikelihoods"] == pytest.approx(a["loglikelihoods"], abs=1e-4)
        assert (b["pred"], b["pred_norm"]) == (a["pred"], a["pred_norm"])
    assert served["settings"]["model"] == f"served@{server.url.split('/')[2]}"
    if tokenizer:
        assert served["settings"]["tokenizer"] == "tiny" and served["settings"]["split"] == "whole"
        assert all(isinstance(c["prompt"][0], list) for c in calls)
    else:
        assert served["settings"]["split"] == "offsets" and served["settings"]["bos"] == "server"
        assert all(isinstance(c["prompt"][0], str) for c in calls)
    # 48 options: the first alone (the server's check), then 47 in batches of 32 (--batch-size)
    assert len(calls[0]["prompt"]) == 1 and sorted(len(c["prompt"]) for c in calls[1:]) == [15, 32]
    assert all(c["echo"] is True and c["logprobs"] == 1 and c["max_tokens"] == 1 for c in calls)


@pytest.mark.slow
def test_a_rerun_makes_no_request(tmp_path, tiny_model_dir):
    """Each prompt is cached on its own: the same run again, or with other batches, asks nothing."""
    questions = str(_questions(tmp_path / "mcq.parquet", 6))
    with CompletionsServer(tiny_model_dir) as server:
        args = _served(questions, server.url, tmp_path, "--batch-size", "4")
        first, items = _run(tmp_path, "one", *args)
        assert len(server.calls[0]["prompt"]) == 1
        assert sorted(len(c["prompt"]) for c in server.calls[1:]) == [3, 4, 4, 4, 4, 4]  # concurrent: any order
        again, same = _run(tmp_path, "two", *args[:-1], "7")
        assert len(server.calls) == 7
    assert again["acc"] == first["acc"] and [i["loglikelihoods"] for i in same] == [i["loglikelihoods"] for i in items]


@pytest.mark.parametrize(
    "echo,said",
    [
        (False, "refuses to score a prompt (400: echo is not supported)"),
        ("ignored", "answers without the prompt's log-probabilities"),
    ],
)
def test_a_server_that_cannot_score_prompts_is_one_line_exit_2(tmp_path, tiny_model_dir, capsys, echo, said):
    """A server that refuses echo (400), or answers with the generated token's log-probability
    only (llama.cpp's own server), stops the run after its first prompt: one line, exit 2."""
    questions = str(_questions(tmp_path / "mcq.parquet", 4))
    with CompletionsServer(tiny_model_dir, echo=echo) as server:
        capsys.readouterr()  # the server's own loading lines
        code = cli.main(["eval", *_served(questions, server.url, tmp_path, "--out", str(tmp_path / "o"))])
        assert len(server.calls) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and said in err[0] and err[0].startswith("wikiorigin: error: ")
    assert "/v1/completions for the model 'served'" in err[0]
    assert not (tmp_path / "o" / "summary.json").exists()


@pytest.mark.slow
def test_token_texts_that_do_not_spell_the_prompt_ask_for_a_tokenizer(tmp_path, tiny_model_dir, capsys):
    """A server that decodes each token alone shows a character split over tokens as U+FFFD:
    text offsets cannot be trusted there, so the run stops at its first prompt and asks for
    --tokenizer, with which the same server scores the questions."""
    questions = str(_questions(tmp_path / "mcq.parquet", 4))
    args = ["eval", *_mcq(questions, "served", "--cache", str(tmp_path / "c.sqlite"), "--out", str(tmp_path / "o"))]
    with CompletionsServer(tiny_model_dir, decode="alone") as server:
        capsys.readouterr()
        assert cli.main([*args, "--endpoint", server.url]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "do not spell the prompt" in err[0] and "give --tokenizer PATH" in err[0]
        assert len(server.calls) == 1
        assert cli.main([*args, "--endpoint", server.url, "--tokenizer", str(tiny_model_dir)]) == 0


@pytest.mark.slow
def test_a_context_ending_inside_a_token(tmp_path, tiny_model_dir, tiny_model):
    """A token spanning the context's end is scored with the continuation, in both ways of
    cutting, as local mode scores it ("kappa" is one token: the context ends inside it)."""
    requests = [("The kap", "pa is often"), ("Question: which season? Answer:", " winter.")]
    with pytest.warns(UserWarning, match="1 of 2 contexts end inside a token"):
        expected = tiny_model.loglikelihood(requests)
    with CompletionsServer(tiny_model_dir) as server:
        for tokenizer in (None, load_tokenizer(tiny_model_dir)):
            model = _endpoint(server, tmp_path, tokenizer=tokenizer)
            with pytest.warns(UserWarning, match="EndpointModel: 1 of 2 contexts end inside a token"):
                got = model.loglikelihood(requests)
            assert [g for g, _ in got] == pytest.approx([e for e, _ in expected], abs=1e-4)
            assert [g for _, g in got] == [e for _, e in expected] and model.cut_inside_token == 1


def _articles(n=6, seed=0):
    words = "河童 天狗 は 川 山 に 住む と 言われる 伝えられる 。 kappa river mountain".split()
    rng = random.Random(seed)
    articles = {f"妖怪{i}": "".join(rng.choice(words) for _ in range(30)) for i in range(n)}
    return articles, {t: "".join(rng.choice(words) for _ in range(30)) for t in articles}


def _same_check(a: tuple, b: tuple) -> None:
    (items_a, summary_a), (items_b, summary_b) = a, b
    for x, y in zip(items_a, items_b):
        assert x["original_tokens"] == y["original_tokens"] and x["paraphrase_tokens"] == y["paraphrase_tokens"]
        assert y["original_nll_per_char"] == pytest.approx(x["original_nll_per_char"], abs=1e-5)
        assert y["paraphrase_min_k"] == pytest.approx(x["paraphrase_min_k"], abs=1e-5)
    assert summary_b["p_value"] == pytest.approx(summary_a["p_value"], abs=1e-9)


@pytest.mark.slow
def test_the_leakage_check_through_a_server_equals_local(tmp_path, tiny_model_dir, capsys):
    """eval leakage --endpoint --tokenizer: the same tokens and numbers as the local model."""
    articles, paraphrases = _articles()
    pq.write_table(pa.table({"title": list(articles), "text": list(articles.values())}), tmp_path / "a.parquet")
    (tmp_path / "p.json").write_text(
        json.dumps([{"title": t, "paraphrase": p} for t, p in paraphrases.items()], ensure_ascii=False)
    )
    common = [
        "leakage",
        "--articles",
        str(tmp_path / "a.parquet"),
        "--paraphrases",
        str(tmp_path / "p.json"),
        "--sample",
        "all",
    ]
    local, local_items = _run(tmp_path, "local", *common, "--model", str(tiny_model_dir), "--device", "cpu")
    with CompletionsServer(tiny_model_dir) as server:
        args = [
            *common,
            "--model",
            "served",
            "--endpoint",
            server.url,
            "--tokenizer",
            str(tiny_model_dir),
            "--cache",
            str(tmp_path / "c.sqlite"),
        ]
        served, items = _run(tmp_path, "served", *args)
        calls = len(server.calls)
        _run(tmp_path, "again", *args)
        assert len(server.calls) == calls == 2  # 12 texts: the first alone, 11 in one batch; then cached
    _same_check((local_items, local), (items, served))
    assert served["settings"]["tokenizer"] == "tiny" and served["settings"]["bos"] == "always"


@pytest.mark.slow
def test_leakage_through_a_server_in_windows_and_as_text(tmp_path, tiny_llama, tiny_model_dir):
    """Token ids in local mode's windows when a context length is given; text prompts equal
    local mode where the server puts the BOS before a text (a Llama-style tokenizer), and
    leave out the first token where it does not (GPT-2-style)."""
    articles, paraphrases = _articles(4)
    short = LocalModel(tiny_model_dir, device="cpu", max_length=16)
    with CompletionsServer(tiny_model_dir) as server:
        windowed = _endpoint(server, tmp_path, tokenizer=load_tokenizer(tiny_model_dir), max_length=16)
        for windows in ("overlap", "disjoint"):
            expected = leakage.leakage_check(articles, paraphrases, short, max_chars=200, windows=windows)
            assert expected[0][0]["original_tokens"] > 32
            _same_check(
                expected, leakage.leakage_check(articles, paraphrases, windowed, max_chars=200, windows=windows)
            )
        as_text = _endpoint(server, tmp_path)
        texts = list(articles.values())
        whole = LocalModel(tiny_model_dir, device="cpu").token_logprobs(texts)
        assert [len(x) for x in as_text.token_logprobs(texts)] == [len(x) - 1 for x in whole]
        assert as_text.unscored_first == len(texts)
    with CompletionsServer(tiny_llama) as server:
        expected = leakage.leakage_check(articles, paraphrases, LocalModel(tiny_llama, device="cpu"))
        _same_check(expected, leakage.leakage_check(articles, paraphrases, _endpoint(server, tmp_path)))


def test_options_that_need_a_tokenizer_or_an_endpoint(tmp_path, tiny_model_dir, capsys):
    questions = str(_questions(tmp_path / "mcq.parquet", 2))
    base = ["eval", "mcq", "--questions", questions, "--mode", "loglikelihood", "--out", str(tmp_path / "o")]
    assert cli.main([*base, "--model", "m", "--endpoint", "http://127.0.0.1:9", "--bos", "always"]) == 2
    assert "--bos always with --endpoint needs --tokenizer PATH" in capsys.readouterr().err
    assert cli.main([*base, "--model", str(tiny_model_dir), "--tokenizer", str(tiny_model_dir)]) == 2
    assert "--tokenizer is for --endpoint" in capsys.readouterr().err
    assert (
        cli.main([*base, "--model", "m", "--endpoint", "http://127.0.0.1:9", "--tokenizer", str(tmp_path / "none")])
        == 2
    )
    assert "none: no such directory" in capsys.readouterr().err


def _leakage_args(tmp_path, url, *more):
    """`eval leakage` of six articles by the model "served" at ``url`` (texts as prompts)."""
    articles, paraphrases = _articles()
    pq.write_table(pa.table({"title": list(articles), "text": list(articles.values())}), tmp_path / "a.parquet")
    (tmp_path / "p.json").write_text(
        json.dumps([{"title": t, "paraphrase": p} for t, p in paraphrases.items()], ensure_ascii=False)
    )
    return [
        "eval",
        "leakage",
        "--articles",
        str(tmp_path / "a.parquet"),
        "--paraphrases",
        str(tmp_path / "p.json"),
        "--sample",
        "all",
        "--model",
        "served",
        "--endpoint",
        url,
        "--cache",
        str(tmp_path / "c.sqlite"),
        *more,
    ]


IMPOSSIBLE = [float("nan"), 0.5, float("inf"), float("-inf"), None]


@pytest.mark.slow
@pytest.mark.parametrize("value", IMPOSSIBLE, ids=["nan", "positive", "inf", "-inf", "null"])
@pytest.mark.parametrize("first", [0, 1], ids=["first-prompt", "in-a-batch"])
def test_impossible_log_probabilities_are_refused_and_not_cached(tmp_path, tiny_model_dir, capsys, value, first):
    """A server whose answer has a log-probability that is NaN, infinite, above 0 or null
    after the first token: one line naming the server, the prompt and the token, exit 2,
    no results; nothing of it cached: the mended server is asked again and the run ends."""
    out = tmp_path / "o"
    with CompletionsServer(tiny_model_dir) as server:
        args = _leakage_args(tmp_path, server.url, "--out", str(out))
        server.spoil = (3, value, first)
        capsys.readouterr()
        code = cli.main(args)
        err = capsys.readouterr().err.strip().splitlines()
        assert code == 2 and len(err) == 1, err
        assert err[0].startswith(f"wikiorigin: error: {server.url}: ") and "the model 'served'" in err[0]
        assert f"impossible log-probability, {value!r} at token 3 (" in err[0] and "for the prompt '" in err[0]
        assert not (out / "summary.json").exists()
        server.spoil, asked = None, len(server.calls)
        assert cli.main(args) == 0
        assert len(server.calls) > asked  # the spoiled answers were not cached
    assert math.isfinite(json.loads((out / "summary.json").read_text())["mean_difference"])


_CACHED = {
    "nan": {"text": [""] * 3, "logprob": [None, float("nan"), -1.0], "best": [None] * 3, "start": [0] * 3},
    "torn": {"text": [""] * 3, "logprob": [None, -1.0, -1.0]},  # no best, no start
    "uneven": {"text": [""] * 3, "logprob": [None, -1.0], "best": [None] * 3, "start": [0] * 3},
}


@pytest.mark.parametrize("kept", list(_CACHED))
def test_an_impossible_or_torn_answer_cached_before_is_asked_again(tmp_path, tiny_model_dir, caplog, kept):
    """A NaN that an earlier version cached, or a row missing its parts, is not taken from the
    cache: the row is named in a warning and the prompt asked again."""
    text = "河童は川に住むと言われる。"
    with CompletionsServer(tiny_model_dir) as server:
        model = _endpoint(server, tmp_path, tokenizer=load_tokenizer(tiny_model_dir), max_length=64)
        good = model.token_logprobs([text])[0]
        prompt = server.calls[0]["prompt"][0]
        model.client.cache.put(model._key(prompt), _CACHED[kept])
        assert model.token_logprobs([text])[0] == pytest.approx(good) and len(server.calls) == 2
    assert f"the cached answer {model._key(prompt)} is damaged (not a whole answer" in caplog.text


@pytest.mark.parametrize("tokenizer", [False, True], ids=["text-offsets", "token-ids"])
def test_an_impossible_log_likelihood_is_refused(tmp_path, tiny_model_dir, capsys, tokenizer):
    """Log-likelihood mode likewise: a positive log-probability in a batch's answer, exit 2."""
    questions = str(_questions(tmp_path / "mcq.parquet", 4))
    with CompletionsServer(tiny_model_dir) as server:
        server.spoil = (2, 0.25, 1)
        more = ["--tokenizer", str(tiny_model_dir)] if tokenizer else []
        capsys.readouterr()
        code = cli.main(["eval", *_served(questions, server.url, tmp_path, *more, "--out", str(tmp_path / "o"))])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "impossible log-probability, 0.25 at token 2" in err[0]


def _long_articles(tmp_path):
    """Articles of about 60 tokens each, and their paraphrases, as files."""
    articles, paraphrases = _articles(4)
    articles = {t: text * 2 for t, text in articles.items()}
    paraphrases = {t: text * 2 for t, text in paraphrases.items()}
    pq.write_table(pa.table({"title": list(articles), "text": list(articles.values())}), tmp_path / "a.parquet")
    (tmp_path / "p.json").write_text(
        json.dumps([{"title": t, "paraphrase": p} for t, p in paraphrases.items()], ensure_ascii=False)
    )
    return ["leakage", "--articles", str(tmp_path / "a.parquet"), "--paraphrases", str(tmp_path / "p.json")]


@pytest.mark.slow
@pytest.mark.parametrize("windows", ["overlap", "disjoint"])
def test_leakage_windows_by_the_servers_context_agree_with_local(tmp_path, tiny_model_dir, windows):
    """Texts longer than the server's context go in local mode's windows of it: the
    max_model_len it lists (less 2: a window's prompt and the token generated), or
    --max-length; the figures agree with local mode at that context, signed ctx:16."""
    common = [*_long_articles(tmp_path), "--sample", "all", "--windows", windows]
    local, local_items = _run(
        tmp_path, "local", *common, "--model", str(tiny_model_dir), "--device", "cpu", "--max-length", "16"
    )
    assert local_items[0]["original_tokens"] > 32
    served = ["--model", "served", "--tokenizer", str(tiny_model_dir), "--cache", str(tmp_path / "c.sqlite")]
    with CompletionsServer(tiny_model_dir, max_model_len=18) as server:  # a longer prompt is refused (400)
        listed, listed_items = _run(tmp_path, "listed", *common, *served, "--endpoint", server.url)
    with CompletionsServer(tiny_model_dir, max_model_len=None) as server:
        given, given_items = _run(tmp_path, "given", *common, *served, "--endpoint", server.url, "--max-length", "16")
    for summary, items in ((listed, listed_items), (given, given_items)):
        _same_check((local_items, local), (items, summary))
        assert summary["mean_difference"] == pytest.approx(local["mean_difference"], abs=1e-3)
        assert "|ctx:16|" in summary["signature"] and "|ctx:16|" in local["signature"]


def test_no_context_length_is_one_line_and_a_long_text_needs_the_tokenizer(tmp_path, tiny_model_dir, capsys):
    """A server that lists no max_model_len and no --max-length: one line asking for it, before
    any prompt is scored; texts as prompts cannot be windowed: one longer than the context is
    one line asking for --tokenizer."""
    common = [*_long_articles(tmp_path), "--sample", "all", "--model", "served", "--cache", str(tmp_path / "c")]
    with CompletionsServer(tiny_model_dir, max_model_len=None) as server:
        capsys.readouterr()
        args = ["eval", *common, "--endpoint", server.url, "--out", str(tmp_path / "o")]
        assert cli.main(args) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "lists no context length for the model 'served'" in err[0], err
        assert "give --max-length N" in err[0] and not server.calls
        assert cli.main([*args, "--max-length", "16"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "longer than the context of 16: give --tokenizer PATH" in err[0], err


def _scored(questions, url, tmp_path, out, *more):
    """`eval mcq --mode loglikelihood` one prompt a request, in order, no retries."""
    options = ("--retries", "0", "--batch-size", "1", "--concurrency", "1", "--out", str(out), *more)
    return cli.main(["eval", *_served(questions, url, tmp_path, *options)])


@pytest.mark.slow
def test_an_outage_in_loglikelihood_mode_is_an_incomplete_run(tmp_path, tiny_model_dir, capsys):
    """The server fails after 16 of 32 prompts (questions 0-3 scored): exit 1, complete: false,
    the 4 questions unscored `failed` and out of the figures; --allow-failures accepts it; the
    same command again asks only the 16 and completes the run. (It was exit 2, no summary.)"""
    questions = str(_questions(tmp_path / "mcq.parquet", 8))
    out = tmp_path / "o"
    with CompletionsServer(tiny_model_dir) as server:
        server.faults = [None] * 16 + ["500"] * 16
        assert _scored(questions, server.url, tmp_path, out) == 1
        err = capsys.readouterr().err
        assert "16 of 32 requests failed after their retries" in err and "500" in err
        summary = json.loads((out / "summary.json").read_text())
        assert (summary["complete"], summary["failed"], summary["n"], summary["answered"]) == (False, 4, 8, 4)
        items = pq.read_table(out / "items.parquet").to_pylist()
        assert [i["read_as"] for i in items] == [None] * 4 + ["failed"] * 4
        assert all(i["correct"] is None for i in items[4:])
        assert summary["acc"] == sum(i["correct"] for i in items[:4]) / 4
        server.faults = ["500"] * 16
        assert _scored(questions, server.url, tmp_path, tmp_path / "accepted", "--allow-failures") == 0
        assert json.loads((tmp_path / "accepted" / "summary.json").read_text())["complete"] is False
        server.faults, asked = [], len(server.calls)
        assert _scored(questions, server.url, tmp_path, out) == 0
        assert len(server.calls) - asked == 16  # only the unscored prompts
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["complete"], summary["failed"], summary["answered"]) == (True, 0, 8)


@pytest.mark.slow
def test_an_outage_in_the_leakage_check_is_an_incomplete_run(tmp_path, tiny_model_dir, capsys):
    """Six articles, the server failing after 8 of the 12 texts (the originals and two
    paraphrases): exit 1, 4 articles `failed`, the figures over the 2 scored; again: 4 asked."""
    out = tmp_path / "o"
    with CompletionsServer(tiny_model_dir) as server:

        def args(where, *more):
            one = ("--retries", "0", "--batch-size", "1", "--concurrency", "1", *more)
            return _leakage_args(tmp_path, server.url, "--out", str(where), *one)

        server.faults = [None] * 8 + ["500"] * 4
        assert cli.main(args(out)) == 1
        assert "4 of 12 requests failed after their retries" in capsys.readouterr().err
        summary = json.loads((out / "summary.json").read_text())
        assert (summary["complete"], summary["failed"], summary["n"], summary["answered"]) == (False, 4, 6, 2)
        assert math.isfinite(summary["mean_difference"])
        items = pq.read_table(out / "items.parquet").to_pylist()
        assert sorted(i["failed"] for i in items) == [False] * 2 + [True] * 4
        server.faults = ["500"] * 4
        assert cli.main(args(tmp_path / "accepted", "--allow-failures")) == 0
        server.faults, asked = [], len(server.calls)
        assert cli.main(args(out)) == 0 and len(server.calls) - asked == 4
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["complete"], summary["failed"], summary["answered"]) == (True, 0, 6)


class _Overflowing(CompletionsServer):
    """A server whose log-probabilities are all -1e308 while ``overflow`` is set: each one
    finite, their sums over two tokens or more not (``-inf``)."""

    overflow = True

    def complete(self, prompt, body, index):
        choice = super().complete(prompt, body, index)
        found = choice.get("logprobs")
        if self.overflow and found:
            found["token_logprobs"] = [None if v is None else -1e308 for v in found["token_logprobs"]]
            found["top_logprobs"] = [None if t is None else dict.fromkeys(t, -1e308) for t in found["top_logprobs"]]
        return choice


@pytest.mark.slow
@pytest.mark.parametrize("task", ["loglikelihood", "leakage"])
def test_log_probabilities_that_sum_past_a_float_are_refused_and_not_cached(tmp_path, tiny_model_dir, capsys, task):
    """-1e308 a token: every option tied at -inf (a silent 0.25), or a leakage check ending in
    "unexpected ZeroDivisionError", and cached. Now one line naming the server and the prompt,
    exit 2, nothing written or cached: the mended server is asked again."""
    out = tmp_path / "o"
    with _Overflowing(tiny_model_dir) as server:
        if task == "leakage":
            args = _leakage_args(tmp_path, server.url, "--out", str(out))
        else:
            args = [
                "eval",
                *_served(str(_questions(tmp_path / "mcq.parquet", 4)), server.url, tmp_path, "--out", str(out)),
            ]
        capsys.readouterr()
        assert cli.main(args) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith(f"wikiorigin: error: {server.url}: "), err
        assert "sum to -inf over the prompt's" in err[0] and "for the prompt '" in err[0]
        assert not (out / "summary.json").exists()
        server.overflow, asked = False, len(server.calls)
        assert cli.main(args) == 0 and len(server.calls) > asked


def test_a_server_down_from_the_first_prompt_is_asked_no_more(tmp_path, tiny_model_dir, capsys):
    """The first prompt unanswered after its retries: no other prompt is sent (a dead server is
    not asked 32 times over), every question `failed`, exit 1 even with --allow-failures."""
    questions = str(_questions(tmp_path / "mcq.parquet", 8))
    out = tmp_path / "o"
    with CompletionsServer(tiny_model_dir) as server:
        server.faults = ["500"] * 40
        assert _scored(questions, server.url, tmp_path, out, "--allow-failures") == 1
        assert len(server.calls) == 1
    assert "all 32 requests failed; the first: gave up after 1 tries: 500" in capsys.readouterr().err
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["complete"], summary["failed"], summary["answered"], summary["acc"]) == (False, 8, 0, None)


class _OneIndex(CompletionsServer):
    """A server that numbers every choice of an answer 0: which prompt each scores is unknown."""

    def complete(self, prompt, body, index):
        return {**super().complete(prompt, body, index), "index": 0}


def test_choices_whose_indices_do_not_number_the_prompts_are_not_used(tmp_path, tiny_model_dir, capsys):
    """Batches of 4 prompts answered with every choice at index 0: not scored (the run
    incomplete), where they were taken in the order sent."""
    questions = str(_questions(tmp_path / "mcq.parquet", 4))
    with _OneIndex(tiny_model_dir) as server:
        options = ("--retries", "0", "--batch-size", "4", "--out", str(tmp_path / "o"))
        assert cli.main(["eval", *_served(questions, server.url, tmp_path, *options)]) == 1
    assert "15 of 16 requests failed" in (err := capsys.readouterr().err) and "choices' indices [0, 0" in err
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["complete"] is False and summary["answered"] < 4
