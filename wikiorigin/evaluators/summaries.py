"""A run's figures as text: Markdown tables (:func:`markdown_table`, the 95% intervals of
:func:`interval_tables`, the note of an incomplete run) and ``summary.json`` written as strict
JSON and read back (:func:`summary_json`, :func:`read_summary`).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from ..errors import WikioriginError
from .stats import SMALL

__all__ = ["markdown_table", "incomplete_note", "interval_tables", "summary_json", "read_summary"]


def _fmt(value) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return "–" if math.isnan(value) else f"{value:.3f}"
    return str(value)


def markdown_table(header: list[str], rows: list[list]) -> str:
    """A Markdown table of ``header`` and ``rows`` (floats to 3 decimals, NaN as ``–``)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_fmt(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def incomplete_note(summary: dict) -> str:
    """The line an incomplete run's report opens with: how many requests failed, how many items
    they left without an answer (out of the figures), and how to finish the run."""
    failed, requests = summary.get("failed", 0), summary.get("failed_requests", 0)
    left = f"; {failed} items have no answer and are left out of every figure below" if failed else ""
    return (
        f"> **Incomplete run (complete: false):** {requests} requests failed after their retries{left}. "
        "Run the same command again to ask only those (answers paid for come from the cache)."
    )


def _interval_text(pair) -> str:
    return "–" if not pair or pair[0] is None else f"[{pair[0]:.3f}, {pair[1]:.3f}]"


def _metrics(block: dict) -> list[str]:
    """The names in a summary block that carry an interval (``<name>_ci95``), in its order."""
    return [k for k in block if f"{k}_ci95" in block]


def _blocks(groups: dict, prefix: str = "") -> list[tuple[str, dict]]:
    """``(label, block)`` of a summary's group dict, nested groups as ``outer / inner``."""
    found = []
    for key, value in groups.items():
        if not isinstance(value, dict):
            continue
        if "n" in value:
            found.append((f"{prefix}{key}", value))
        else:
            found += _blocks(value, f"{prefix}{key} / ")
    return found


def interval_tables(summary: dict) -> str:
    """Markdown tables of every figure in ``summary`` that has a 95% interval: the overall
    ones (value, interval, standard error), then each ``by_...`` group (n, each figure with its
    interval, and ``†`` where the group has fewer than 30 observations). Empty when the
    summary has no intervals."""
    top = _metrics(summary)
    if not top:
        return ""
    lines = [
        "## 95% intervals",
        "",
        "Proportions: Wilson score interval; means: Student t. Standard error as lm-evaluation-harness's "
        f"`mean_stderr` (n-1). † marks groups of fewer than {SMALL}.",
        "",
        markdown_table(
            ["figure", "value", "95% interval", "stderr"],
            [
                [m, _nan(summary[m]), _interval_text(summary[f"{m}_ci95"]), _nan(summary.get(f"{m}_stderr"))]
                for m in top
            ],
        ),
    ]
    for key, groups in summary.items():
        if not key.startswith("by_") or not isinstance(groups, dict):
            continue
        blocks = [(label, block) for label, block in _blocks(groups) if _metrics(block)]
        if not blocks:
            continue
        names = _metrics(blocks[0][1])
        header = [key.removeprefix("by_").replace("_", " "), "n"]
        for m in names:
            header += [m, f"{m} 95%"]
        rows = []
        for label, block in blocks:
            row = [label, block["n"]]
            for m in names:
                row += [_nan(block.get(m)), _interval_text(block.get(f"{m}_ci95"))]
            rows.append(row + ["†" if block.get("small") else ""])
        lines += ["", f"### {header[0]}", "", markdown_table(header + ["n<30"], rows)]
    return "\n".join(lines)


def _nan(value):
    return float("nan") if value is None else value


def summary_json(summary: dict) -> str:
    """``summary`` as strict JSON (no NaN: not-a-number and infinities become ``null``)."""
    return json.dumps(_finite(summary), ensure_ascii=False, indent=2, allow_nan=False, default=_jsonable)


def _finite(value):
    """``value`` with every float that is NaN or infinite, at any depth, replaced by None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _jsonable(value):
    """A value json cannot write: a numpy scalar or array as Python numbers, else its text."""
    if hasattr(value, "tolist"):
        return _finite(value.tolist())
    return str(value)


def read_summary(path) -> dict:
    """The ``summary.json`` of a run, given the run directory or the file itself. Raises
    :class:`~wikiorigin.errors.WikioriginError` if there is no such file."""
    path = Path(path)
    file = path / "summary.json" if path.is_dir() else path
    try:
        summary = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise WikioriginError(f"{file}: no such summary (run `wikiorigin eval ...` first)") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise WikioriginError(f"{file}: not JSON ({exc})") from None
    if not isinstance(summary, dict):
        raise WikioriginError(f"{file}: not a run's summary (a JSON {type(summary).__name__}, not an object)")
    return summary


def _number(value) -> float:
    return float("nan") if value is None else float(value)


def _order(value: float) -> tuple:
    return (math.isnan(value), -value if not math.isnan(value) else 0.0)
