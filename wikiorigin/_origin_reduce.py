"""The reduction of the origins stage (:mod:`wikiorigin.origin`): every wiki's ``editions`` shard
into the ``origins`` file with DuckDB (embedded, with a memory limit), whole item groups
assembled by Arrow (:func:`reduce_origins`). Editions are ordered by creation time, then by
dbname: a tie (same second) is resolved deterministically, and flagged in ``tied``.
"""

from __future__ import annotations

import shutil
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .errors import WikioriginError
from .files import ParquetSink, provenance
from .leftovers import spill_prefix, sweep
from .schemas import EDITION, ORIGINS, TIMESTAMP

__all__ = ["reduce_origins", "OriginStats", "ORIGINS_SQL"]

# Every edition of every item, in the order of the output: by item, then time, then dbname.
ORIGINS_SQL = """
SELECT CAST(substr(qid, 2) AS BIGINT) AS item, qid, wiki, page_id, title, created_at
FROM read_parquet({editions})
ORDER BY item, created_at, wiki
"""
"""The DuckDB query that lists every edition of every item in the order of the output: by
item, then creation time, then dbname (``{editions}`` is the list of edition files)."""


def _assemble(rows: pa.Table) -> pa.RecordBatch:
    """``origins`` rows from whole groups of sorted editions (one group per item).

    Everything is a column operation: group starts from where the item changes, the
    editions list from those offsets, the origin and runner-up by ``take``."""
    item = rows.column("item").to_numpy()
    starts = np.flatnonzero(np.r_[True, item[1:] != item[:-1]])
    sizes = np.diff(np.r_[starts, len(item)])
    offsets = pa.array(np.r_[starts, len(item)].astype(np.int32))
    column = lambda name, type_: rows.column(name).combine_chunks().cast(type_)  # noqa: E731
    wiki, title = column("wiki", pa.string()), column("title", pa.string())
    created = column("created_at", TIMESTAMP)
    editions = pa.ListArray.from_arrays(
        offsets, pa.StructArray.from_arrays([wiki, column("page_id", pa.int64()), title, created], fields=list(EDITION))
    )
    first = pa.array(starts)
    second = pa.array(np.where(sizes > 1, starts + 1, 0), mask=sizes < 2)
    origin_at, runner_at = created.take(first), created.take(second)
    origin_ms = origin_at.cast(pa.int64()).to_numpy()
    runner_ms = runner_at.cast(pa.int64()).to_numpy(zero_copy_only=False)
    lead = pa.array((runner_ms - origin_ms) / 86_400_000.0, mask=sizes < 2)
    is_en = pc.equal(wiki, "enwiki").to_numpy(zero_copy_only=False).astype(np.int32)
    return pa.RecordBatch.from_arrays(
        [
            column("qid", pa.string()).take(first),
            wiki.take(first),
            origin_at,
            title.take(first),
            pa.array(sizes.astype(np.int32)),
            pa.array(np.add.reduceat(is_en, starts) > 0),
            wiki.take(second),
            runner_at,
            lead,
            pa.array((sizes > 1) & (np.nan_to_num(runner_ms - origin_ms, nan=1) == 0)),
            editions,
        ],
        schema=ORIGINS,
    )


def _groups(reader):
    """Tables of whole item groups from a stream of sorted rows (a group may span batches)."""
    carry = None
    for batch in reader:
        table = pa.Table.from_batches([batch])
        if carry is not None:
            table = pa.concat_tables([carry, table])
        if table.num_rows == 0:
            continue
        item = table.column("item")
        last = item[-1].as_py()
        cut = table.num_rows - (pc.sum(pc.equal(item, last)).as_py() or 0)
        if cut == 0:  # one item so far (at most one row per edition): read on
            carry = table
            continue
        yield table.slice(0, cut)
        carry = table.slice(cut)
    if carry is not None and carry.num_rows:
        yield carry


@dataclass(slots=True)
class OriginStats:
    """What :func:`reduce_origins` found: items with an origin, items whose first editions tie,
    wikis read, the time taken and notes."""

    items: int = 0
    tied: int = 0
    wikis: int = 0
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)


def _sql_list(paths: list[Path]) -> str:
    return "[" + ", ".join("'" + str(p).replace("'", "''") + "'" for p in paths) + "]"


def reduce_origins(
    editions: list[Path],
    out,
    *,
    memory_limit: str = "4GB",
    threads: int | None = None,
    meta: dict | None = None,
    batch_rows: int = 1_000_000,
) -> OriginStats:
    """Reduce per-wiki ``editions`` shards (see :func:`join_editions`) to the ``origins``
    file ``out``: DuckDB sorts every edition by item, time and dbname; Arrow assembles."""
    if not editions:
        raise WikioriginError("reduce_origins: no editions shards to reduce")
    stats = OriginStats(wikis=len(editions))
    sql = ORIGINS_SQL.format(editions=_sql_list(editions))
    sweep(Path(out).parent, outputs=())  # the spill folders of runs killed outright, nothing else
    spill = tempfile.mkdtemp(prefix=spill_prefix(), dir=Path(out).parent)
    con = duckdb.connect(
        config={"memory_limit": memory_limit, "temp_directory": spill, "preserve_insertion_order": True}
    )
    try:
        if threads:
            con.execute(f"SET threads = {int(threads)}")
        with _interruptible():
            reader = con.sql(sql).to_arrow_reader(batch_rows)
            with ParquetSink(out, ORIGINS, meta or provenance(stage="origins")) as sink:
                for rows in _groups(reader):
                    batch = _assemble(rows)
                    sink.write(batch)
                    stats.items += batch.num_rows
                    stats.tied += pc.sum(batch.column("tied")).as_py() or 0
    finally:
        con.close()
        shutil.rmtree(spill, ignore_errors=True)
    return stats


@contextmanager
def _interruptible():
    """DuckDB stopped by a signal (Ctrl-C, or SIGTERM handled as one) is an interrupt, not an
    error: DuckDB takes the ``KeyboardInterrupt`` that Python raised and raises ``Query
    interrupted`` (a ``RuntimeError``, or its ``InterruptException``) in its place."""
    try:
        yield
    except duckdb.InterruptException as exc:
        raise KeyboardInterrupt from exc
    except RuntimeError as exc:
        if str(exc).startswith("Query interrupted"):
            raise KeyboardInterrupt from exc
        raise
