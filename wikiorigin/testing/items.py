"""Items files in the ``origins`` schema, as ``wikiorigin subset`` writes them."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timezone
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from ..schemas import ORIGINS

__all__ = ["write_items"]

_WHEN = datetime(2003, 1, 1, tzinfo=timezone.utc)


def write_items(path, rows: Iterable[tuple[str, str, int, str]]) -> Path:
    """Write ``path``: an item for each ``(qid, origin wiki, page id, title)``, originating in
    that wiki with that page as its edition there, created on 2003-01-01, found in two wikis
    (English the runner-up, a day later). Returns the path."""
    table = pa.Table.from_pylist(
        [
            {
                "qid": qid,
                "origin_wiki": wiki,
                "origin_created_at": _WHEN,
                "origin_title": title,
                "n_wikis": 2,
                "has_enwiki": True,
                "runner_up_wiki": "enwiki",
                "runner_up_created_at": _WHEN,
                "lead_days": 1.0,
                "tied": False,
                "editions": [{"wiki": wiki, "page_id": page_id, "title": title, "created_at": _WHEN}],
            }
            for qid, wiki, page_id, title in rows
        ],
        schema=ORIGINS,
    )
    pq.write_table(table, path)
    return Path(path)
