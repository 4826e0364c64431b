"""What a review database says: decisions per annotator, the reasons for rejects, and how far
annotators agree on the items two or more of them decided.

Counts are of the decisions in force (an undone decision does not count). Agreement is on
accept/reject: Cohen's kappa for each pair of annotators over the items both decided, and,
with three or more annotators, Fleiss' kappa over the items decided by the largest number of
them that at least two items share (Fleiss' kappa needs the same number of ratings per item).
Both come from statsmodels; a kappa that is undefined (every rating the same) is None.
"""

from __future__ import annotations

from collections import Counter
from itertools import combinations

from .store import ReviewStore, edits_key, reason_name

__all__ = ["review_stats", "format_stats"]


def _cohen(pairs: list[tuple[str, str]]) -> float | None:
    import numpy as np
    from statsmodels.stats.inter_rater import cohens_kappa

    table = np.zeros((2, 2))
    for a, b in pairs:
        table[int(a == "reject"), int(b == "reject")] += 1
    with np.errstate(all="ignore"):  # both gave one and the same decision: 0/0
        value = float(cohens_kappa(table, return_results=False))
    return None if value != value else value


def _fleiss(ratings: list[list[str]]) -> float | None:
    import numpy as np
    from statsmodels.stats.inter_rater import fleiss_kappa

    table = np.array([[r.count("accept"), r.count("reject")] for r in ratings])
    with np.errstate(all="ignore"):  # one decision only: 0/0
        value = float(fleiss_kappa(table, method="fleiss"))
    return None if value != value else value


def _agreement(by_item: dict[str, dict[str, str]], annotators: list[str]) -> dict:
    shared = {k: v for k, v in by_item.items() if len(v) >= 2}
    pairs = []
    for a, b in combinations(annotators, 2):
        both = [(v[a], v[b]) for v in shared.values() if a in v and b in v]
        if both:
            pairs.append(
                {
                    "annotators": [a, b],
                    "items": len(both),
                    "observed": sum(x == y for x, y in both) / len(both),
                    "cohen_kappa": _cohen(both),
                }
            )
    result = {"items": len(shared), "pairs": pairs, "fleiss": None}
    sizes = Counter(len(v) for v in shared.values())
    common = [n for n, c in sizes.items() if n >= 3 and c >= 2]
    if common:
        n = max(common)
        ratings = [list(v.values()) for v in shared.values() if len(v) == n]
        result["fleiss"] = {"raters": n, "items": len(ratings), "fleiss_kappa": _fleiss(ratings)}
    return result


def review_stats(store: ReviewStore) -> dict:
    """Counts and agreement of the decisions in force: ``annotators`` (name -> decision ->
    count), ``reasons`` (reason -> count of rejects; a renamed reason under its current text,
    one no longer offered as stored), ``notes`` (rejects with free text),
    ``edited`` (accepts with edits), ``items`` (items with a decision) and ``agreement``
    (``items`` decided by two or more, Cohen's kappa per ``pairs``, ``fleiss`` for three or more);
    ``conflicts``: the items whose accepts (on the same content) differ in their edits."""
    current = store.current()
    counts: dict[str, Counter] = {}
    reasons: Counter[str] = Counter()
    notes, edited = 0, 0
    by_item: dict[str, dict[str, str]] = {}
    versions: dict[tuple[str, str], set[str]] = {}  # (item, content) -> the edits accepted on it
    for (item, annotator), d in sorted(current.items()):
        if d.decision == "accept":
            versions.setdefault((item, d.content_sha1), set()).add(edits_key(d.edits))
        counts.setdefault(annotator, Counter())[d.decision] += 1
        if d.decision == "reject":
            reasons[reason_name(d.reason) or "(note only)"] += 1
            notes += bool(d.note)
        if d.decision == "accept" and d.edits:
            edited += 1
        if d.decision in ("accept", "reject"):
            by_item.setdefault(item, {})[annotator] = d.decision
    annotators = sorted(counts)
    return {
        "annotators": {a: dict(counts[a]) for a in annotators},
        "reasons": dict(reasons.most_common()),
        "notes": notes,
        "edited": edited,
        "items": len({item for item, _ in current}),
        "conflicts": sorted({item for (item, _), edits in versions.items() if len(edits) > 1}),
        "agreement": _agreement(by_item, annotators),
    }


def _kappa(value) -> str:
    return "undefined (one decision only)" if value is None else f"{value:.3f}"


def format_stats(stats: dict, db: str = "") -> str:
    """The stats of :func:`review_stats` as text for a terminal."""
    lines = [
        f"review {db}: {stats['items']} items decided, {len(stats['annotators'])} annotator(s)",
        "",
        f"{'annotator':<20} {'accept':>7} {'reject':>7} {'skip':>7}",
    ]
    for name, c in stats["annotators"].items():
        lines.append(f"{name:<20} {c.get('accept', 0):>7} {c.get('reject', 0):>7} {c.get('skip', 0):>7}")
    conflicts = stats["conflicts"]
    lines += [
        "",
        f"accepted with edits: {stats['edited']}",
        f"conflicting edits (accepts that differ in their edits): {len(conflicts)} items"
        + (f" ({', '.join(conflicts[:10])}{', ...' if len(conflicts) > 10 else ''})" if conflicts else ""),
        "reasons for rejects:",
    ]
    lines += [f"  {n:>5}  {reason}" for reason, n in stats["reasons"].items()] or ["  (none)"]
    if stats["notes"]:
        lines.append(f"  ({stats['notes']} with a note)")
    agreement = stats["agreement"]
    lines += ["", f"agreement on the {agreement['items']} items decided by two or more:"]
    for pair in agreement["pairs"]:
        a, b = pair["annotators"]
        lines.append(
            f"  {a} & {b}: {pair['items']} items, observed {pair['observed']:.1%}, "
            f"Cohen's kappa {_kappa(pair['cohen_kappa'])}"
        )
    if agreement["fleiss"]:
        f = agreement["fleiss"]
        lines.append(f"  Fleiss' kappa ({f['raters']} raters, {f['items']} items): {_kappa(f['fleiss_kappa'])}")
    if not agreement["pairs"]:
        lines.append("  (no item has two annotators yet)")
    return "\n".join(lines)
