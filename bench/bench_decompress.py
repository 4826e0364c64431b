"""Both cores on the passes? Parallel decompression against what the passes use.

The input is real article text: the bundled jawiki sample's XML, repeated to the size asked
(150 MB; ``--quick`` 20 MB; ``WIKIORIGIN_BENCH_DECOMPRESS_MB``), compressed at gzip's level 6
(as Wikimedia's stubs) and bzip2's level 9 (as its article dumps). Each reader is drained in 1 MiB
reads, medians of three:

- gzip: isal in one thread (what ``open_dump`` uses: the anchor) against ``rapidgzip`` with one
  thread and with every core (parallel decompression of a single gzip stream, by the author of
  ``indexed_bzip2``); rapidgzip is only measured where installed (``pip install -e .[bench]``);
- bzip2: ``indexed_bzip2`` with one thread against every core (the Wikidata pass and the
  article readers pass ``threads``).

What it decides: a parallel reader is adopted where it wins on this machine's cores.
"""

from __future__ import annotations

import lzma
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from common import cached, size  # noqa: E402

SAMPLE = Path(__file__).resolve().parent.parent / "tests/data/dumps"
SAMPLE = SAMPLE / "jawiki-20230501-pages-articles-multistream_first100k-lines.xml.xz"
MB = size(150, 20, "WIKIORIGIN_BENCH_DECOMPRESS_MB")
CORES = os.cpu_count() or 1


def _text() -> bytes:
    one = lzma.decompress(SAMPLE.read_bytes())
    return one * max(1, round(MB * 1e6 / len(one)))


def _compressed(kind: str) -> Path:
    """The text compressed as Wikimedia does (gzip -6, bzip2 -9), by Python's own modules: the
    same streams as the commands write, with no command needed."""
    import bz2
    import gzip

    def make(path: Path) -> None:
        text = _text()
        path.write_bytes(gzip.compress(text, 6, mtime=0) if kind == "gz" else bz2.compress(text, 9))

    return cached(f"decompress-jawiki-{MB}mb.xml.{kind}", make)


def _drain(stream) -> int:
    total = 0
    while chunk := stream.read(1 << 20):
        total += len(chunk)
    return total


def _median(open_) -> tuple[float, int]:
    times, total = [], 0
    for _ in range(3):
        started = time.perf_counter()
        with open_() as stream:
            total = _drain(stream)
        times.append(time.perf_counter() - started)
    return statistics.median(times), total


def main() -> int:
    import indexed_bzip2
    from isal import igzip

    gz, bz2 = _compressed("gz"), _compressed("bz2")
    isal_s, size_gz = _median(lambda: igzip.open(gz, "rb"))
    print(
        f"bench_decompress: {size_gz / 1e6:,.0f} MB of jawiki XML on {CORES} cores; gzip -6 {gz.stat().st_size / 1e6:,.0f} MB, "
        f"bzip2 -9 {bz2.stat().st_size / 1e6:,.0f} MB"
    )
    print(f"  isal, one thread: {isal_s:.2f} s ({size_gz / isal_s / 1e6:,.0f} MB/s)")
    lines = []
    try:
        import rapidgzip
    except ImportError:
        print("  rapidgzip: not installed (pip install -e .[bench]); not measured")
    else:
        for threads in (1, CORES):
            took, total = _median(lambda n=threads: rapidgzip.open(str(gz), parallelization=n))
            assert total == size_gz
            lines.append(
                (f"rapidgzip, {threads} thread(s) / isal, one thread", took / isal_s, "recorded: < 1 adopts it")
            )
    one, total = _median(lambda: indexed_bzip2.open(str(bz2), parallelization=1))
    every, again = _median(lambda: indexed_bzip2.open(str(bz2), parallelization=CORES))
    assert total == again == size_gz
    print(f"  indexed_bzip2: one thread {one:.2f} s, {CORES} threads {every:.2f} s")
    lines.append((f"indexed_bzip2, {CORES} threads / one thread", every / one, "recorded: the bz2 readers use them"))
    for label, ratio, anchor in lines:
        print(f"{label:<48} {ratio:6.2f} ({anchor})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
