"""Wikidata JSON filtering: MB/s of `read_entities` with 1% of the QIDs wanted, against
`json.loads` on every line of the same file, in one run (anchor: >= 5x).

The synthetic dump copies the real entities of the bundled sample (Q1, Q8: their lines are
21-41 kB, like real items) under new QIDs. Size: WIKIORIGIN_BENCH_WIKIDATA_MB (default 300).
"""

from __future__ import annotations

import gzip
import json
import os
import sys
import time
from pathlib import Path

from common import cached
from wikiorigin.dumps.compression import open_dump
from wikiorigin.dumps.wikidata import read_entities

SIZE = int(os.environ.get("WIKIORIGIN_BENCH_WIKIDATA_MB", "300")) * 1_000_000
SAMPLE = Path(__file__).resolve().parent.parent / "tests" / "data" / "dumps" / "wikidata-20151109-five-entities.json"


def make(path) -> None:
    lines = [l.strip().rstrip(",") for l in SAMPLE.read_text().splitlines() if l.strip() not in ("[", "]")]
    items = [json.loads(l) for l in lines if json.loads(l)["type"] == "item"]
    written, n = 0, 0
    with gzip.open(path, "wt", encoding="utf-8", compresslevel=1) as f:
        f.write("[\n")
        while written < SIZE:
            entity = dict(items[n % len(items)], id=f"Q{n + 1}")
            line = json.dumps(entity, ensure_ascii=False, separators=(",", ":")) + ",\n"
            f.write(line)
            written += len(line.encode())
            n += 1
        f.write("]\n")


def all_lines(path) -> int:
    n = 0
    with open_dump(path) as stream:
        rest = b""
        while chunk := stream.read(1 << 22):
            lines = (rest + chunk).split(b"\n")
            rest = lines.pop()
            for line in lines:
                line = line.strip().rstrip(b",")
                if line not in (b"[", b"]", b""):
                    json.loads(line)
                    n += 1
    return n


def main() -> None:
    path = cached(f"wikidata-{SIZE // 1_000_000}MB.json.gz", make)
    with open_dump(path) as stream:
        size = sum(len(c) for c in iter(lambda: stream.read(1 << 22), b""))
    started = time.perf_counter()
    lines = all_lines(path)
    loads_s = time.perf_counter() - started
    wanted = [f"Q{i}" for i in range(1, lines + 1, 100)]
    started = time.perf_counter()
    found = sum(1 for _ in read_entities(path, wanted))
    filter_s = time.perf_counter() - started
    assert found == len(wanted)
    print(f"bench_wikidata: {lines:,} entities, {size / 1e6:,.0f} MB of JSON; {found:,} wanted")
    print(f"  json.loads on every line {size / loads_s / 1e6:,.0f} MB/s; filtered read {size / filter_s / 1e6:,.0f} MB/s")
    print(f"{'filtered read / json.loads every line':<44} {loads_s / filter_s:7.1f} (anchor >= 5)")


if __name__ == "__main__":
    sys.exit(main())
