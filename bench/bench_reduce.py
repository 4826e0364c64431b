"""Origins reduction: 50 M synthetic (qid, wiki, created_at) rows over 300 wikis.

Prints the time and peak RSS of `reduce_origins` (DuckDB) for 5 M and 50 M rows (anchor:
50 M in <= 90 s with peak RSS <= 6 GB, and the cost growing linearly), and a plain pandas
groupby baseline on the same 5 M rows as a ratio. Rows: WIKIORIGIN_BENCH_REDUCE_M (default 50).
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from common import OUT, PY, peak_rss_mb
from wikiorigin.schemas import PAGES, QIDS

WIKIS = 300
BIG = int(os.environ.get("WIKIORIGIN_BENCH_REDUCE_M", "50")) * 1_000_000


def make_shards(rows: int, directory) -> tuple[list, list]:
    """Per-wiki pages and qids shards: rows spread over wikis by a power law (a few large
    editions, many small), items drawn so that they recur in several editions."""
    directory.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(1)
    weights = 1 / np.arange(1, WIKIS + 1) ** 0.8
    per_wiki = np.maximum(1, (weights / weights.sum() * rows).astype(np.int64))
    n_items = rows // 3
    pages, qids = [], []
    for w, n in enumerate(per_wiki):
        wiki = f"w{w:03d}wiki"
        p, q = directory / f"pages-{wiki}.parquet", directory / f"qids-{wiki}.parquet"
        pages.append(p)
        qids.append(q)
        if p.exists() and q.exists():
            continue
        ids = np.arange(1, n + 1, dtype=np.int64)
        items = rng.choice(n_items, size=n, replace=False) if n <= n_items else rng.integers(0, n_items, n)
        created = rng.integers(978_307_200_000, 1_767_225_600_000, n, dtype=np.int64)
        created = created - created % 1000
        wikis = pa.array(np.full(n, wiki))
        table = pa.table([
            wikis, pa.array(ids), pa.array(np.zeros(n, np.int32)),
            pa.array(np.char.add("T", ids.astype(str))), pa.array(np.zeros(n, bool)),
            pa.array(created, pa.timestamp("ms", tz="UTC")), pa.array(created, pa.timestamp("ms", tz="UTC")),
            pa.array(ids), pa.array(np.ones(n, np.int32)), pa.array(np.zeros(n, np.int32)),
        ], schema=PAGES)
        pq.write_table(table, p)
        pq.write_table(pa.table([wikis, pa.array(ids), pa.array(np.char.add("Q", (items + 1).astype(str)))],
                                schema=QIDS), q)
    return pages, qids


REDUCE = """
import sys, time, json
from pathlib import Path
from wikiorigin.origin import reduce_origins
d = Path(sys.argv[1])
pages = sorted(d.glob("pages-*.parquet")); qids = sorted(d.glob("qids-*.parquet"))
t = time.perf_counter()
stats = reduce_origins(pages, qids, d / "origins.parquet", memory_limit="4GB")
print(json.dumps({"seconds": time.perf_counter() - t, "items": stats.items}))
"""


def run_reduce(directory) -> tuple[float, int, float]:
    import json
    import subprocess

    script = directory / "reduce.py"
    script.write_text(REDUCE)
    out_file = directory / "result.json"
    rss = peak_rss_mb(["bash", "-c", f"{PY} {script} {directory} > {out_file}"])
    result = json.loads(out_file.read_text())
    return result["seconds"], result["items"], rss


def pandas_baseline(pages, qids) -> float:
    import pandas as pd

    started = time.perf_counter()
    frame = pd.concat([
        pd.read_parquet(p, columns=["wiki", "page_id", "created_at"]).merge(
            pd.read_parquet(q, columns=["wiki", "page_id", "qid"]), on=["wiki", "page_id"])
        for p, q in zip(pages, qids)
    ], ignore_index=True)
    first = frame.loc[frame.groupby("qid")["created_at"].idxmin()]
    counts = frame.groupby("qid").size()
    assert len(first) == len(counts)
    return time.perf_counter() - started


def main() -> None:
    print(f"bench_reduce: origins reduction over {WIKIS} wikis")
    results = {}
    for rows in (BIG // 10, BIG):
        directory = OUT / f"reduce-{rows // 1_000_000}M"
        started = time.perf_counter()
        pages, qids = make_shards(rows, directory)
        made = time.perf_counter() - started
        seconds, items, rss = run_reduce(directory)
        results[rows] = seconds
        print(f"  {rows / 1e6:,.0f} M rows ({items:,} items; shards made in {made:.0f} s): "
              f"{seconds:,.1f} s, peak RSS {rss / 1024:,.2f} GB")
    small, big = BIG // 10, BIG
    print(f"{'reduce 50 M rows, seconds':<44} {results[big]:7.1f} (anchor <= 90 s)")
    print(f"{'growth 50 M / 5 M (linear = 10)':<44} {results[big] / results[small]:7.1f}")
    pages, qids = make_shards(small, OUT / f"reduce-{small // 1_000_000}M")
    baseline = pandas_baseline(pages, qids)
    print(f"  pandas groupby baseline, 5 M rows: {baseline:,.1f} s (origin only, no editions lists)")
    print(f"{'reduce / pandas baseline, 5 M rows':<44} {baseline / results[small]:7.2f} (speed ratio)")


if __name__ == "__main__":
    sys.exit(main())
