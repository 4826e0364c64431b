"""The whole origins pipeline on a scaled-up fixture: >= 2 GB of stub XML across 20 wikis.

Prints throughput with `--jobs 2` against `--jobs 1` (anchor >= 1.7x; best of two runs each,
after one run that starts the worker processes, whose start-up a real run of hours does not
notice), and a projection for all open Wikipedias from the measured throughput. Size: WIKIORIGIN_BENCH_PIPELINE_MB per
wiki (default 105, i.e. 2.1 GB of XML in all).
"""

from __future__ import annotations

import os
import shutil
import sys
import time

from isal import igzip

from common import OUT
from wikiorigin.languages import open_wikis
from wikiorigin.origin import build_origins, shard_dir_for
from wikiorigin.testing import gzip_text, write_history_xml, write_page_props_sql

PER_WIKI = int(os.environ.get("WIKIORIGIN_BENCH_PIPELINE_MB", "105")) * 1_000_000
N_WIKIS = 20
DATE = "20260801"
# Projection inputs (see the README): revisions in all open Wikipedias, and stub XML bytes per
# revision measured on the real elwikivoyage stub sample (70,445 bytes of pages / 118).
ALL_REVISIONS = 4.0e9
XML_PER_REVISION = 70_445 / 118


def make_tree(root):
    marker = root / ".complete"
    if marker.exists():
        return
    shutil.rmtree(root, ignore_errors=True)
    for i, wiki in enumerate(w.dbname for w in open_wikis()[:N_WIKIS]):
        directory = root / wiki / DATE
        directory.mkdir(parents=True)
        with igzip.open(directory / f"{wiki}-{DATE}-stub-meta-history.xml.gz", "wb", compresslevel=1) as f:
            records = [r for r in write_history_xml(f, PER_WIKI, seed=100 + i, dbname=wiki)]
        rows = [(r.page_id, "wikibase_item", f"Q{(r.page_id * 7919) % 3_000_000 + 1}".encode())
                for r in records if r.namespace == 0]
        with gzip_text(directory / f"{wiki}-{DATE}-page_props.sql.gz") as f:
            write_page_props_sql(f, rows)
    marker.touch()


def run(tree, jobs: int, scan_threads=None) -> tuple[float, int]:
    out = OUT / f"pipeline-jobs{jobs}" / "origins.parquet"
    shutil.rmtree(shard_dir_for(out), ignore_errors=True)
    started = time.perf_counter()
    report = build_origins(tree, out, jobs=jobs, scan_threads=scan_threads)
    seconds = time.perf_counter() - started
    return seconds, sum(r.xml_bytes for r in report.shards)


def main() -> None:
    print(f"bench_pipeline: origins over {N_WIKIS} wikis of synthetic stub dumps")
    tree = OUT / "pipeline-tree"
    started = time.perf_counter()
    make_tree(tree)
    gz = sum(p.stat().st_size for p in tree.rglob("*stub-meta-history.xml.gz"))
    print(f"  tree ready in {time.perf_counter() - started:.0f} s: {gz / 1e6:,.0f} MB of gzip stubs")
    cold_s, xml = run(tree, 2)  # starts the worker processes (once per session in a real run)
    one_s = min(run(tree, 1)[0] for _ in range(2))
    single_s = min(run(tree, 1, scan_threads=1)[0] for _ in range(2))
    two_s = min(run(tree, 2)[0] for _ in range(2))
    rate = lambda s: f"{s:,.1f} s ({xml / s / 1e6:,.0f} MB/s)"  # noqa: E731
    print(f"  {xml / 1e9:,.2f} GB of XML: --jobs 1 {rate(one_s)} (it already runs the scan on "
          f"two threads beside the decompressor), --jobs 1 with one scan thread {rate(single_s)}, "
          f"--jobs 2 {rate(two_s)} (best of two; {rate(cold_s)} when it also starts its workers)")
    print(f"{'--jobs 2 / --jobs 1 throughput':<44} {one_s / two_s:7.2f} (anchor >= 1.7)")
    print(f"{'--jobs 2 / one single-threaded job':<44} {single_s / two_s:7.2f}")
    rate = xml / min(one_s, two_s)
    total = ALL_REVISIONS * XML_PER_REVISION
    print(f"  projection: {ALL_REVISIONS:.1e} revisions x {XML_PER_REVISION:.0f} B = "
          f"{total / 1e12:,.1f} TB of stub XML (~{total / 7.5 / 1e9:,.0f} GB gzip) at "
          f"{rate / 1e6:,.0f} MB/s")
    print(f"{'projected hours for all open Wikipedias':<44} {total / rate / 3600:7.1f}")


if __name__ == "__main__":
    sys.exit(main())
