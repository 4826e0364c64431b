"""The benches' memory figure is the measured command's own: a child process spawned from a
bench that holds hundreds of MB must not report the bench's memory as its peak (Linux records
the parent's high-water mark at exec when the child is spawned by vfork)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from common import peak_rss_mb  # noqa: E402


def test_a_small_command_is_measured_small_under_a_large_bench():
    held = bytearray(400 << 20)  # 400 MB, touched
    held[::4096] = b"\x01" * len(held[::4096])
    small = peak_rss_mb([sys.executable, "-c", "pass"])
    assert small < 100, f"python -c pass measured at {small:.0f} MB beside a bench holding 400 MB"
    big = peak_rss_mb([sys.executable, "-c", "b = bytearray(200 << 20); b[::4096] = b'x' * len(b[::4096])"])
    assert big > small + 150
    del held
