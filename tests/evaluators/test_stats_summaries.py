"""Every accuracy, exact match and chrF in a run's summary carries a 95% interval and a standard
error, overall and per group, and groups under 30 are marked: the released
YokaiEval rows answered by calm2 (recorded), log-likelihood mode, free-form; the report's tables
and the plots say so too."""

import json
import lzma
import math

import pytest
from scipy import stats as sp

from wikiorigin import cli
from wikiorigin.evaluators import freeform, mcq


@pytest.fixture(scope="module")
def calm2(data_dir, tmp_path_factory):
    """The released first 40 rows joined to calm2's released responses, scored."""
    where = tmp_path_factory.mktemp("calm2")
    for name in ("YokaiEval-first40.json", "responses-calm2-7b-chat.json"):
        (where / name).write_bytes(lzma.open(data_dir.parent / "yokaieval" / (name + ".xz")).read())
    rows, _ = mcq.attach_responses(
        mcq.read_questions(where / "YokaiEval-first40.json"), mcq.read_questions(where / "responses-calm2-7b-chat.json")
    )
    return where, mcq.evaluate_generate(rows, recorded="calm2")


def _wilson(k, n):
    ci = sp.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    return [ci.low, ci.high]


def test_generation_summary_has_intervals_overall_and_by_group(calm2):
    _, items = calm2
    summary = mcq.summarize(items)
    k = sum(i["correct"] for i in items)
    assert summary["accuracy"] == k / 40 and summary["n"] == 40  # the keys the checks read stay
    assert summary["accuracy_ci95"] == pytest.approx(_wilson(k, 40))
    assert summary["accuracy_stderr"] == pytest.approx(math.sqrt(k / 40 * (1 - k / 40) / 39))
    assert summary["small"] is False
    read = [i for i in items if i["pred"] is not None]
    assert summary["accuracy_read_ci95"] == pytest.approx(_wilson(sum(i["correct"] for i in read), len(read)))
    by_reference = sum(i["reference_judge"] is True for i in items)
    assert summary["accuracy_by_reference"] == by_reference / 40
    assert summary["accuracy_by_reference_ci95"] == pytest.approx(_wilson(by_reference, 40))
    for field, label in (("type", "by_type"), ("region", "by_region")):
        for group, block in summary[label].items():
            part = [i for i in items if i[field] == group]
            hits = sum(i["correct"] for i in part)
            assert block["n"] == len(part) and block["accuracy"] == hits / len(part)
            assert block["accuracy_ci95"] == pytest.approx(_wilson(hits, len(part)))
            assert block["small"] is (len(part) < 30)
            assert (block["accuracy_stderr"] is None) == (len(part) == 1)
    assert summary["by_type"]["妖怪の行う行動"]["small"] is True  # 15 of the 40 questions


class _Scorer:
    """Log-likelihoods that favour short options, with a twist per option."""

    name = "scorer"

    def loglikelihood(self, requests, batch_size=None):
        return [(-float(len(c)) - (sum(map(ord, c)) % 7) / 3, False) for _, c in requests]


def test_loglikelihood_summary_has_intervals_for_acc_and_acc_norm(calm2):
    where, _ = calm2
    rows = mcq.read_questions(where / "YokaiEval-first40.json")
    items = mcq.evaluate_loglikelihood(rows, _Scorer())
    summary = mcq.summarize(items)
    for name, key in (("acc", "correct"), ("acc_norm", "correct_norm"), ("acc_norm_bytes", "correct_bytes")):
        k = sum(i[key] for i in items)
        assert summary[name] == k / 40 and summary[f"{name}_ci95"] == pytest.approx(_wilson(k, 40))
        assert summary[f"{name}_stderr"] == pytest.approx(math.sqrt(k / 40 * (1 - k / 40) / 39))
        assert all(f"{name}_ci95" in block for block in summary["by_region"].values())
    assert summary["accuracy_ci95"] == summary["acc_ci95"] and summary["accuracy_stderr"] == summary["acc_stderr"]


def test_report_and_plots_mark_small_groups(calm2, tmp_path):
    where, _ = calm2
    out = tmp_path / "run"
    assert (
        cli.main(
            [
                "eval",
                "mcq",
                "--questions",
                str(where / "YokaiEval-first40.json"),
                "--responses",
                str(where / "responses-calm2-7b-chat.json"),
                "--out",
                str(out),
            ]
        )
        == 0
    )
    summary = json.loads((out / "summary.json").read_text())
    report = (out / "report.md").read_text()
    assert "## 95% intervals" in report and "Wilson" in report
    low, high = summary["accuracy_ci95"]
    assert f"| accuracy | {summary['accuracy']:.3f} | [{low:.3f}, {high:.3f}] |" in report
    kanto = summary["by_region"]["関東"]
    low, high = kanto["accuracy_ci95"]
    assert f"| 関東 | {kanto['n']} | {kanto['accuracy']:.3f} | [{low:.3f}, {high:.3f}] | † |" in report
    assert (out / "accuracy_by_region.png").stat().st_size > 0


def test_freeform_summary_intervals():
    names = ["河童", "天狗", "ぬらりひょん", "Väinämöinen", "Sampo", "Kappa"]
    items = []
    for i in range(36):
        answer = names[i % 6]
        said = answer if i % 3 else answer[:-1] or "x"
        items.append(
            {
                "model": "m",
                "language": "jawiki" if i % 6 < 3 else "fiwiki",
                "has_enwiki": i < 31,
                "failed": False,
                **freeform.score_answer(said, [answer]),
                "exact_romanized": freeform.romanize(said) == freeform.romanize(answer),
            }
        )
    summary = freeform.summarize_freeform(items)
    chrf = [i["chrf"] for i in items]
    ci = sp.ttest_1samp(chrf, 0).confidence_interval(0.95)
    assert summary["chrf"] == sum(chrf) / 36
    assert summary["chrf_ci95"] == pytest.approx([ci.low, min(100.0, ci.high)])
    assert summary["chrf_stderr"] == pytest.approx(sp.sem(chrf))
    k = sum(i["exact"] for i in items)
    assert summary["exact"] == k / 36 and summary["exact_ci95"] == pytest.approx(_wilson(k, 36))
    assert (
        summary["by_enwiki"]["without"]["small"] is True
        and summary["by_enwiki"]["with English article"]["small"] is False
    )
    assert set(summary["by_language_enwiki"]["jawiki / en"]) >= {
        "n",
        "exact",
        "exact_ci95",
        "chrf_best_stderr",
        "exact_romanized_ci95",
        "small",
    }
