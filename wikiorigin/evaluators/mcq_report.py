"""The report of a multiple-choice run: ``report.md`` with the tables overall, by type and by
region (and, for recorded answers with reference verdicts, where ours differ), and the bar
plots of accuracy by type and by region, their classes in English where a culture gives
their English names (:class:`wikiorigin.presets.Culture` ``english``)."""

from __future__ import annotations

from ..presets import cultures
from .report import bar_plot, markdown_table, write_results

__all__ = ["write_mcq_results", "plot_labels"]


def plot_labels() -> dict[str, str]:
    """The English names plots give classes: every culture's (YokaiEval's types and regions)."""
    return {k: v for c in cultures() for k, v in c.english.items()}


def _generation_lines(summary: dict) -> list[str]:
    n = summary.get("answered", summary["n"])
    coverage = "–" if summary["coverage"] is None else f"{summary['coverage']:.3f}"
    lines = [
        "",
        f"The parser read {n - summary['unread']} of {n} responses (coverage {coverage}"
        + (
            f"; {summary['failed']} requests failed after retries: no answer, left out of every figure"
            if summary["failed"]
            else ""
        )
        + (f"; {summary['missing']} questions have no recorded response" if summary["missing"] else "")
        + (
            f"; {summary['truncated']} responses were cut by the token limit or left their reasoning "
            "unclosed, no answer (raise --max-new-tokens)"
            if summary.get("truncated")
            else ""
        )
        + "); unread responses count as wrong"
        + (f", {summary['judged']} of them were given to the judge" if summary["judged"] else "")
        + (
            f". Accuracy over the responses read: {summary['accuracy_read']:.3f}."
            if summary["accuracy_read"] is not None
            else "."
        ),
        "",
        "How the responses were read: " + ", ".join(f"{k} {v}" for k, v in summary["read_as"].items()) + ".",
    ]
    if "agreement_with_reference_judge" in summary:
        lines += [
            "",
            f"Accuracy by the file's own verdicts (the reference judge): "
            f"{summary['accuracy_by_reference']:.3f}; ours: {summary['accuracy']:.3f}. Agreement "
            f"where the reference gave a verdict: {summary['agreement_with_reference_judge']:.3f}.",
        ]
        groups = summary["reference_disagreements"]
        if groups:
            lines += [
                "",
                "## Where we differ from the reference verdicts",
                "",
                markdown_table(
                    ["kind", "rows", "example response"],
                    [[g["kind"], g["n"], _one_line(g["examples"][0]["response"])] for g in groups],
                ),
            ]
    return lines


def _shown(value):
    return float("nan") if value is None else value


def _one_line(text: str) -> str:
    return (text.replace("\n", " ⏎ ").replace("|", "\\|"))[:80] or "(empty)"


def write_mcq_results(out, items: list[dict], summary: dict, meta: dict | None = None, settings: dict | None = None):
    """The run's directory: items, summary, ``report.md`` with the tables by type and region
    (and, for recorded answers with reference verdicts, where ours differ), and bar plots of
    accuracy by type and by region."""
    metrics = [k for k in ("accuracy", "acc", "acc_norm", "acc_norm_bytes") if k in summary]
    if summary["mode"] == "loglikelihood":
        metrics.remove("accuracy")
    lines = [
        f"# Multiple choice: {summary['model']} ({summary['mode']})",
        "",
        markdown_table(["questions", *metrics], [[summary["n"], *[_shown(summary[m]) for m in metrics]]]),
    ]
    if summary["mode"] == "generate":
        lines += _generation_lines(summary)
    plots, names = [], plot_labels()
    for label, title in (("by_type", "type"), ("by_region", "region")):
        groups = summary[label]
        lines += [
            "",
            f"## By {title}",
            "",
            markdown_table(
                [title, "n", *metrics], [[k, v["n"], *[_shown(v[m]) for m in metrics]] for k, v in groups.items()]
            ),
        ]
        plots.append(
            (
                f"accuracy_{label}.png",
                lambda path, g=groups, t=title, m=metrics[0]: bar_plot(
                    path,
                    [names.get(k, k) for k in g],
                    [_shown(v[m]) for v in g.values()],
                    f"{summary['model']}: {m} by {t}",
                    counts=[v["n"] for v in g.values()],
                    intervals=[v.get(f"{m}_ci95") for v in g.values()],
                ),
            )
        )
    lines += ["", "Plots: `accuracy_by_type.png`, `accuracy_by_region.png`."]
    return write_results(out, items, summary, "\n".join(lines), plots=plots, meta=meta, settings=settings)
