"""Leakage check on a tiny local model: scores by hand, the paired test equal to scipy's, the
paraphrases from a file or from an LLM behind a loopback server, and the CLI."""

import json
import lzma
import math
import random
import zlib

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from scipy.stats import wilcoxon

from tests.openai_server import ChatServer
from wikiorigin import cli
from wikiorigin.errors import WikioriginError
from wikiorigin.evaluators import leakage

WORDS = "河童 天狗 は 川 山 に 住む と 言われる 伝えられる 。 kappa river mountain".split()


def _articles(n=12, seed=0):
    rng = random.Random(seed)
    articles = {f"妖怪{i}": "".join(rng.choice(WORDS) for _ in range(40)) for i in range(n)}
    paraphrases = {t: "".join(rng.choice(WORDS) for _ in range(40)) for t in articles}
    return articles, paraphrases


def test_text_scores_by_hand():
    logprobs = [-1.0, -2.0, -0.5, -4.0, -0.25]
    text = "かっぱ河童"
    s = leakage.text_scores(logprobs, text, k=0.4)
    nll = 7.75
    assert s["perplexity"] == pytest.approx(math.exp(nll / 5))
    assert s["nll_per_char"] == pytest.approx(nll / 5) and s["chars"] == 5
    assert s["min_k"] == pytest.approx((-4.0 - 2.0) / 2)
    assert s["zlib_ratio"] == pytest.approx((nll / 5) / len(zlib.compress(text.encode())))
    with pytest.raises(WikioriginError):
        leakage.text_scores([], "")


def test_leakage_check(tiny_model):
    articles, paraphrases = _articles()
    items, summary = leakage.leakage_check(articles, paraphrases, tiny_model, max_chars=60)
    assert summary["n"] == 12 and len(items) == 12
    first = tiny_model.token_logprobs([list(articles.values())[0][:60]])[0]
    assert items[0]["original_perplexity"] == pytest.approx(math.exp(-sum(first) / len(first)), rel=1e-5)
    a = [i["original_nll_per_char"] for i in items]
    b = [i["paraphrase_nll_per_char"] for i in items]
    assert summary["p_value"] == pytest.approx(wilcoxon(a, b).pvalue)
    diffs = [x - y for x, y in zip(a, b)]
    assert summary["original_more_likely"] == sum(d < 0 for d in diffs) / 12
    assert -1 <= summary["rank_biserial"] <= 1
    # all originals more likely: the effect is -1
    assert leakage._rank_biserial([-0.3, -0.1, -0.2]) == -1.0


def test_real_articles_longer_than_the_context(tiny_model_dir, data_dir):
    """The yokai articles released with YokaiEval (the text each question was written from),
    against the same text with its sentences in reverse order, under a 128-token context."""
    from wikiorigin.evaluators.models import LocalModel

    raw = json.loads(lzma.open(data_dir.parent / "yokaieval" / "responses-calm2-7b-chat.json.xz").read())
    articles = {}
    for row in raw:
        articles.setdefault(row["question"]["yokai"]["name"], row["question"]["yokai"]["detail"])
    articles = dict(list(articles.items())[:10])
    shuffled = {t: "。".join(reversed(text[:600].split("。"))) for t, text in articles.items()}
    model = LocalModel(tiny_model_dir, device="cpu", max_length=128)
    items, summary = leakage.leakage_check(articles, shuffled, model, max_chars=600)
    assert summary["n"] == 10 and all(i["original_tokens"] > 128 for i in items)
    assert all(i["original_chars"] == min(600, len(articles[i["title"]])) for i in items)
    assert summary["p_value"] == pytest.approx(wilcoxon([i["original_nll_per_char"] for i in items],
                                                        [i["paraphrase_nll_per_char"] for i in items]).pvalue)


def test_paraphrases_that_fail_are_left_out_and_said(tmp_path):
    from wikiorigin.llm import LLMClient, OpenAIBackend, RequestCache

    passages = {"A": "河童は川に住む。", "B": "天狗は山に住む。", "C": "雪女は冬に現れる。"}
    with ChatServer(lambda m: "" if "天狗" in m[-1]["content"] else "言い換え") as server:
        client = LLMClient(OpenAIBackend("p", base_url=server.url), RequestCache(tmp_path / "c.sqlite"))
        done, failed = leakage.paraphrase(passages, client)
    assert set(done) == {"A", "C"} and failed == {"B": "empty paraphrase"}


def test_cli_with_paraphrases_from_an_llm(tmp_path, tiny_model_dir, capsys):
    articles, _ = _articles(6)
    pq.write_table(pa.table({"title": list(articles), "text": list(articles.values())}), tmp_path / "a.parquet")
    rewrites = {text[:1500]: "".join(reversed(text)) for text in articles.values()}

    def answer(messages):
        assert "task: paraphrase" in messages[0]["content"]
        return rewrites[messages[-1]["content"]]

    with ChatServer(answer) as server:
        args = ["eval", "leakage", "--articles", str(tmp_path / "a.parquet"), "--model", str(tiny_model_dir),
                "--device", "cpu", "--paraphrase-model", "p", "--base-url", server.url,
                "--cache", str(tmp_path / "c.sqlite"), "--out", str(tmp_path / "run")]
        assert cli.main(args) == 0
        assert cli.main(args) == 0 and len(server.calls) == 6  # the re-run's paraphrases are cached
    assert "6 articles" in capsys.readouterr().out
    for name in ("items.parquet", "summary.json", "report.md", "leakage.png"):
        assert (tmp_path / "run" / name).stat().st_size > 0
    assert "Wilcoxon" in (tmp_path / "run" / "report.md").read_text()


def test_paraphrases_from_a_file_and_missing_ones(tmp_path, tiny_model):
    articles, paraphrases = _articles(5)
    del paraphrases["妖怪4"]
    path = tmp_path / "p.json"
    path.write_text(json.dumps([{"title": t, "paraphrase": p} for t, p in paraphrases.items()], ensure_ascii=False))
    _, summary = leakage.leakage_check(articles, leakage.read_texts(path, "paraphrase"), tiny_model)
    assert summary["n"] == 4 and summary["without_paraphrase"] == 1
    with pytest.raises(WikioriginError, match="only 1 articles have a paraphrase"):
        leakage.leakage_check(articles, {"妖怪0": "x"}, tiny_model)
    path.write_text(json.dumps([{"title": "x"}]))
    with pytest.raises(WikioriginError, match="p.json: expected rows with `title` and `paraphrase`"):
        leakage.read_texts(path, "paraphrase")


def test_windows_over_texts_longer_than_the_context(tiny_model_dir, capsys, tmp_path):
    """Overlapping windows (the default) and lm-eval's disjoint ones score the same tokens,
    with other numbers once a text is longer than the context; the CLI takes --windows."""
    from wikiorigin.evaluators.models import LocalModel

    articles, paraphrases = _articles(4)
    model = LocalModel(tiny_model_dir, device="cpu", max_length=32)
    items, summary = leakage.leakage_check(articles, paraphrases, model, max_chars=200)
    other, other_summary = leakage.leakage_check(articles, paraphrases, model, max_chars=200, windows="disjoint")
    assert summary["windows"] == "overlap" and other_summary["windows"] == "disjoint"
    assert all(a["original_tokens"] == b["original_tokens"] > 64 for a, b in zip(items, other))
    assert all(abs(a["original_nll_per_char"] - b["original_nll_per_char"]) > 1e-6 for a, b in zip(items, other))
    with pytest.raises(WikioriginError, match="--stride is for overlapping windows"):
        leakage.leakage_check(articles, paraphrases, model, windows="disjoint", stride=8)
    with pytest.raises(WikioriginError, match=r"windows must be one of \('disjoint', 'overlap'\), got 'rolling'"):
        leakage.leakage_check(articles, paraphrases, model, windows="rolling")
    path = tmp_path / "p.json"
    path.write_text(json.dumps([{"title": t, "paraphrase": p} for t, p in paraphrases.items()], ensure_ascii=False))
    pq.write_table(pa.table({"title": list(articles), "text": list(articles.values())}), tmp_path / "a.parquet")
    assert cli.main(["eval", "leakage", "--articles", str(tmp_path / "a.parquet"), "--paraphrases", str(path),
                     "--model", str(tiny_model_dir), "--device", "cpu", "--windows", "disjoint",
                     "--out", str(tmp_path / "run")]) == 0
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["windows"] == "disjoint"


def test_leakage_offers_no_endpoint(capsys):
    """The check needs every token's log-probability of the article: a local model only, so
    the command does not offer --endpoint (it did, and ignored it)."""
    import pytest as _pytest

    from wikiorigin import cli

    with _pytest.raises(SystemExit):
        cli.main(["eval", "leakage", "--help"])
    assert "--endpoint" not in capsys.readouterr().out
