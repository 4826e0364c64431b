"""Origins reduction: 50 M synthetic (qid, wiki, created_at) rows over 300 wikis.

Prints the time and peak RSS of `reduce_origins` (DuckDB) for 5 M and 50 M rows (anchor:
50 M in <= 90 s with peak RSS <= 6 GB, and the cost growing linearly), and a plain pandas
groupby baseline on the same 5 M rows as a ratio. Rows: WIKIORIGIN_BENCH_REDUCE_M (default 50;
--quick: 0.5).
"""

from __future__ import annotations

import sys
import time

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from common import OUT, PY, peak_rss_mb, size, write_results
from wikiorigin.schemas import EDITIONS

WIKIS = 300
BIG = size(50_000_000, 500_000, "WIKIORIGIN_BENCH_REDUCE_M", 1_000_000)


def make_shards(rows: int, directory) -> list:
    """Per-wiki editions shards: rows spread over wikis by a power law (a few large editions,
    many small), items drawn so that they recur in several editions."""
    directory.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(1)
    weights = 1 / np.arange(1, WIKIS + 1) ** 0.8
    per_wiki = np.maximum(1, (weights / weights.sum() * rows).astype(np.int64))
    n_items = rows // 3
    shards = []
    for w, n in enumerate(per_wiki):
        wiki = f"w{w:03d}wiki"
        path = directory / f"editions-{wiki}.parquet"
        shards.append(path)
        if path.exists():
            continue
        ids = np.arange(1, n + 1, dtype=np.int64)
        items = rng.choice(n_items, size=n, replace=False) if n <= n_items else rng.integers(0, n_items, n)
        created = rng.integers(978_307_200, 1_767_225_600, n, dtype=np.int64) * 1000
        table = pa.table(
            [
                pa.array(np.full(n, wiki)),
                pa.array(np.char.add("Q", (items + 1).astype(str))),
                pa.array(ids),
                pa.array(np.char.add("T", ids.astype(str))),
                pa.array(created, pa.timestamp("ms", tz="UTC")),
            ],
            schema=EDITIONS,
        )
        pq.write_table(table, path)
    return shards


REDUCE = """
import sys, time, json
from pathlib import Path
from wikiorigin.origin import reduce_origins
d = Path(sys.argv[1])
editions = sorted(d.glob("editions-*.parquet"))
t = time.perf_counter()
stats = reduce_origins(editions, d / "origins.parquet", memory_limit="4GB")
print(json.dumps({"seconds": time.perf_counter() - t, "items": stats.items}))
"""


def run_reduce(directory) -> tuple[float, int, float]:
    import json

    script = directory / "reduce.py"
    script.write_text(REDUCE)
    out_file = directory / "result.json"
    rss = peak_rss_mb(["bash", "-c", f"{PY} {script} {directory} > {out_file}"])
    result = json.loads(out_file.read_text())
    return result["seconds"], result["items"], rss


def pandas_baseline(shards, out) -> float:
    """The same job in plain pandas: sort the editions, group by item, take the first and the
    second edition, the count and the list of editions, and write Parquet."""
    import pandas as pd

    started = time.perf_counter()
    frame = pd.concat([pd.read_parquet(p) for p in shards], ignore_index=True)
    frame["item"] = frame["qid"].str.slice(1).astype("int64")
    frame = frame.sort_values(["item", "created_at", "wiki"], kind="stable")
    groups = frame.groupby("item", sort=False)
    result = pd.DataFrame(
        {
            "qid": groups["qid"].first(),
            "origin_wiki": groups["wiki"].first(),
            "origin_created_at": groups["created_at"].first(),
            "n_wikis": groups.size(),
            "runner_up_wiki": groups["wiki"].agg(lambda w: w.iloc[1] if len(w) > 1 else None),
            "editions": groups["wiki"].agg(list),
        }
    )
    result.to_parquet(out)
    return time.perf_counter() - started


def main() -> None:
    print(f"bench_reduce: origins reduction over {WIKIS} wikis")
    results, rss = {}, {}
    for rows in (BIG // 10, BIG):
        directory = OUT / f"reduce-editions-{rows}"
        started = time.perf_counter()
        make_shards(rows, directory)
        made = time.perf_counter() - started
        results[rows], items, rss[rows] = run_reduce(directory)
        print(
            f"  {rows / 1e6:,.1f} M rows ({items:,} items; shards made in {made:.0f} s): "
            f"{results[rows]:,.1f} s, peak RSS {rss[rows] / 1024:,.2f} GB"
        )
    small, big = BIG // 10, BIG
    print(f"{f'reduce {big / 1e6:g} M rows, seconds':<44} {results[big]:7.1f} (anchor <= 90 s at 50 M)")
    print(f"{f'growth {big / 1e6:g} M / {small / 1e6:g} M (linear = 10)':<44} {results[big] / results[small]:7.1f}")
    directory = OUT / f"reduce-editions-{small}"
    baseline = pandas_baseline(make_shards(small, directory), directory / "pandas.parquet")
    print(
        f"  pandas sort + groupby baseline, {small / 1e6:g} M rows: {baseline:,.1f} s (origin, runner-up, "
        "count, list of editions' wikis; written to Parquet)"
    )
    print(f"{f'reduce / pandas baseline, {small / 1e6:g} M rows':<44} {baseline / results[small]:7.2f} (speed ratio)")
    report(small, big, results, rss, baseline)


def report(small: int, big: int, results: dict, rss: dict, baseline: float) -> None:
    """The figures for the performance page (scripts/bench_table.py)."""
    met = results[big] <= 90 * big / 50e6 and rss[big] <= 6 * 1024
    write_results(
        "bench_reduce",
        [
            {
                "benchmark": f"origins reduction, {big / 1e6:g} M editions over {WIKIS} wikis (`bench_reduce.py`)",
                "figure": f"**{results[big]:,.1f} s**, peak RSS **{rss[big] / 1024:,.2f} GB**",
                "anchor": "≤ 90 s, ≤ 6 GB at 50 M: " + ("met" if met else "**not met**"),
            },
            {
                "benchmark": f"reduction time {big / 1e6:g} M / {small / 1e6:g} M rows",
                "figure": f"**{results[big] / results[small]:.1f}** ({results[small]:,.1f} s for {small / 1e6:g} M)",
                "anchor": "linear (10)",
            },
            {
                "benchmark": f"reduction / pandas sort + groupby baseline, {small / 1e6:g} M rows",
                "figure": f"**{baseline / results[small]:.1f}×** ({results[small]:,.1f} s vs {baseline:,.1f} s)",
                "anchor": "—",
            },
        ],
    )


if __name__ == "__main__":
    sys.exit(main())
