"""The review app on a large set: 50,000 multiple-choice items, 40,000 decisions by two
annotators. Figures are ratios against reading the same Parquet file into Python rows with
pyarrow (the anchor, measured in the same run):

- loading the set for review (rows, content hashes, keys) / the anchor: anchor <= 3;
- one item's view (the page after each keystroke) / the anchor: anchor <= 0.05 (an item reads
  only its own decisions, not the whole database);
- the state of the whole review (progress, filters) / the anchor: recorded;
- ``review export`` under ``majority`` / the anchor: anchor <= 10;
- one decision written (SQLite, WAL, committed before the page moves on), in ms: recorded.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pyarrow.parquet as pq  # noqa: E402

from common import QUICK  # noqa: E402
from wikiorigin.review.app import Review  # noqa: E402
from wikiorigin.review.export import export_reviewed  # noqa: E402
from wikiorigin.review.items import load_dataset  # noqa: E402
from wikiorigin.review.store import ReviewStore  # noqa: E402
from wikiorigin.schemas import MCQ_REGIONS, MCQ_TYPES  # noqa: E402
from wikiorigin.testing import mcq_row, write_mcq

N, DECIDED = (5_000, 2_000) if QUICK else (50_000, 20_000)


def make_set(path: Path) -> None:
    rows = [
        mcq_row(
            i,
            f"質問{i}：この妖怪はどこに現れるか。",
            [f"川{i}", f"山{i}", f"海{i}", f"寺{i}"],
            1,
            type=MCQ_TYPES[i % 6],
            region=MCQ_REGIONS[i % 11],
            refs_detail=["出典"],
            title=f"妖怪{i}",
        )
        for i in range(N)
    ]
    write_mcq(path, rows)


def best(f, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        f()
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        make_set(d / "mcq.parquet")
        anchor = best(lambda: pq.read_table(d / "mcq.parquet").to_pylist())
        load = best(lambda: load_dataset(d / "mcq.parquet"))
        data = load_dataset(d / "mcq.parquet")
        store = ReviewStore(d / "r.sqlite", "mcq.parquet", "mcq", list(data.by_key), data.keyed_by)
        started = time.perf_counter()
        for item in data.items[:DECIDED]:
            store.add(item.key, item.sha1, "alice", "accept")
        write_ms = (time.perf_counter() - started) / DECIDED * 1000
        for i, item in enumerate(data.items[:DECIDED]):
            store.add(
                item.key,
                item.sha1,
                "bob",
                "reject" if i % 3 == 0 else "accept",
                reason="answer wrong" if i % 3 == 0 else None,
            )
        store.close()
        review = Review(d / "mcq.parquet", d / "r.sqlite", "carol")
        view = best(lambda: [review.item(k) for k in range(0, DECIDED, DECIDED // 10)], 1) / 10
        state = best(lambda: review.state(), 1)
        review.store.close()
        export = best(lambda: export_reviewed(d / "mcq.parquet", d / "r.sqlite", d / "out.parquet", "majority"), 1)
    print(
        f"bench_review: {N:,} items, {2 * DECIDED:,} decisions; pyarrow rows {anchor:.2f} s, load {load:.2f} s, "
        f"item view {view * 1000:.1f} ms, state {state:.2f} s, export {export:.2f} s, a decision {write_ms:.2f} ms"
    )
    print(f"{'load for review / pyarrow rows':<45}{load / anchor:>8.2f} (anchor <= 3)")
    print(f"{'one item view / pyarrow rows':<45}{view / anchor:>8.3f} (anchor <= 0.05)")
    print(f"{'state of the review / pyarrow rows':<45}{state / anchor:>8.2f} (recorded)")
    print(f"{'export (majority) / pyarrow rows':<45}{export / anchor:>8.2f} (anchor <= 10)")


if __name__ == "__main__":
    main()
