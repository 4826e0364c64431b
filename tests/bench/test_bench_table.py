"""The performance page's table is the benches' own output (bench/figures.json, written by
scripts/bench_table.py from what each bench wrote), never figures typed by hand."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_performance_table_is_the_benches_output():
    run = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "bench_table.py"), "--check"], capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
