"""A comparison's files (:meth:`~wikiorigin.evaluators.compare.Comparison.save`): ``comparison.md``
(the settings' warnings, the ranking, the paired tests, the signatures), ``comparison.json``, and
the plots (``models.png``, ``scatter.png``), written together or not at all. Drawing and writing
only: the figures and tests are :mod:`~wikiorigin.evaluators.compare`'s and
:mod:`~wikiorigin.evaluators.paired`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..files import write_all
from .paired import ALPHA
from .plots import _bars, _scatter
from .results import COMPARISON_MARK
from .summaries import _interval_text, _nan, markdown_table, summary_json

__all__ = ["write_comparison", "comparison_markdown", "paired_markdown"]


def _versus(entry: dict, last: bool) -> str:
    """The ranking's "vs next" cell: told apart (``>``) or not (``≈``) from the next one down."""
    if entry["vs_next"] is None:
        return "" if last else "not paired"
    nxt = entry["vs_next"]
    return f"{'>' if nxt['tell_apart'] else '≈'} {nxt['model']} (Holm p = {nxt['p_holm']:.3g})"


def _ranking_lines(metric: str, ranking: Sequence[dict], pairs: int) -> list[str]:
    """The head of the paired tests' section: the ranking with intervals and neighbour tests."""
    rows = [
        [
            e["rank"],
            e["model"],
            _nan(e["value"]),
            _interval_text(e["ci95"]),
            f"{e['n']}{'†' if e['small'] else ''}" if e["n"] is not None else "–",
            _versus(e, e is ranking[-1]),
        ]
        for e in ranking
    ]
    return [
        "## Paired tests",
        "",
        "Runs joined by question (its id, else its text); each pair tested on the questions both answered. "
        f"`≈`: cannot be told apart from the next model down (Holm-corrected p ≥ {ALPHA} over all "
        f"{pairs} pairs); † fewer than 30 questions.",
        "",
        markdown_table(["rank", "model", metric, "95% interval", "n", "vs next"], rows),
    ]


def _pair_lines(pairs: list[dict]) -> list[str]:
    """Every pair's test, and the pairs tested on the questions in common only."""
    header = ["a", "b", "n", "a − b", "95% interval", "p", "p (Holm)", "test"]
    rows = [
        [
            p["a"],
            p["b"],
            p["n"],
            p["difference"],
            _interval_text(p["ci95"]),
            f"{p['p_value']:.3g}",
            f"{p['p_holm']:.3g}",
            p["test"],
        ]
        for p in pairs
    ]
    lines = ["", markdown_table(header, rows)]
    partial = [p for p in pairs if "only_a" in p]
    if partial:
        said = "; ".join(
            f"{p['a']} vs {p['b']}: {p['n']} in common ({p['only_a']} and {p['only_b']} answered by one only)"
            for p in partial
        )
        lines += ["", f"Tested on the questions in common only: {said}."]
    return lines


def paired_markdown(metric: str, ranking: Sequence[dict], tests: dict) -> str:
    """The ranking with intervals and the neighbour tests, then every pair, for comparison.md."""
    lines = _ranking_lines(metric, ranking, len(tests["pairs"]))
    if tests["pairs"]:
        lines += _pair_lines(tests["pairs"])
    if tests["unpaired"]:
        lines += [
            "",
            "Not paired: " + "; ".join(f"{u['a']} and {u['b']} ({u['reason']})" for u in tests["unpaired"]) + ".",
        ]
    lines += [
        "",
        "Intervals of a model's figure: as in its summary (Wilson for proportions, Student t for means); "
        f"of a difference: paired bootstrap (BCa, {tests['resamples']:,} resamples, seed {tests['seed']}). "
        "Tests: McNemar's exact test for 0/1 outcomes, a paired permutation test (the same resamples) for "
        "scores.",
    ]
    return "\n".join(lines)


def comparison_markdown(comparison: Any) -> str:
    """comparison.md of a :class:`~wikiorigin.evaluators.compare.Comparison`: the settings'
    warnings, the ranking, the correlation with the external scores, the paired tests, the runs'
    signatures, and the mark that tells it as ours."""
    c = comparison
    text = "# Models compared\n\n"
    if c.warnings:
        text += "**Not comparable as they stand:** these runs' settings differ in more than the model.\n\n"
        text += "".join(f"- {w}\n" for w in c.warnings) + "\n"
    text += f"{c.table}\n"
    if c.notes:
        text += "\nHow the runs were counted:\n\n" + "".join(f"- {n}.\n" for n in c.notes)
    if c.pearson is not None:
        text += f"\nPearson r = {c.pearson:.3f} over {len(c.models) - len(c.not_in_external or ())} models.\n"
    tests = {"pairs": c.pairs, "unpaired": c.unpaired, "seed": c.seed, "resamples": c.resamples}
    text += f"\n{paired_markdown(c.metric, c.ranking, tests)}\n"
    signatures = [(m, s["signature"]) for m, s in zip(c.models, c.summaries) if s.get("signature")]
    if signatures:
        text += "\n## Signatures\n\n" + "".join(f"- {m}: `{line}`\n" for m, line in signatures)
    return f"{text}\n{COMPARISON_MARK}\n"


def write_comparison(comparison: Any, out: Path) -> Path:
    """Write ``comparison.md``, ``comparison.json``, ``models.png`` and, with two models or more
    in the external scores, ``scatter.png`` into ``out``, together or not at all
    (:func:`~wikiorigin.files.write_all`); returns ``out``."""
    c = comparison
    out.mkdir(parents=True, exist_ok=True)
    text, found = comparison_markdown(c), summary_json(c.to_json())
    writers = [(out / "models.png", lambda tmp: _bars(tmp, c.models, c.figures, c.metric))]
    theirs = c.external or {}
    scattered = [(m, f["value"], theirs[m]) for m, f in zip(c.models, c.figures) if m in theirs]
    if c.external is not None and len(scattered) >= 2:
        pearson = float("nan") if c.pearson is None else c.pearson
        writers.append((out / "scatter.png", lambda tmp: _scatter(tmp, scattered, c.metric, c.external_name, pearson)))
    writers += [
        (out / "comparison.md", lambda tmp: tmp.write_text(text, encoding="utf-8")),
        (out / "comparison.json", lambda tmp: tmp.write_text(found, encoding="utf-8")),
    ]
    write_all(writers)
    return out
