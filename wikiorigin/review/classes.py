"""The type and region classes a multiple-choice set offers its reviewers, and accepts in edits.

They come from the set itself: the labels file named in its provenance (``labels``, checked by
``labels_sha1``) when it can be found (a preset of :mod:`wikiorigin.labels`, or a file of that
name beside the set), else the distinct values of its rows. A culture's released classes
(:class:`wikiorigin.presets.Culture` ``types``, ``regions``: YokaiEval's) are added only for a
set of that culture: built with its own labels (``yokai-ja``), or with no labels named and its
types in its rows (its released rows), whose messy regions its adapter reads. Regions from Wikidata (the ``origin``
preset) are the rows' own.

A set labelled in two steps (``label_steps`` 2 in its provenance, regions asked of the model),
or whose rows name several of its labels' regions, may name several regions in a row
(:data:`wikiorigin.labels.REGION_SEPARATOR`): its classes say ``several_regions``, and its
regions are the single classes.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import WikioriginError

__all__ = ["mcq_classes", "find_labels"]


def find_labels(name: str | None, sha1: str | None, beside: Path):
    """The :class:`~wikiorigin.labels.Labels` a set was built with: the preset ``name`` or the
    file ``NAME.json`` in ``beside``, when its content hash is ``sha1`` (when given); else None."""
    from ..labels import load_labels, presets

    if not name:
        return None
    candidates = [name] if name in presets() else []
    candidates.append(str(beside / f"{name}.json"))
    for candidate in candidates:
        if candidate != name and not Path(candidate).is_file():
            continue
        try:
            labels = load_labels(candidate)
        except WikioriginError:
            continue
        if sha1 is None or labels.sha1 == sha1:
            return labels
    return None


def _distinct(rows: list[dict], column: str, several: bool = False) -> list[str]:
    from ..labels import split_regions

    values = {str(r[column]) for r in rows if r.get(column) not in (None, "")}
    return sorted({part for v in values for part in split_regions(v)} if several else values)


def _joined(rows: list[dict], regions: list[str]) -> bool:
    """Whether a row's region names several of ``regions`` (joined as two-step labelling joins them)."""
    from ..labels import split_regions

    for row in rows:
        parts = split_regions(str(row.get("region") or ""))
        if len(parts) > 1 and all(p in regions for p in parts):
            return True
    return False


def _culture(name: str | None, rows: list[dict]):
    """The culture whose released classes the set has (:mod:`wikiorigin.presets`): built with
    the culture's own labels (its first), or with no labels named and the culture's types in
    its rows (its released rows); else None."""
    from ..presets import by_labels, by_types

    if name:
        found = by_labels(name)
        return found if found is not None and found.labels[0] == name else None
    return by_types(r.get("type") for r in rows)


def mcq_classes(path: Path, rows: list[dict], provenance: dict) -> dict:
    """``{"types": [...], "regions": [...], "several_regions": bool, "culture": name or None,
    "labels": name or None}``:
    the classes a multiple-choice set at ``path`` offers (see the module's docstring)."""
    from ..labels import WIKIDATA

    while provenance.get("stage") == "review export":  # a reviewed set (once or more): the built set's own
        provenance = provenance.get("source") or {}
    name = provenance.get("labels")
    labels = find_labels(name, provenance.get("labels_sha1"), path.parent)
    culture = _culture(name, rows)
    several = provenance.get("label_steps") == 2 and not (labels and labels.region_source == WIKIDATA)
    if labels and labels.region_names and not several:  # rows that name several of the classes
        several = _joined(rows, labels.region_names)
    types = labels.type_names if labels else _distinct(rows, "type")
    regions = labels.region_names if labels and labels.region_names else _distinct(rows, "region", several)
    if culture is not None:  # the released rows' regions are messy labels: the page offers their class
        types = list(culture.types) + [t for t in types if t not in culture.types]
        regions = list(culture.regions)
    found = culture.name if culture is not None else None
    return {
        "types": types,
        "regions": regions,
        "several_regions": several,
        "culture": found,
        "labels": labels.name if labels else name,
    }
