"""`eval compare` tests every pair of runs on the same questions: the six
models' released YokaiEval responses (McNemar's exact test), free-form runs (chrF: a paired
permutation test), runs on other questions not paired; each figure checked against scipy."""

import json
import lzma

import numpy as np
import pyarrow.parquet as pq
import pytest
from scipy import stats as sp

from wikiorigin import cli
from wikiorigin.evaluators import freeform, mcq, stats
from wikiorigin.evaluators.report import compare_runs

MODELS = (
    "calm2-7b-chat",
    "gpt4o-mini",
    "llama-3.1-swallow-70b-instruct-v0.1",
    "llm-jp-13b-instruct-full-jaster-v1.0",
    "mistral-nemo-instruct-2407",
    "qwen2.5-7b-instruct",
)


@pytest.fixture(scope="module")
def released(data_dir, tmp_path_factory):
    """The six released responses files, each scored alone and joined to calm2's 810 questions
    (as the demo does: gpt4o-mini's prompts are worded otherwise, qwen2.5's cover 807)."""
    where = tmp_path_factory.mktemp("six")
    for model in MODELS:
        name = f"responses-{model}.json"
        (where / name).write_bytes(lzma.open(data_dir.parent / "yokaieval" / (name + ".xz")).read())
    joined, alone = {}, {}
    for model in MODELS:
        responses = str(where / f"responses-{model}.json")
        joined[model] = where / f"joined-{model}"
        assert (
            cli.main(
                [
                    "eval",
                    "mcq",
                    "--questions",
                    str(where / "responses-calm2-7b-chat.json"),
                    "--responses",
                    responses,
                    "--out",
                    str(joined[model]),
                ]
            )
            == 0
        )
        if model in ("calm2-7b-chat", "gpt4o-mini", "qwen2.5-7b-instruct"):
            alone[model] = where / f"alone-{model}"
            assert cli.main(["eval", "mcq", "--responses", responses, "--out", str(alone[model])]) == 0
    return joined, alone


def _correct(run) -> dict:
    table = pq.read_table(run / "items.parquet", columns=["id", "correct"]).to_pylist()
    return {r["id"]: r["correct"] for r in table}


@pytest.mark.slow
def test_six_released_models_paired(released, data_dir, tmp_path):
    joined, _ = released
    runs = [joined[m] for m in MODELS]
    result = compare_runs(
        runs,
        tmp_path / "cmp",
        external=data_dir.parent / "yokaieval" / "published-accuracy.csv",
        external_name="published",
    )
    written = json.loads((tmp_path / "cmp" / "comparison.json").read_text())
    assert written["pairs"] == result["pairs"] and len(written["pairs"]) == 15 and written["unpaired"] == []
    assert all(p["n"] == 810 and p["test"] == "McNemar exact" for p in written["pairs"])
    summaries = {m: json.loads((joined[m] / "summary.json").read_text()) for m in MODELS}
    # gpt4o-mini (0.643) and Swallow 70B (0.626): 14 questions apart of 810, not told apart
    pair = next(
        p for p in written["pairs"] if {p["a"], p["b"]} == {"gpt4o-mini", "llama-3.1-swallow-70b-instruct-v0.1"}
    )
    a, b = _correct(joined[pair["a"]]), _correct(joined[pair["b"]])
    only_a = sum(a[k] and not b[k] for k in a)
    only_b = sum(b[k] and not a[k] for k in a)
    assert pair["discordant"] == [only_a, only_b]
    assert pair["p_value"] == pytest.approx(sp.binomtest(only_a, only_a + only_b, 0.5).pvalue, rel=1e-9)
    assert pair["difference"] == pytest.approx(summaries[pair["a"]]["accuracy"] - summaries[pair["b"]]["accuracy"])
    assert pair["ci95"][0] < 0 < pair["ci95"][1] and pair["p_holm"] >= 0.05
    holm = stats.holm([p["p_value"] for p in written["pairs"]])
    assert [p["p_holm"] for p in written["pairs"]] == pytest.approx(holm)
    assert result["ties"] == [["gpt4o-mini", "llama-3.1-swallow-70b-instruct-v0.1"]]
    ranking = written["ranking"]
    assert [e["model"] for e in ranking] == [
        "gpt4o-mini",
        "llama-3.1-swallow-70b-instruct-v0.1",
        "qwen2.5-7b-instruct",
        "mistral-nemo-instruct-2407",
        "calm2-7b-chat",
        "llm-jp-13b-instruct-full-jaster-v1.0",
    ]
    assert [e["vs_next"]["tell_apart"] for e in ranking[:-1]] == [False, True, True, True, True]
    for entry in ranking:  # each model's Wilson interval, as scipy's binomtest gives it
        k = sum(_correct(joined[entry["model"]]).values())
        ci = sp.binomtest(k, 810).proportion_ci(method="wilson")
        assert entry["ci95"] == pytest.approx([ci.low, ci.high]) and entry["n"] == 810 and not entry["small"]
    text = (tmp_path / "cmp" / "comparison.md").read_text()
    assert "| 1 | gpt4o-mini | 0.643 | [0.610, 0.675] | 810 | ≈ llama-3.1-swallow-70b-instruct-v0.1 (Holm p =" in text
    assert (tmp_path / "cmp" / "models.png").exists()


def test_runs_on_other_items_are_refused(released, tmp_path, capsys):
    """Scored alone, gpt4o-mini's responses answer questions worded otherwise (other ids), and
    qwen2.5's cover 807 of calm2's 810: runs over different item sets are refused (exit 2, one
    line naming two of them), never ranked or tested as if they were the same set."""
    _, alone = released
    runs = [alone[m] for m in ("calm2-7b-chat", "gpt4o-mini", "qwen2.5-7b-instruct")]
    assert cli.main(["eval", "compare", *map(str, runs), "--out", str(tmp_path / "cmp")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"error: {runs[0]} and {runs[1]} ran on different items" in err
    assert cli.main(["eval", "compare", str(runs[0]), str(runs[2]), "--out", str(tmp_path / "cmp")]) == 2
    assert "(810 and 807 items, 807 of them the same)" in capsys.readouterr().err
    assert not (tmp_path / "cmp").exists()


class _Recorded:
    """A model that says what it is told to, by question."""

    def __init__(self, name, said):
        self.name, self.said = name, said

    def generate(self, prompts, **sampling):
        return [self.said[i] for i in range(len(prompts))]


@pytest.mark.slow
def test_chrf_paired_permutation(data_dir, tmp_path):
    """Two models name the 40 yokai of the released rows' first 40 questions: chrF compared
    by a paired permutation test (scipy, the same seed), exact match by McNemar's."""
    rows = mcq.read_questions(data_dir.parent / "yokaieval" / "YokaiEval-first40.json.xz")
    questions = [
        {
            "id": r["id"],
            "question": f"Which yokai: {r['question']}",
            "answers": [r["title"]],
            "origin_wiki": "jawiki",
            "has_enwiki": i % 2 == 0,
        }
        for i, r in enumerate(rows)
    ]
    said = {
        "good": [r["title"] if i % 4 else r["title"][:-1] for i, r in enumerate(rows)],
        "worse": [r["title"] if i % 3 == 0 else r["choices"][0] for i, r in enumerate(rows)],
    }
    runs = []
    for name, answers in said.items():
        items = freeform.evaluate_freeform(questions, _Recorded(name, answers))
        freeform.write_freeform_results(tmp_path / name, items, freeform.summarize_freeform(items))
        runs.append(tmp_path / name)
    result = compare_runs(runs, tmp_path / "cmp", metric="chrf", resamples=2000)
    (pair,) = result["pairs"]
    good = pq.read_table(runs[0] / "items.parquet").column("chrf").to_numpy()
    worse = pq.read_table(runs[1] / "items.parquet").column("chrf").to_numpy()
    direct = sp.permutation_test(
        (good, worse),
        lambda x, y, axis: np.mean(x - y, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=2000,
        rng=np.random.default_rng(stats.SEED),
    )
    assert pair["test"] == "paired permutation" and pair["n"] == 40
    assert pair["p_value"] == pytest.approx(direct.pvalue) and pair["p_value"] < 0.05
    assert pair["difference"] == pytest.approx(good.mean() - worse.mean())
    exact = compare_runs(runs, tmp_path / "cmp-exact", metric="exact", resamples=2000)["pairs"][0]
    assert exact["test"] == "McNemar exact"
    summary = json.loads((runs[0] / "summary.json").read_text())
    ci = sp.ttest_1samp(good, 0).confidence_interval()
    assert summary["chrf_ci95"] == pytest.approx([ci.low, min(ci.high, 100.0)])
    assert summary["by_enwiki"]["without"]["small"] is True  # 20 questions
