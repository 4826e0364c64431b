"""The report of a leakage check (:func:`write_leakage_results`, importable from
:mod:`~wikiorigin.evaluators.leakage`): the figures, the paired test, the sample, and the
plots of both texts' NLL per character and their differences."""

from __future__ import annotations

from .plots import MARKED
from .report import _pyplot, markdown_table, write_results

__all__ = ["write_leakage_results"]


def _plot(path, items: list[dict], model: str) -> None:
    plt = _pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.6))
    a = [i["original_nll_per_char"] for i in items]
    b = [i["paraphrase_nll_per_char"] for i in items]
    bins = max(5, min(30, len(items) // 2))
    left.hist(a, bins=bins, alpha=0.6, label="original")
    left.hist(b, bins=bins, alpha=0.6, label="paraphrase")
    left.set_xlabel("NLL per character")
    left.set_ylabel("articles")
    left.legend()
    right.hist([i["difference"] for i in items], bins=bins, color="#55a868")
    right.axvline(0, color="black", lw=1)
    right.set_xlabel("original − paraphrase (NLL per character)")
    fig.suptitle(f"{model}: original vs paraphrase")
    fig.tight_layout()
    fig.savefig(path, dpi=120, metadata=MARKED)
    plt.close(fig)


def _chosen(sample: dict | None) -> str:
    """How the articles were chosen, for the report (the titles are in ``summary.json``)."""
    if not sample or sample["n"] is None:
        return ""
    if sample["seed"] is None:
        return f" (the first {sample['n']} of {sample['population']})"
    return (
        f" (drawn at random from {sample['population']}: --sample {sample['n']} --seed {sample['seed']}; "
        "the titles in summary.json)"
    )


def _test_lines(s: dict) -> list[str]:
    """The report's lines on the paired differences and the Wilcoxon test (none: too few scored)."""
    if s["mean_difference"] is None:
        return [f"Paired difference: none: only {s.get('answered', s['n'])} articles were scored (2 at least)."]
    return [
        f"Paired difference (original − paraphrase, NLL per char): mean {s['mean_difference']:.4f}, "
        f"median {s['median_difference']:.4f}; the original is more likely for "
        f"{s['original_more_likely']:.1%} of the articles.",
        f"Wilcoxon signed-rank: W = {s['wilcoxon_statistic']:.1f}, p = {s['p_value']:.3g}; "
        f"rank-biserial r = {s['rank_biserial']:.3f} (negative: originals more likely).",
    ]


def write_leakage_results(
    out, items: list[dict], summary: dict, meta: dict | None = None, settings: dict | None = None
):
    """Write a leakage check to directory ``out``: ``items.parquet``, ``summary.json``,
    ``report.md`` (NLL per character, perplexity and Min-k% of originals and paraphrases, the
    Wilcoxon test) and ``leakage.png``; ``summary`` is :func:`leakage_check`'s, ``meta`` goes into
    the provenance, ``settings`` into the signature."""
    s = summary
    lines = [
        f"# Leakage check: {s['model']}",
        "",
        f"{s['n']} articles{_chosen(s.get('sample'))} against their paraphrases, each text cut "
        f"to its first {s['max_chars']} characters"
        + (f"; {s['without_paraphrase']} without a paraphrase left out" if s["without_paraphrase"] else "")
        + ".",
        "",
        markdown_table(
            ["text", "NLL per char", "perplexity", f"Min-{int(s['k'] * 100)}% log-prob"],
            [
                ["original", s["original_nll_per_char"], s["original_perplexity"], s["original_min_k"]],
                ["paraphrase", s["paraphrase_nll_per_char"], s["paraphrase_perplexity"], s["paraphrase_min_k"]],
            ],
        ),
        "",
        *_test_lines(s),
        "",
        "Plot: `leakage.png` (both distributions and the paired differences).",
    ]
    scored = [i for i in items if not i.get("failed")]
    return write_results(
        out,
        items,
        summary,
        "\n".join(lines),
        plots=[("leakage.png", lambda path: _plot(path, scored, s["model"]))],
        meta=meta,
        settings=settings,
    )
