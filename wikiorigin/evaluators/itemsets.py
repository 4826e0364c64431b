"""Which items a run answered, and whether two runs ran on the same ones.

Every item has a key: its id (a judged answer's question where items carry no id) and a hash of
its content as ``items.parquet`` holds it: a question's text and correct option, a CARE answer's
reference, a free-form item's Wikidata item and wiki, an article's title. Two runs are on the
same items when their keys agree as sets (order aside): two files whose ids collide but whose
questions differ are different sets (:func:`~wikiorigin.evaluators.compared.check_same_runs` refuses
to compare them). The :func:`fingerprint` of the keys is recorded in every
run's ``summary.json`` (``item_set``); :func:`run_keys` reads the keys back from a run's
``items.parquet`` (runs written before fingerprints were recorded included).

An item whose request failed after its retries (:func:`failed_item`) is in the set but has no
answer: :mod:`~wikiorigin.evaluators.report`'s comparison leaves it out of the pairs.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

__all__ = [
    "item_key",
    "fingerprint",
    "item_set",
    "run_keys",
    "failed_item",
    "unanswered",
    "check_complete",
    "CONTENT",
    "KEYED",
]

CONTENT = (
    ("answer_index", ("question", "answer_index")),  # multiple choice
    ("reference", ("question", "reference")),  # CARE answers rated by a judge
    ("qid", ("qid", "language")),  # free-form: the Wikidata item names the thing asked about
    ("title", ("title",)),  # leakage: one article each
)
"""For each kind of item (told by the first of these columns it has): the columns whose values
are its content. A free-form item's question is the prompt it was asked in, so the content is
its Wikidata item and wiki: runs in English and in the item's language are on the same items."""


def _content(row: dict) -> list:
    for marker, columns in CONTENT:
        if marker in row:
            return [row.get(c) for c in columns]
    return [row.get("question")]


def _plain(value):
    return value.item() if hasattr(value, "item") else str(value)  # a numpy scalar as Python's


def item_key(row: dict) -> str:
    """The key of one item (a dict, as a task's items or a row of ``items.parquet``): its id
    (or, without one, its question, NFC and stripped) and a hash of its content (:data:`CONTENT`)."""
    from ..care import question_key

    ident = row.get("id")
    if ident is None:
        ident = question_key(row.get("question") or "")
    content = json.dumps(_content(row), ensure_ascii=False, default=_plain)
    return f"{ident}\x00{hashlib.sha1(content.encode('utf-8')).hexdigest()[:12]}"


def fingerprint(keys) -> str:
    """The first 16 hex digits of the SHA-1 of the sorted ``keys``: the same items in any order
    give the same fingerprint."""
    text = "\n".join(sorted(keys))
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


def item_set(items: list[dict]) -> dict:
    """``{"n": ..., "fingerprint": ...}`` of a run's items, as ``summary.json`` records it."""
    keys = [item_key(i) for i in items]
    return {"n": len(keys), "fingerprint": fingerprint(keys)}


def failed_item(row: dict) -> bool:
    """Whether an item's request failed after its retries (no answer to score): a multiple-choice
    item read as ``failed``, a free-form item marked ``failed``, a judged answer whose model or
    judge request failed (no response; unrated as ``judge failed``)."""
    if row.get("read_as") == "failed" or row.get("failed") is True:
        return True
    if "unrated" not in row:
        return False
    return row.get("response") is None or str(row.get("unrated") or "").startswith("judge failed")


def run_keys(run) -> list[str] | None:
    """The item keys of the run directory ``run``, from its ``items.parquet`` (None when it has
    none, or no columns to key its items by)."""
    import pyarrow.parquet as pq

    path = Path(run) / "items.parquet"
    if not path.exists():
        return None
    names = set(pq.read_schema(path).names)
    wanted = {"id", "question"} | {c for _, columns in CONTENT for c in columns} | {m for m, _ in CONTENT}
    if not names & {"id", "question", "title"}:
        return None
    rows = pq.read_table(path, columns=sorted(names & wanted)).to_pylist()
    return [item_key(r) for r in rows]


def say_if_incomplete(source) -> bool:
    """Warn (the ``wikiorigin`` logger) when the set in ``source`` was built incomplete (its
    provenance says ``complete: false``: requests failed and the build was accepted as it
    was): its figures are over the questions it holds, not the set it was meant to be.
    Returns whether it was."""
    from .._inputs import built_incomplete
    from ..log import logger

    built = built_incomplete(source)
    if not built:
        return False
    failed = built["failed_requests"]
    logger.warning(
        f"{source}: a set built incomplete (complete: false{f', {failed} failed' if failed else ''}): "
        "the figures are over the questions it holds; finish its build for the whole set"
    )
    return True


def check_once(rows: list[dict], source) -> None:
    """Refuse (:class:`~wikiorigin.errors.WikioriginError`, naming ``source`` and both rows) a
    question given twice (the same id and content, :func:`item_key`): it would count twice in
    every figure, and a comparison could not pair it."""
    from .._inputs import first_repeat
    from ..errors import WikioriginError

    if repeat := first_repeat(item_key(item) for item in rows):
        raise WikioriginError(
            f"{source}: row {repeat[0]} repeats row {repeat[1]} (the same id and question): give each question once"
        )


KEYED = frozenset({"id", "question", "read_as", "failed", "unrated", "response"} | {c for _, cs in CONTENT for c in cs})
"""The columns of ``items.parquet`` that key an item and say whether its request failed."""


def unanswered(summary: dict) -> int:
    """How many requests of a run failed (0 for a complete run): its ``failed_requests``, or for
    a run written before runs said ``complete``, the ``failed`` its summary counts."""
    if summary.get("complete") is True:
        return 0
    return int(summary.get("failed_requests") or summary.get("failed") or 0)


def check_complete(runs: list[str], summaries: list[dict], models: list[str], *, allow_failures: bool) -> list[str]:
    """Refuse the first incomplete run (:class:`~wikiorigin.errors.ParameterError`: the run and
    its failed count) unless ``allow_failures``; then one note per incomplete run saying what
    is left out of its pairs."""
    from ..errors import ParameterError

    notes = []
    for run, summary, model in zip(runs, summaries, models):
        failed = unanswered(summary)
        if not failed:
            continue
        if not allow_failures:
            raise ParameterError(
                "allow_failures",
                f"{run}: an incomplete run (complete: false, {failed} requests failed): run its command "
                "again to finish it, or give {allow_failures} to compare only the items answered",
            )
        left = summary.get("failed") or 0
        notes.append(
            f"{model}: incomplete run ({failed} requests failed): its {left} items without an answer "
            f"are left out of its figure and its pairs"
        )
    return notes
