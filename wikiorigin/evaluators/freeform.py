"""Scoring free-form answers (WikiOriginQA): exact match and chrF against the item's names.

:func:`chrf` is sentence-level chrF (character n-grams 1-6, beta 2, whitespace ignored,
averaged over the orders both strings have), the same number as sacrebleu's
``CHRF().sentence_score`` (0-100); the statistics are kept apart from the arithmetic
(:func:`chrf_stats`, :func:`chrf_from_stats`) so they can be summed over a corpus.
:func:`score_answer` normalizes (NFKC, case-fold), checks an exact match against any answer,
and gives chrF against the answer nearest by edit distance and the best chrF over all.
"""

from __future__ import annotations

import unicodedata
from collections import Counter

__all__ = ["chrf", "chrf_stats", "chrf_from_stats", "score_answer", "normalize", "levenshtein"]

CHAR_ORDER = 6
BETA = 2.0


def _ngrams(text: str, n: int) -> Counter:
    return Counter(text[i : i + n] for i in range(len(text) - n + 1))


def chrf_stats(hypothesis: str, reference: str, order: int = CHAR_ORDER) -> list[int]:
    """``[hyp, ref, match]`` counts per order (whitespace removed), flattened. An order the
    reference is too short for counts no hypothesis n-grams either (as sacrebleu does)."""
    hyp, ref = "".join(hypothesis.split()), "".join(reference.split())
    stats = []
    for n in range(1, order + 1):
        h, r = _ngrams(hyp, n), _ngrams(ref, n)
        n_ref = sum(r.values())
        stats += [sum(h.values()) if n_ref else 0, n_ref, sum((h & r).values())]
    return stats


def chrf_from_stats(stats: list[int], beta: float = BETA) -> float:
    """chrF (0-100) from counts, averaging precision and recall over the effective orders."""
    factor = beta ** 2
    precision = recall = 0.0
    effective = 0
    for i in range(0, len(stats), 3):
        n_hyp, n_ref, n_match = stats[i : i + 3]
        if n_hyp > 0 and n_ref > 0:
            precision += n_match / n_hyp
            recall += n_match / n_ref
            effective += 1
    if effective == 0:
        return 0.0
    precision, recall = precision / effective, recall / effective
    if precision + recall == 0:
        return 0.0
    return 100 * (1 + factor) * precision * recall / (factor * precision + recall)


def chrf(hypothesis: str, reference: str) -> float:
    return chrf_from_stats(chrf_stats(hypothesis, reference))


def normalize(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def levenshtein(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def score_answer(prediction: str, answers: list[str]) -> dict:
    """``exact`` (bool), ``chrf`` (against the answer nearest by edit distance), ``chrf_best``
    (the best over all answers) and ``matched`` (that nearest answer); strings are
    normalized (NFKC, case-fold, spaces) first."""
    if not answers:
        raise ValueError("score_answer: no answers to compare with")
    pred = normalize(prediction)
    names = [normalize(a) for a in answers]
    nearest = min(range(len(names)), key=lambda i: (levenshtein(pred, names[i]), i))
    return {
        "exact": pred in names,
        "chrf": chrf(pred, names[nearest]),
        "chrf_best": max(chrf(pred, n) for n in names),
        "matched": answers[nearest],
    }
