"""Uncertainty of evaluation results: intervals, standard errors, paired tests and correlations,
all computed by scipy and statsmodels (no formula of ours).

- **Proportions** (accuracy, ``acc``, ``acc_norm``, exact match): the Wilson score interval
  (:func:`statsmodels.stats.proportion.proportion_confint`, ``method="wilson"``), which stays
  inside [0, 1] and keeps its coverage near 0 and 1 and for small groups, where the normal
  approximation does not.
- **Means** (chrF, judge ratings): Student's t interval, mean ± t(0.975, n-1) · SE
  (:data:`scipy.stats.t`): deterministic (the same summary every time, unlike a bootstrap),
  the interval that the standard error beside it implies, and close to a bootstrap's for the
  group sizes reported (30 and more; smaller groups are marked ``small``). It is clipped to
  the scale's ends where the caller gives them (chrF 0-100, ratings 1-10).
- **Standard errors** are lm-evaluation-harness's ``mean_stderr`` (``sample_stddev / sqrt(n)``,
  the sample standard deviation with n-1): :func:`scipy.stats.sem` with ``ddof=1``. For a 0/1
  outcome it is ``sqrt(p(1-p)/(n-1))``, lm-eval's ``acc_stderr``.
- **Paired tests** of two runs on the same questions: McNemar's exact test
  (:func:`statsmodels.stats.contingency_tables.mcnemar`, ``exact=True``) for 0/1 outcomes; a
  paired permutation test (:func:`scipy.stats.permutation_test`, ``permutation_type="samples"``:
  each question's two scores swapped at random) for scores. The interval of the difference is a
  paired bootstrap (:func:`scipy.stats.bootstrap`, BCa) of the mean per-question difference.
  :func:`holm` corrects a family of p-values (statsmodels ``multipletests``).
- **Correlations** (a judge against human ratings): Pearson with scipy's own interval (Fisher's
  z), Spearman and Kendall's tau-b with a paired bootstrap interval (BCa).

scipy and statsmodels are imported when first needed; without them a
:class:`~wikiorigin.errors.MissingExtra` names the extra to install.

A group of fewer than :data:`SMALL` observations is marked ``small``. The functions take plain
sequences and return plain values; the summary keys are made by :func:`proportion_fields` and
:func:`mean_fields` (``<name>``, ``<name>_ci95``, ``<name>_stderr``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import MissingExtra

__all__ = [
    "Estimate",
    "SMALL",
    "CONFIDENCE",
    "RESAMPLES",
    "SEED",
    "MIN_BOOTSTRAP",
    "proportion",
    "mean",
    "stderr",
    "proportion_fields",
    "mean_fields",
    "paired_test",
    "holm",
    "correlations",
]

SMALL = 30
"""Groups with fewer observations than this are marked ``small`` in summaries, reports and plots."""
CONFIDENCE = 0.95
"""The level of every interval."""
RESAMPLES = 9999
"""Resamples of every bootstrap and permutation test (scipy's default)."""
SEED = 0
"""The seed of every bootstrap and permutation test: the same inputs give the same numbers."""
MIN_BOOTSTRAP = 10
"""The fewest pairs a rank correlation's bootstrap interval is given for."""


@dataclass(slots=True)
class Estimate:
    """A mean or proportion with its ``CONFIDENCE`` interval (``low``, ``high``), standard error
    and number of observations; a part that cannot be computed (no observation; an interval or
    standard error of one observation) is None."""

    value: float | None
    low: float | None
    high: float | None
    stderr: float | None
    n: int


def _require() -> None:
    """scipy and statsmodels, or a one-line :class:`~wikiorigin.errors.MissingExtra`."""
    try:
        import scipy.stats  # noqa: F401
        import statsmodels.stats  # noqa: F401
    except ImportError as exc:
        raise MissingExtra(
            f"intervals and paired tests need scipy and statsmodels ({exc.name} is missing, though "
            "the core install has both): reinstall wikiorigin (pip install -e . in its checkout)"
        ) from exc


def _values(values) -> np.ndarray:
    return np.asarray([float(v) for v in values], dtype=float)


def stderr(values) -> float | None:
    """The standard error of the mean as lm-evaluation-harness's ``mean_stderr`` (sample
    standard deviation with n-1, over sqrt(n)): :func:`scipy.stats.sem`, ``ddof=1``. None for
    fewer than two values."""
    _require()
    from scipy.stats import sem

    x = _values(values)
    return float(sem(x, ddof=1)) if len(x) > 1 else None


def proportion(flags) -> Estimate:
    """The share of true ``flags`` with its Wilson score interval (statsmodels
    ``proportion_confint``, ``method="wilson"``) and lm-eval's standard error
    ``sqrt(p(1-p)/(n-1))``."""
    _require()
    from statsmodels.stats.proportion import proportion_confint

    flags = [bool(f) for f in flags]
    n = len(flags)
    if n == 0:
        return Estimate(None, None, None, None, 0)
    k = sum(flags)
    low, high = proportion_confint(k, n, alpha=1 - CONFIDENCE, method="wilson")
    return Estimate(k / n, float(low), float(high), stderr(flags), n)


def mean(values, bounds: tuple[float, float] | None = None) -> Estimate:
    """The mean of ``values`` with its Student t interval (mean ± t(0.975, n-1) · SE, scipy's
    ``t.interval``) and standard error (:func:`stderr`). Values all alike: the interval is the
    value itself. ``bounds``: the scale's ends (a rating's 1 and 10), which the interval is
    clipped to (the mean cannot lie outside them, so the coverage is kept)."""
    _require()
    from scipy.stats import t

    x = _values(values)
    if len(x) == 0:
        return Estimate(None, None, None, None, 0)
    m, se = sum(x.tolist()) / len(x), stderr(x)  # summed as the summaries always did
    if se is None:
        return Estimate(m, None, None, None, 1)
    if se == 0:
        return Estimate(m, m, m, 0.0, len(x))
    low, high = t.interval(CONFIDENCE, len(x) - 1, loc=m, scale=se)
    if bounds is not None:
        low, high = max(low, bounds[0]), min(high, bounds[1])
    return Estimate(m, float(low), float(high), se, len(x))


def _fields(name: str, estimate: Estimate) -> dict:
    interval = None if estimate.low is None else [estimate.low, estimate.high]
    return {name: estimate.value, f"{name}_ci95": interval, f"{name}_stderr": estimate.stderr}


def proportion_fields(name: str, flags) -> dict:
    """``{name: share, name_ci95: [low, high], name_stderr: se}`` of 0/1 ``flags``
    (:func:`proportion`); the share is ``sum / n``, exactly."""
    return _fields(name, proportion(flags))


def mean_fields(name: str, values, bounds: tuple[float, float] | None = None) -> dict:
    """``{name: mean, name_ci95: [low, high], name_stderr: se}`` of ``values`` (:func:`mean`,
    the interval clipped to ``bounds``); the mean of no values is NaN (written ``null``), as
    the summaries had it."""
    estimate = mean(values, bounds)
    if estimate.value is None:
        estimate.value = float("nan")
    return _fields(name, estimate)


def _bootstrap_interval(
    data: tuple, statistic, *, paired: bool, vectorized: bool, seed: int, resamples: int
) -> list[float] | None:
    """A BCa bootstrap interval of ``statistic`` (scipy), or the single value when every
    resample must give the same; None when scipy finds none (NaN: e.g. every resample of a
    rank correlation alike). Resamples on which the statistic is undefined (a constant
    resample of a correlation) are scipy's to warn about; they are not ours to report."""
    import warnings

    from scipy.stats import bootstrap

    if all(np.ptp(x) == 0 for x in data):
        value = float(statistic(*data, axis=-1)) if vectorized else float(statistic(*data))
        return None if math.isnan(value) else [value, value]
    with warnings.catch_warnings():
        # scipy's ConstantInputWarning and DegenerateDataWarning, numpy's 0/0 in BCa: RuntimeWarnings
        warnings.simplefilter("ignore", RuntimeWarning)
        result = bootstrap(
            data,
            statistic,
            paired=paired,
            vectorized=vectorized,
            n_resamples=resamples,
            confidence_level=CONFIDENCE,
            method="BCa",
            rng=np.random.default_rng(seed),
        )
    low, high = float(result.confidence_interval.low), float(result.confidence_interval.high)
    return None if math.isnan(low) or math.isnan(high) else [low, high]


def _resampling(seed: int | None, resamples: int | None) -> tuple[int, int]:
    """The seed and number of resamples: those given, else :data:`SEED` and :data:`RESAMPLES`
    (read when called)."""
    return SEED if seed is None else seed, RESAMPLES if resamples is None else resamples


def _mean_difference(x, y, axis=-1):
    return np.mean(x - y, axis=axis)


def paired_test(a, b, *, binary: bool, seed: int | None = None, resamples: int | None = None) -> dict:
    """Two runs' scores on the same questions, in the same order: ``difference`` (mean of
    ``a`` minus mean of ``b``), its ``ci95`` (paired bootstrap, BCa, of the per-question
    differences), ``p_value``, ``n`` and ``test``; ``seed`` and ``resamples`` default to
    :data:`SEED` and :data:`RESAMPLES`. ``binary`` (0/1 outcomes): McNemar's exact
    test (statsmodels), with ``discordant`` = [a right b wrong, a wrong b right]; else a paired
    permutation test of the mean difference (scipy, ``permutation_type="samples"``)."""
    _require()
    from scipy.stats import permutation_test

    seed, resamples = _resampling(seed, resamples)
    x, y = _values(a), _values(b)
    if len(x) != len(y):
        raise ValueError(f"paired_test: {len(x)} scores against {len(y)}")
    if len(x) == 0:
        raise ValueError("paired_test: no questions in common")
    d = x - y
    out: dict[str, Any] = {
        "difference": float(d.mean()),
        "ci95": _bootstrap_interval((d,), np.mean, paired=False, vectorized=True, seed=seed, resamples=resamples),
        "n": len(d),
    }
    if binary:
        from statsmodels.stats.contingency_tables import mcnemar

        only_a, only_b = int(((x == 1) & (y == 0)).sum()), int(((x == 0) & (y == 1)).sum())
        both, neither = int(((x == 1) & (y == 1)).sum()), int(((x == 0) & (y == 0)).sum())
        out["p_value"] = float(mcnemar([[both, only_a], [only_b, neither]], exact=True).pvalue)
        out["test"] = "McNemar exact"
        out["discordant"] = [only_a, only_b]
    elif np.ptp(d) == 0 and d[0] == 0:
        out.update(p_value=1.0, test="paired permutation")
    else:
        result = permutation_test(
            (x, y),
            _mean_difference,
            permutation_type="samples",
            vectorized=True,
            n_resamples=resamples,
            alternative="two-sided",
            rng=np.random.default_rng(seed),
        )
        out.update(p_value=float(result.pvalue), test="paired permutation")
    return out


def holm(p_values) -> list[float]:
    """The Holm-corrected p-values of a family of tests (statsmodels ``multipletests``,
    ``method="holm"``), in the same order."""
    _require()
    from statsmodels.stats.multitest import multipletests

    p = [float(v) for v in p_values]
    return [float(v) for v in multipletests(p, method="holm")[1]] if p else []


def _spearman(x, y, axis=-1):
    """Spearman's rho along ``axis``, vectorized for the bootstrap: Pearson's r of the average
    ranks, as :func:`scipy.stats.spearmanr` computes it (NaN where a side is constant)."""
    from scipy.stats import pearsonr, rankdata

    rx, ry = rankdata(x, axis=axis), rankdata(y, axis=axis)
    flat = (np.ptp(rx, axis=axis) == 0) | (np.ptp(ry, axis=axis) == 0)
    rx = np.where(np.expand_dims(flat, axis), np.arange(rx.shape[axis]), rx)  # a stand-in, NaN'd below
    return np.where(flat, np.nan, pearsonr(rx, ry, axis=axis).statistic)


def _kendall(x, y):
    from scipy.stats import kendalltau

    return kendalltau(x, y).statistic


def correlations(x, y, *, seed: int | None = None, resamples: int | None = None) -> dict:
    """How two ratings of the same things agree: ``n`` and, for ``pearson``, ``spearman`` and
    ``kendall`` (tau-b), each ``{"r", "ci95", "p_value", "interval"}``. Pearson's interval is
    scipy's own (Fisher's z); the rank correlations' a paired bootstrap (BCa), given at least
    :data:`MIN_BOOTSTRAP` pairs (fewer: None, a bootstrap of a handful of points says nothing).
    Fewer than three pairs, or a constant side: every figure None. ``seed`` and ``resamples``
    default to :data:`SEED` and :data:`RESAMPLES`."""
    _require()
    from scipy.stats import kendalltau, pearsonr, spearmanr

    seed, resamples = _resampling(seed, resamples)
    x, y = _values(x), _values(y)
    if len(x) != len(y):
        raise ValueError(f"correlations: {len(x)} ratings against {len(y)}")
    names = {"pearson": "Fisher z", "spearman": "bootstrap BCa", "kendall": "bootstrap BCa"}
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return {"n": len(x), **{k: {"r": None, "ci95": None, "p_value": None, "interval": v} for k, v in names.items()}}
    p = pearsonr(x, y)
    ci = p.confidence_interval(CONFIDENCE)
    out = {
        "n": len(x),
        "pearson": {
            "r": float(p.statistic),
            "ci95": [float(ci.low), float(ci.high)],
            "p_value": float(p.pvalue),
            "interval": names["pearson"],
        },
    }
    for name, func, scipy_func, vectorized in (
        ("spearman", _spearman, spearmanr, True),
        ("kendall", _kendall, kendalltau, False),
    ):
        result = scipy_func(x, y)
        few = len(x) < MIN_BOOTSTRAP
        ci = (
            None
            if few
            else _bootstrap_interval((x, y), func, paired=True, vectorized=vectorized, seed=seed, resamples=resamples)
        )
        out[name] = {
            "r": float(result.statistic),
            "ci95": ci,
            "p_value": float(result.pvalue),
            "interval": f"none (fewer than {MIN_BOOTSTRAP} pairs)" if few else names[name],
        }
    return out
