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


@pytest.mark.slow
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
    assert summary["p_value"] == pytest.approx(
        wilcoxon([i["original_nll_per_char"] for i in items], [i["paraphrase_nll_per_char"] for i in items]).pvalue
    )


@pytest.mark.slow
def test_paraphrases_that_fail_are_left_out_and_said(tmp_path):
    from wikiorigin.llm import LLMClient, OpenAIBackend, RequestCache

    passages = {"A": "河童は川に住む。", "B": "天狗は山に住む。", "C": "雪女は冬に現れる。"}
    with ChatServer(lambda m: "" if "天狗" in m[-1]["content"] else "言い換え") as server:
        client = LLMClient(OpenAIBackend("p", base_url=server.url), RequestCache(tmp_path / "c.sqlite"))
        done, failed = leakage.paraphrase(passages, client)
    assert set(done) == {"A", "C"} and set(failed) == {"B"} and "empty" in failed["B"]


@pytest.mark.slow
def test_cli_with_paraphrases_from_an_llm(tmp_path, tiny_model_dir, capsys):
    articles, _ = _articles(6)
    pq.write_table(pa.table({"title": list(articles), "text": list(articles.values())}), tmp_path / "a.parquet")
    rewrites = {text[:1500]: "".join(reversed(text)) for text in articles.values()}

    def answer(messages):
        assert "task: paraphrase" in messages[0]["content"]
        return rewrites[messages[-1]["content"]]

    with ChatServer(answer) as server:
        args = [
            "eval",
            "leakage",
            "--articles",
            str(tmp_path / "a.parquet"),
            "--model",
            str(tiny_model_dir),
            "--device",
            "cpu",
            "--paraphrase-model",
            "p",
            "--base-url",
            server.url,
            "--cache",
            str(tmp_path / "c.sqlite"),
            "--out",
            str(tmp_path / "run"),
        ]
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
    with pytest.raises(WikioriginError, match="^leakage check: stride= is for overlapping windows"):
        leakage.leakage_check(articles, paraphrases, model, windows="disjoint", stride=8)
    with pytest.raises(WikioriginError, match=r"windows must be one of \('disjoint', 'overlap'\), got 'rolling'"):
        leakage.leakage_check(articles, paraphrases, model, windows="rolling")
    path = tmp_path / "p.json"
    path.write_text(json.dumps([{"title": t, "paraphrase": p} for t, p in paraphrases.items()], ensure_ascii=False))
    pq.write_table(pa.table({"title": list(articles), "text": list(articles.values())}), tmp_path / "a.parquet")
    assert (
        cli.main(
            [
                "eval",
                "leakage",
                "--articles",
                str(tmp_path / "a.parquet"),
                "--paraphrases",
                str(path),
                "--model",
                str(tiny_model_dir),
                "--device",
                "cpu",
                "--windows",
                "disjoint",
                "--out",
                str(tmp_path / "run"),
            ]
        )
        == 0
    )
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["windows"] == "disjoint"


def test_leakage_offers_an_endpoint(capsys):
    """Every token's log-probability of the article through a completions server (echo +
    logprobs): the command offers --endpoint and --tokenizer
    (tests/evaluators/test_endpoint_loglikelihood.py checks the numbers against local ones)."""
    with pytest.raises(SystemExit):
        cli.main(["eval", "leakage", "--help"])
    out = capsys.readouterr().out
    assert "--endpoint" in out and "--tokenizer" in out


class _Recorder:
    """A stand-in for a local model: each text's tokens are its characters, with a
    log-probability from the character; the texts it was asked to score are kept."""

    name = "recorder"

    def __init__(self):
        self.texts = []

    def describe(self):
        return {"model": "recorder"}

    def token_logprobs(self, texts, windows="overlap", stride=None):
        self.texts += list(texts)
        return [[-(ord(c) % 7 + 1) / 4 for c in t] for t in texts]


def test_paraphrases_are_cut_as_the_originals_are():
    """A paraphrase (of the whole article, from a file) is cut by the same rule as its
    original, the first max_chars characters, so the two passages are alike in length."""
    articles, paraphrases = _articles(4)
    paraphrases = {t: text * 3 for t, text in paraphrases.items()}  # far longer than the passage
    model = _Recorder()
    items, _ = leakage.leakage_check(articles, paraphrases, model, max_chars=25)
    assert model.texts == [leakage.passage(articles[t], 25) for t in articles] + [
        leakage.passage(paraphrases[t], 25) for t in articles
    ]
    assert all(i["original_chars"] == i["paraphrase_chars"] == 25 for i in items)
    assert leakage.passage("河童は川に住む", 3) == "河童は"  # characters (code points), not bytes or tokens
    short = {t: text[:10] for t, text in paraphrases.items()}  # shorter than the budget: kept whole
    items, _ = leakage.leakage_check(articles, short, _Recorder(), max_chars=25)
    assert all(i["paraphrase_chars"] == 10 and i["original_chars"] == 25 for i in items)


def test_a_sample_is_drawn_by_its_seed_whatever_the_order_of_the_rows():
    titles = [f"妖怪{i}" for i in range(50)]
    sample = leakage.draw_sample(titles, 20, seed=0)
    assert len(sample.titles) == 20 == len(set(sample.titles)) and sample.population == 50
    assert (sample.n, sample.seed) == (20, 0)
    assert leakage.draw_sample(list(reversed(titles)), 20, seed=0).titles == sample.titles
    assert leakage.draw_sample(random.Random(1).sample(titles, 50), 20, seed=0).titles == sample.titles
    assert set(leakage.draw_sample(titles, 20, seed=1).titles) != set(sample.titles)
    assert sample.titles != tuple(titles[:20])  # at random, not the first 20
    # an added article changes the sample only where it ranks among the drawn
    more = leakage.draw_sample(titles + ["新しい妖怪"], 20, seed=0).titles
    assert len(set(more) - set(sample.titles)) <= 1
    assert set(leakage.draw_sample(titles, 99, seed=0).titles) == set(titles)
    assert leakage.draw_sample(titles, 5, seed=None).titles == tuple(titles[:5])  # --limit: the first 5
    assert leakage.draw_sample(titles, None).titles == tuple(titles)
    with pytest.raises(WikioriginError, match="n must be a whole number > 0, got 0"):
        leakage.draw_sample(titles, 0)


def test_the_sample_is_compared_and_recorded():
    articles, paraphrases = _articles(12)
    sample = leakage.draw_sample(articles, 5, seed=3)
    items, summary = leakage.leakage_check(articles, paraphrases, _Recorder(), max_chars=30, sample=sample)
    assert [i["title"] for i in items] == list(sample.titles) and summary["n"] == 5
    assert summary["sample"] == {"n": 5, "seed": 3, "population": 12, "titles": list(sample.titles)}
    settings = leakage.leakage_settings(
        _Recorder(), max_chars=30, articles=articles, paraphrases=paraphrases, sample=sample
    )
    assert settings["sample"] == 5 and settings["sample_seed"] == 3 and "limit" not in settings
    chosen = {t: articles[t] for t in sample.titles}  # the data hash is of the articles compared
    assert settings["data"] == leakage.leakage_settings(_Recorder(), articles=chosen, sample=sample)["data"]
    first = leakage.leakage_settings(_Recorder(), sample=leakage.draw_sample(articles, 4, seed=None))
    assert first["limit"] == 4 and "sample" not in first


@pytest.mark.slow
def test_cli_sample_seed_and_limit(tmp_path, tiny_model_dir, capsys):
    """`--sample N --seed S` (default 20 and 0, the paper's) draws the same articles from the
    rows in any order, among those the paraphrase file covers; the summary names them, the
    signature says N and the seed; `--limit N` still takes the first N in file order."""
    articles, paraphrases = _articles(12)
    del paraphrases["妖怪11"]
    path = tmp_path / "p.json"
    path.write_text(json.dumps([{"title": t, "paraphrase": p} for t, p in paraphrases.items()], ensure_ascii=False))

    def run(name, rows, *more):
        pq.write_table(
            pa.table({"title": [t for t, _ in rows], "text": [x for _, x in rows]}), tmp_path / f"{name}.parquet"
        )
        assert (
            cli.main(
                [
                    "eval",
                    "leakage",
                    "--articles",
                    str(tmp_path / f"{name}.parquet"),
                    "--paraphrases",
                    str(path),
                    "--model",
                    str(tiny_model_dir),
                    "--device",
                    "cpu",
                    "--max-chars",
                    "60",
                    "--out",
                    str(tmp_path / name),
                    *more,
                ]
            )
            == 0
        )
        return json.loads((tmp_path / name / "summary.json").read_text())

    rows = list(articles.items())
    drawn = run("drawn", rows, "--sample", "5", "--seed", "7")
    again = run("again", list(reversed(rows)), "--sample", "5", "--seed", "7")
    expected = leakage.draw_sample([t for t in articles if t in paraphrases], 5, seed=7)
    assert drawn["sample"]["titles"] == again["sample"]["titles"] == list(expected.titles)
    assert drawn["sample"]["population"] == 11 and drawn["n"] == 5  # 妖怪11 has no paraphrase: never drawn
    assert drawn["settings"]["sample"] == 5 and drawn["settings"]["sample_seed"] == 7
    assert "sample:5" in drawn["signature"] and "sample_seed:7" in drawn["signature"]
    assert drawn["signature"] == again["signature"]
    assert "drawn at random from 11: --sample 5 --seed 7" in (tmp_path / "drawn" / "report.md").read_text()
    default = run("default", rows)
    assert default["sample"] == {"n": 20, "seed": 0, "population": 11, "titles": default["sample"]["titles"]}
    assert sorted(default["sample"]["titles"]) == sorted(
        expected.titles + tuple(t for t in paraphrases if t not in expected.titles)
    )
    first = run("first", rows, "--limit", "4")
    assert first["sample"]["titles"] == list(articles)[:4] and first["settings"]["limit"] == 4
    assert "sample" not in first["settings"]
    with pytest.raises(SystemExit):
        cli.main(
            [
                "eval",
                "leakage",
                "--articles",
                "a",
                "--paraphrases",
                "p",
                "--model",
                "m",
                "--out",
                "o",
                "--sample",
                "5",
                "--limit",
                "4",
            ]
        )
    assert "not allowed with argument" in capsys.readouterr().err
