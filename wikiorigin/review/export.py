"""The reviewed dataset: the accepted items, with their edits, in the input's schema plus the
review columns (:data:`wikiorigin.schemas.REVIEW`).

Which items count as accepted is a policy over the annotators' decisions in force on the
item's current content (stale and skipped decisions do not count; an item nobody decided is
left out): ``all-accept`` (at least one accept, no reject), ``majority`` (more accepts than
rejects) or ``any-accept`` (at least one accept).

An accept counts only for the content accepted: the item as it is, or as the accept's edits
make it. When accepts differ in their edits, the versions compete (:func:`winner`): under
``all-accept`` that is a conflict; under ``majority`` a version wins when its accepts outnumber
all the other decisions (rejects and the other versions' accepts) together; under
``any-accept`` the version with strictly the most accepts wins. Otherwise the item is a
*conflict*: left out, counted and listed. The output's provenance records the policy, the
database and the counts, and keeps the input's own provenance under ``source``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ParameterError, WikioriginError
from .items import EDITABLE, Dataset, cited_numbers, load_dataset
from .stats import review_stats
from .store import Decision, edits_key, open_existing, status

__all__ = [
    "POLICIES",
    "ExportReport",
    "accepted_by",
    "versions",
    "winner",
    "apply_edits",
    "check_edits",
    "export_reviewed",
]

POLICIES = ("all-accept", "majority", "any-accept")
"""How the annotators' decisions on an item make it accepted (see the module's docstring)."""


@dataclass(slots=True)
class ExportReport:
    """What :func:`export_reviewed` did: rows written and the items by outcome."""

    out: Path
    policy: str
    items: int
    exported: int
    rejected: int
    undecided: int
    stale: int
    edited: int
    conflicts: list[str] = field(default_factory=list)  # keys of items whose accepts differ in edits
    orphaned: int = 0  # decided items the file no longer has (removed, or an id-less row changed)

    def why_empty(self) -> str | None:
        """None when an item was accepted; else one line of why none was (a reviewed set of no
        items is a failed run, as a build of no rows is)."""
        if self.exported:
            return None
        return (
            f"0 of {self.items} items accepted ({self.policy}): {self.rejected} rejected, {self.undecided} "
            f"undecided, {len(self.conflicts)} with conflicting edits, {self.stale} with a stale decision"
        )


def accepted_by(decisions: list[Decision], policy: str) -> bool:
    """Whether the current decisions (accepts and rejects) on one item accept it under ``policy``."""
    accepts = sum(d.decision == "accept" for d in decisions)
    rejects = sum(d.decision == "reject" for d in decisions)
    if policy == "all-accept":
        return accepts > 0 and rejects == 0
    if policy == "majority":
        return accepts > rejects
    if policy == "any-accept":
        return accepts > 0
    raise WikioriginError(f"policy {policy!r}: expected one of {', '.join(POLICIES)}")


def versions(decisions: list[Decision]) -> dict[str, list[Decision]]:
    """The accepts among ``decisions`` by the content they accept: canonical JSON of their
    edits (``"null"``: the item as it is) -> the accepts."""
    out: dict[str, list[Decision]] = {}
    for d in decisions:
        if d.decision == "accept":
            out.setdefault(edits_key(d.edits), []).append(d)
    return out


def winner(decisions: list[Decision], policy: str) -> tuple[str, list[Decision]]:
    """The outcome of an item's current accepts and rejects under ``policy``: ``("accepted",
    the accepts of the winning version)``, ``("rejected", [])`` or ``("conflict", [])`` when
    the accepts differ in their edits and no version wins (see the module's docstring)."""
    if not accepted_by(decisions, policy):
        return "rejected", []
    groups = sorted(versions(decisions).values(), key=len, reverse=True)
    if len(groups) == 1:
        return "accepted", groups[0]
    others = len(decisions) - len(groups[0])  # rejects and the other versions' accepts
    if policy == "majority" and len(groups[0]) > others:
        return "accepted", groups[0]
    if policy == "any-accept" and len(groups[0]) > len(groups[1]):
        return "accepted", groups[0]
    return "conflict", []


def _check_ref(value, where: str, footnotes) -> list[int]:
    """An edit of the footnotes an item cites: footnote numbers (whole numbers > 0, each once,
    one or more), all among ``footnotes`` (the article's) when given; returned in order."""
    if not isinstance(value, list) or not value:
        raise WikioriginError(
            f"{where}: ref must be a list of one footnote number or more (reject the item if no footnote backs it)"
        )
    bad = [v for v in value if isinstance(v, bool) or not isinstance(v, int) or v < 1]
    if bad:
        raise WikioriginError(
            f"{where}: ref must be footnote numbers (whole numbers > 0), not {', '.join(repr(v) for v in bad)}"
        )
    if len(set(value)) != len(value):
        raise WikioriginError(f"{where}: ref names a footnote twice")
    missing = [n for n in value if footnotes is not None and n not in footnotes]
    if missing:
        has = ", ".join(str(n) for n in sorted(footnotes)) or "none"
        raise WikioriginError(
            f"{where}: ref: the article has no footnote {', '.join(map(str, missing))} (its footnotes: {has})"
        )
    return sorted(value)


def check_edits(kind: str, edits: dict, where: str = "edits", classes: dict | None = None, footnotes=None) -> dict:
    """Edits of one item, checked: only the kind's editable fields (:data:`EDITABLE`), with
    values of the right shape, a type and a region among the set's ``classes`` (``types``,
    ``regions``: :func:`~wikiorigin.review.classes.mcq_classes`; required to edit them; with
    ``several_regions``, one region or more joined by ``", "``, put in the classes' order), a
    ``ref`` of footnote numbers among ``footnotes`` (the article's, when it is known:
    :func:`~wikiorigin.review.items.footnote_numbers`); returns them (``ref`` in ascending
    order). A bad edit is a one-line error."""
    unknown = sorted(set(edits) - set(EDITABLE[kind]))
    if unknown:
        raise WikioriginError(f"{where}: {', '.join(unknown)} cannot be edited in a {kind} item")
    if "ref" in edits:
        edits = {**edits, "ref": _check_ref(edits["ref"], where, footnotes)}
    for name, value in edits.items():
        if name == "ref":
            continue
        if name in ("choices", "answers"):
            if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value) or not value:
                raise WikioriginError(f"{where}: {name} must be a list of non-empty texts")
            if len({v.strip() for v in value}) != len(value):
                raise WikioriginError(f"{where}: two of the {name} are the same")
        elif name == "answer_index":
            if isinstance(value, bool) or not isinstance(value, int):
                raise WikioriginError(f"{where}: answer_index must be a number")
        elif not isinstance(value, str) or (name in ("question", "prompt", "chosen", "rejected") and not value.strip()):
            raise WikioriginError(f"{where}: {name} must be a non-empty text")
    if kind == "mcq":
        choices = edits.get("choices")
        if choices is not None and len(choices) < 2:
            raise WikioriginError(f"{where}: a question needs two or more choices")
        if "answer_index" in edits and choices is not None and not 0 <= edits["answer_index"] < len(choices):
            raise WikioriginError(f"{where}: answer_index {edits['answer_index']} is not one of the choices")
        if classes is None and (edits.get("type") or edits.get("region")):
            raise WikioriginError(f"{where}: a type or region edit is checked against the set's classes (classes=)")
        for name, allowed in (
            ("type", (classes or {}).get("types", [])),
            ("region", (classes or {}).get("regions", [])),
        ):
            if name == "region" and edits.get(name) and (classes or {}).get("several_regions"):
                edits = {**edits, "region": _several(edits["region"], allowed, where)}
            elif edits.get(name) and edits[name] not in allowed:
                raise WikioriginError(
                    f"{where}: {name} {edits[name]!r} is not one of this set's: {', '.join(allowed) or '(none)'}"
                )
    return edits


def _several(value: str, allowed: list[str], where: str) -> str:
    """A region edit of a set whose rows may name several regions: one class or more, each once,
    joined in the classes' order (:func:`~wikiorigin.labels.join_regions`)."""
    from ..labels import REGION_SEPARATOR, join_regions, split_regions

    parts = split_regions(value)
    unknown = [p for p in parts if p not in allowed]
    if unknown:
        raise WikioriginError(
            f"{where}: region {unknown[0]!r} is not one of this set's: {', '.join(allowed) or '(none)'} "
            f"(several are joined by {REGION_SEPARATOR!r})"
        )
    if len(set(parts)) != len(parts):
        raise WikioriginError(f"{where}: region {value!r} names a region twice")
    return join_regions(parts, allowed)


def _answer_index(row: dict) -> int:
    index = row.get("answer_index")
    if isinstance(index, int) and not isinstance(index, bool):
        return index
    return row["choices"].index(row["answer"]) if row.get("answer") in row["choices"] else 0


def _refs(row: dict, numbers: list[int]) -> dict:
    """The fields of ``row`` that an edit of its footnotes to ``numbers`` changes: ``ref`` in the
    row's own form (a list, or the released rows' text ``"[1][3]"``) and, where the row has
    them, ``refs_detail``: the text of each number it cited before (matched by position when
    the row has one text per number), None for the others (the export reads no articles)."""
    out: dict[str, object] = {
        "ref": list(numbers) if not isinstance(row.get("ref"), str) else "".join(f"[{n}]" for n in numbers)
    }
    details = row.get("refs_detail")
    if details is not None:
        before = cited_numbers(row.get("ref"))
        texts = dict(zip(before, details)) if len(before) == len(details) else {}
        out["refs_detail"] = [texts.get(n) for n in numbers]
    return out


def apply_edits(kind: str, row: dict, edits: dict | None) -> tuple[dict, list[str]]:
    """A row with edits applied, and the names of the fields they changed. For multiple choice
    ``answer`` follows ``choices[answer_index]`` (and ``answer_index`` is kept only where the
    row has one), and ``ref`` keeps the row's form, ``refs_detail`` following it."""
    if not edits:
        return dict(row), []
    new = dict(row)
    if kind == "mcq":
        choices = edits.get("choices", row["choices"])
        index = edits.get("answer_index", _answer_index(row))
        if not 0 <= index < len(choices):
            raise WikioriginError(f"answer_index {index} is not one of the {len(choices)} choices")
        new.update({k: v for k, v in edits.items() if k not in ("answer_index", "ref")})
        if "ref" in edits:
            new.update(_refs(row, edits["ref"]))
        new["answer"] = choices[index]
        if "answer_index" in row:
            new["answer_index"] = index
    else:
        new.update(edits)
    changed = sorted(k for k in set(new) | set(row) if new.get(k) != row.get(k))
    return new, changed


def _outcomes(dataset: Dataset, current: dict, policy: str) -> tuple[list, dict]:
    """The accepted items as (item, their decisions in force on its content, the accepts of
    the version exported), and the other items counted: rejected, undecided, stale (some
    decision is), and the keys of the conflicts; ``current`` is the store's state
    (:meth:`~wikiorigin.review.store.ReviewStore.current`)."""
    by_item: dict[str, list[Decision]] = {}
    for (key, _), d in current.items():
        by_item.setdefault(key, []).append(d)
    counts: dict = {"rejected": 0, "undecided": 0, "stale": 0, "conflicts": []}
    accepted: list[tuple] = []
    for item in dataset.items:
        states = [(status(d, item.sha1), d) for d in by_item.get(item.key, [])]
        counts["stale"] += any(s == "stale" for s, _ in states)
        valid = [d for s, d in states if s in ("accepted", "rejected")]
        outcome, accepts = winner(valid, policy) if valid else ("undecided", [])
        if outcome == "accepted":
            accepted.append((item, valid, accepts))
        elif outcome == "conflict":
            counts["conflicts"].append(item.key)
        else:
            counts[outcome] += 1
    return accepted, counts


def _exported(kind: str, item, decisions: list, accepts: list) -> dict:
    """An accepted item's row as exported: the first accept's edits applied, the review's columns."""
    row, changed = apply_edits(kind, item.row, accepts[0].edits)
    return {
        **row,
        "review_decision": "accept",
        "review_annotators": sorted({d.annotator for d in decisions}),
        "review_accepts": len(accepts),
        "review_rejects": sum(d.decision == "reject" for d in decisions),
        "review_edited": changed,
    }


# What a reviewed set says as its source did: its build, and whether that was complete.
_CARRIED = (
    "language",
    "generator",
    "checker",
    "prompt_sha1",
    "builder",
    "license",
    "complete",
    "failed_requests",
    "requests",
)


def _source(dataset: Dataset) -> dict:
    """What an export says of the set it came from: a built set's provenance; for released
    rows (JSON, no provenance) the file's name, the rows' language (their own, else that of
    their articles' wiki) and the license of the culture whose released rows they are
    (:func:`wikiorigin.presets.released`)."""
    from .. import files

    if dataset.schema is not None:
        return files.read_provenance(dataset.path)
    if dataset.kind != "mcq":
        return {}
    from ..evaluators.questions import url_language
    from ..presets import released

    found = {i.row.get("language") or url_language(i.row.get("url")) for i in dataset.items} - {None}
    language = found.pop() if len(found) == 1 else None
    culture = released(language)
    source = {"language": language} if language else {}
    if culture is not None and culture.released_license:
        source["license"] = culture.released_license
    return {**source, "released": str(dataset.path.name)}


def export_reviewed(dataset_path, db, out, policy: str = "all-accept") -> ExportReport:
    """Write the items of ``dataset_path`` that the review in ``db`` accepts under ``policy``
    to ``out`` (Parquet, atomic), edits applied, with the review columns and provenance."""
    import pyarrow as pa

    from .. import files
    from ..schemas import REVIEW

    if policy not in POLICIES:
        raise ParameterError("policy", f"{{policy}}: expected one of {', '.join(POLICIES)}", policy)
    dataset = load_dataset(dataset_path)
    out = files.check_output(out, inputs=[dataset_path, db, f"{db}-wal", f"{db}-shm"])  # a .parquet name too
    store = open_existing(db, dataset.path.name, dataset.kind, list(dataset.by_key), dataset.keyed_by)
    current = store.current()
    accepted, counts = _outcomes(dataset, current, policy)
    rows = [_exported(dataset.kind, item, decisions, accepts) for item, decisions, accepts in accepted]
    edited = sum(bool(row["review_edited"]) for row in rows)
    base = dataset.schema if dataset.schema is not None else pa.Table.from_pylist([i.row for i in dataset.items]).schema
    assert isinstance(base, pa.Schema)
    schema = pa.schema([f for f in base if f.name not in REVIEW.names] + list(REVIEW))
    source = _source(dataset)
    review = {
        "policy": policy,
        "db": str(db),
        "annotators": store.annotators(),
        "items": len(dataset.items),
        "exported": len(rows),
        "edited": edited,
        **counts,
        "conflicts": len(counts["conflicts"]),
        "conflicting": counts["conflicts"],
        "orphaned": len({d.item for d in current.values()} - set(dataset.by_key)),
        "agreement": review_stats(store)["agreement"],  # the card's and croissant.json's
    }
    meta = files.provenance(
        stage="review export",
        input=str(dataset.path),
        kind=dataset.kind,
        review=review,
        source=source,
        **{k: source[k] for k in _CARRIED if k in source},  # an incomplete build stays said so
    )
    store.close()
    files.write_table(pa.Table.from_pylist(rows, schema=schema), out, schema, meta)
    return ExportReport(
        out,
        policy,
        len(dataset.items),
        len(rows),
        counts["rejected"],
        counts["undecided"],
        counts["stale"],
        edited,
        counts["conflicts"],
        review["orphaned"],
    )
