"""Multiple-choice sets in the ``mcq`` schema, as ``wikiorigin build mcq`` writes them."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from ..schemas import MCQ, MCQ_REGIONS, MCQ_TYPES

__all__ = ["mcq_row", "write_mcq"]


def mcq_row(page_id: int, question: str, choices: list[str], answer_index: int, **fields) -> dict:
    """One question of a set: ``choices[answer_index]`` the answer, from page ``page_id``; the
    other columns a plain default (id ``q<page_id>``, a jawiki article in Japanese, one
    footnote), each replaced by ``fields`` where given."""
    row = {
        "id": f"q{page_id}",
        "question": question,
        "choices": choices,
        "answer": choices[answer_index],
        "answer_index": answer_index,
        "type": MCQ_TYPES[0],
        "region": MCQ_REGIONS[0],
        "ref": [1],
        "refs_detail": ["文献"],
        "url": None,
        "title": None,
        "qid": None,
        "wiki": "jawiki",
        "page_id": page_id,
        "language": "ja",
        "generator": "g",
        "checker": "c",
        "prompt_sha1": "x",
        "source_revision_id": 1,
    }
    unknown = set(fields) - set(row)
    if unknown:
        raise TypeError(f"mcq_row: no column {', '.join(sorted(unknown))} in the mcq schema")
    return {**row, **fields}


def write_mcq(path, rows: list[dict]) -> Path:
    """Write the rows (:func:`mcq_row`) to ``path`` as a set in the ``mcq`` schema."""
    pq.write_table(pa.Table.from_pylist(rows, schema=MCQ), path)
    return Path(path)
