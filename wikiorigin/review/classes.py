"""The type and region classes a multiple-choice set offers its reviewers, and accepts in edits.

They come from the set itself: the labels file named in its provenance (``labels``, checked by
``labels_sha1``) when it can be found (a preset of :mod:`wikiorigin.labels`, or a file of that
name beside the set), else the distinct values of its rows. YokaiEval's classes
(:data:`~wikiorigin.schemas.MCQ_TYPES`, :data:`~wikiorigin.schemas.MCQ_REGIONS`) are added
only for a YokaiEval set: built with the ``yokai-ja`` labels, or with no labels named and
YokaiEval's types in its rows (the released rows). Regions from Wikidata (the ``origin``
preset) are the rows' own.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import WikioriginError

__all__ = ["mcq_classes", "find_labels"]

_YOKAI = "yokai-ja"


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


def _distinct(rows: list[dict], column: str) -> list[str]:
    return sorted({str(r[column]) for r in rows if r.get(column) not in (None, "")})


def mcq_classes(path: Path, rows: list[dict], provenance: dict) -> dict:
    """``{"types": [...], "regions": [...], "yokai": bool, "labels": name or None}``: the
    classes a multiple-choice set at ``path`` offers (see the module's docstring)."""
    from ..schemas import MCQ_REGIONS, MCQ_TYPES

    name = provenance.get("labels")
    labels = find_labels(name, provenance.get("labels_sha1"), path.parent)
    yokai = name == _YOKAI or (not name and any(r.get("type") in MCQ_TYPES for r in rows))
    types = labels.type_names if labels else _distinct(rows, "type")
    regions = labels.region_names if labels and labels.region_names else _distinct(rows, "region")
    if yokai:  # the released rows' regions are messy labels: the page offers their class
        types = MCQ_TYPES + [t for t in types if t not in MCQ_TYPES]
        regions = list(MCQ_REGIONS)
    return {"types": types, "regions": regions, "yokai": yokai, "labels": labels.name if labels else name}
