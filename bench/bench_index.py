"""Loading a multistream index: ``MultistreamIndex`` (Arrow and numpy arrays) against the
baseline it replaced (two dictionaries of small objects, one per line), on a synthetic index of
3 M lines (English Wikipedia's has about 24 M), same run; each in a child process so that its
peak memory is its own. Then 10,000 title look-ups. No anchor in the issue: figures recorded.

Size: WIKIORIGIN_BENCH_INDEX_LINES (default 3,000,000).
"""

from __future__ import annotations

import bz2
import os
import random
import subprocess
import sys
import time

from common import PY, cached, size
from wikiorigin.dumps.pages import MultistreamIndex

LINES = size(3_000_000, 30_000, "WIKIORIGIN_BENCH_INDEX_LINES")
WORDS = [
    "River",
    "Kappa",
    "Tengu",
    "History",
    "of",
    "the",
    "List",
    "Battle",
    "(film)",
    "Station",
    "東京",
    "河童",
    "Category:Yōkai",
    "Template:Cite book",
]

ARRAYS = """
import sys, time
from wikiorigin.dumps.pages import MultistreamIndex
started = time.perf_counter(); index = MultistreamIndex(sys.argv[1])
print(time.perf_counter() - started, len(index))
"""
DICTS = """
import sys, time
from dataclasses import dataclass
from wikiorigin.dumps.compression import open_dump

@dataclass(slots=True)
class Entry:
    offset: int
    page_id: int

started = time.perf_counter()
by_title, by_id = {}, {}
with open_dump(sys.argv[1]) as stream:
    rest = b""
    while chunk := stream.read(1 << 22):
        lines = (rest + chunk).split(b"\\n")
        rest = lines.pop()
        for line in lines:
            offset, page_id, title = line.split(b":", 2)
            entry = Entry(int(offset), int(page_id))
            by_title[title.decode()] = entry
            by_id[entry.page_id] = entry
print(time.perf_counter() - started, len(by_id))
"""


def make_index(path) -> None:
    rng = random.Random(0)
    with bz2.open(path, "wt", encoding="utf-8", compresslevel=1) as f:
        offset = 600
        for i in range(LINES):
            if i % 100 == 0:
                offset += 30_000
            f.write(f"{offset}:{i + 10}:{' '.join(rng.choice(WORDS) for _ in range(3))} {i}\n")


def child(code: str, path) -> tuple[float, float]:
    """Seconds the child reports and its peak resident memory (MB)."""
    proc = subprocess.Popen([PY, "-c", code, str(path)], stdout=subprocess.PIPE, text=True)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    if status != 0:
        raise RuntimeError(f"the child loading {path} failed with status {status}")
    return float(out.split()[0]), usage.ru_maxrss / 1024


def main() -> None:
    print(f"bench_index: multistream index of {LINES:,} lines")
    path = cached(f"index-{LINES}.txt.bz2", make_index)
    arrays_s, arrays_mb = child(ARRAYS, path)
    dicts_s, dicts_mb = child(DICTS, path)
    print(
        f"  arrays {arrays_s:.1f} s, peak {arrays_mb:,.0f} MB; dictionaries of objects {dicts_s:.1f} s, "
        f"peak {dicts_mb:,.0f} MB"
    )
    print(f"{'load time, dictionaries / arrays':<44} {dicts_s / arrays_s:7.2f}")
    print(f"{'peak memory, dictionaries / arrays':<44} {dicts_mb / arrays_mb:7.2f}")
    index = MultistreamIndex(path)
    wanted = random.Random(1).sample(index.titles(), min(10_000, LINES // 2))
    started = time.perf_counter()
    assert all(index.by_title(t) is not None for t in wanted)
    print(f"  10,000 title look-ups: {(time.perf_counter() - started) * 100:.1f} µs each")


if __name__ == "__main__":
    sys.exit(main())
