"""The statistics of the evaluators, each against a second implementation:
Wilson intervals against scipy's ``binomtest``, standard errors against lm-evaluation-harness's
``mean_stderr``, t intervals against ``ttest_1samp``, McNemar's exact test against a binomial
test of the discordant pairs, the paired permutation test against a full enumeration of the
sign flips, Holm against its definition."""

import itertools
import math

import numpy as np
import pytest
from scipy import stats as sp

from wikiorigin.evaluators import stats


@pytest.mark.parametrize("k,n", [(0, 16), (3, 17), (16, 16), (1, 1), (287, 810), (521, 810)])
def test_wilson_interval_and_lm_eval_stderr(k, n):
    flags = [True] * k + [False] * (n - k)
    found = stats.proportion(flags)
    ci = sp.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    assert found.value == k / n and found.n == n
    assert (found.low, found.high) == pytest.approx((ci.low, ci.high), abs=1e-12)
    if n > 1:  # lm-eval's acc_stderr: sqrt(p(1-p)/(n-1))
        assert found.stderr == pytest.approx(math.sqrt(k / n * (1 - k / n) / (n - 1)), abs=1e-15)
    else:
        assert found.stderr is None
    assert stats.proportion_fields("acc", flags) == {
        "acc": k / n,
        "acc_ci95": [found.low, found.high],
        "acc_stderr": found.stderr,
    }


def test_stderr_is_lm_evaluation_harness_mean_stderr():
    metrics = pytest.importorskip("lm_eval.api.metrics", reason="lm-eval is a test extra")
    rng = np.random.default_rng(3)
    for values in (rng.integers(0, 2, 810).tolist(), (rng.random(57) * 100).tolist()):
        assert stats.stderr(values) == pytest.approx(metrics.mean_stderr(values), rel=1e-12)


def test_t_interval_of_a_mean():
    chrf = [0.0, 100.0, 37.5, 12.0, 100.0, 64.2, 0.0, 88.8, 51.0, 100.0, 7.1, 0.0]
    found = stats.mean(chrf)
    ci = sp.ttest_1samp(chrf, 0.0).confidence_interval(0.95)
    assert found.value == sum(chrf) / len(chrf)
    assert (found.low, found.high) == pytest.approx((ci.low, ci.high), rel=1e-12)
    clipped = stats.mean([1, 1, 1, 2, 10], bounds=(1, 10))
    assert clipped.low == 1.0 and clipped.high < 10  # the t interval reaches below 1 here; clipped
    assert stats.mean([7, 7, 7]).low == stats.mean([7, 7, 7]).high == 7.0
    assert stats.mean([7]).low is None and stats.mean([]).value is None
    assert math.isnan(stats.mean_fields("mean", [])["mean"])


def test_mcnemar_exact_is_a_binomial_test_of_the_discordant_pairs():
    rng = np.random.default_rng(7)
    a = rng.random(810) < 0.64
    b = np.where(rng.random(810) < 0.8, a, rng.random(810) < 0.6)
    found = stats.paired_test(a.tolist(), b.tolist(), binary=True)
    only_a, only_b = int((a & ~b).sum()), int((~a & b).sum())
    assert found["discordant"] == [only_a, only_b] and found["n"] == 810 and found["test"] == "McNemar exact"
    assert found["p_value"] == pytest.approx(sp.binomtest(only_a, only_a + only_b, 0.5).pvalue, rel=1e-9)
    assert found["difference"] == pytest.approx(a.mean() - b.mean())
    low, high = found["ci95"]
    assert low < found["difference"] < high and high - low < 0.1
    # the interval is a paired bootstrap of the per-question differences, with the seed
    again = sp.bootstrap(
        ((a.astype(float) - b.astype(float)),),
        np.mean,
        n_resamples=stats.RESAMPLES,
        method="BCa",
        rng=np.random.default_rng(stats.SEED),
    ).confidence_interval
    assert found["ci95"] == pytest.approx([again.low, again.high])


def test_paired_permutation_test_enumerates_the_sign_flips():
    """12 questions: 2**12 = 4,096 sign flips, fewer than the resamples, so scipy enumerates
    them all: the p-value is the share of flips whose mean difference is as large."""
    a = [81.0, 40.5, 100.0, 0.0, 66.7, 12.5, 100.0, 33.3, 90.0, 55.0, 100.0, 20.0]
    b = [75.0, 45.0, 100.0, 0.0, 50.0, 10.0, 80.0, 30.0, 70.0, 55.0, 90.0, 0.0]
    found = stats.paired_test(a, b, binary=False)
    d = np.subtract(a, b)
    observed = abs(d.mean())
    flips = [abs(np.mean(d * signs)) >= observed - 1e-12 for signs in itertools.product((1, -1), repeat=len(d))]
    assert found["test"] == "paired permutation" and found["n"] == 12
    assert found["p_value"] == pytest.approx(sum(flips) / len(flips))
    assert stats.paired_test([5.0, 6.0], [5.0, 6.0], binary=False)["p_value"] == 1.0
    with pytest.raises(ValueError, match="no questions in common"):
        stats.paired_test([], [], binary=True)


def test_holm():
    p = [0.01, 0.04, 0.03, 0.5]
    # Holm: the i-th smallest times (m - i), made monotone, at most 1
    assert stats.holm(p) == pytest.approx([0.04, 0.09, 0.09, 0.5])
    assert stats.holm([]) == []


def test_correlations_against_scipy():
    judge = [9, 9, 2, 8, 8, 2, 3, 8, 3, 5, 5, 5, 6, 7, 4, 6, 10, 3, 7, 2]
    people = [9, 8, 3, 8, 7, 2, 4, 8, 3, 6, 5, 4, 6, 7, 5, 5, 9, 2, 8, 1]
    found = stats.correlations(judge, people, resamples=2000)
    pearson = sp.pearsonr(judge, people)
    assert found["n"] == 20 and found["pearson"]["r"] == pytest.approx(pearson.statistic)
    # Fisher's z by hand: tanh(atanh(r) -+ 1.96 / sqrt(n - 3))
    z, half = math.atanh(pearson.statistic), sp.norm.ppf(0.975) / math.sqrt(20 - 3)
    assert found["pearson"]["ci95"] == pytest.approx([math.tanh(z - half), math.tanh(z + half)])
    assert found["spearman"]["r"] == pytest.approx(sp.spearmanr(judge, people).statistic)
    assert found["kendall"]["r"] == pytest.approx(sp.kendalltau(judge, people).statistic)
    assert found["kendall"]["p_value"] == pytest.approx(sp.kendalltau(judge, people).pvalue)
    for name in ("spearman", "kendall"):
        low, high = found[name]["ci95"]
        assert low < found[name]["r"] <= high <= 1 and found[name]["interval"] == "bootstrap BCa"
    few = stats.correlations([1, 2, 3, 5], [2, 1, 4, 5])
    assert few["spearman"]["ci95"] is None and few["spearman"]["r"] is not None
    assert stats.correlations([5, 5, 5], [1, 2, 3])["pearson"]["r"] is None  # a constant side


def test_missing_statsmodels_says_to_reinstall(monkeypatch):
    import sys

    from wikiorigin.errors import MissingExtra

    monkeypatch.setitem(sys.modules, "statsmodels.stats", None)
    with pytest.raises(
        MissingExtra,
        match=r"need scipy and statsmodels \(statsmodels.stats is missing, though the core install has "
        r"both\): reinstall wikiorigin \(pip install -e \. in its checkout\)",
    ):
        stats.proportion([True, False])
