"""Start-up of the Wikidata stages: ``wikiorigin wikidata extract`` on an empty dump (one item
asked, none found) against importing the package, both whole commands (best of 7, the two
alternating; goal: at most 0.15 s more), and the heavy modules the command imports (none of
pandas, ``pyarrow.dataset``, ``pyarrow.compute``, DuckDB). ``--quick``: best of 3.
"""

from __future__ import annotations

import gzip
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from common import PY, QUICK, command_seconds, installed_env, write_results

TRIES = 3 if QUICK else 7
HEAVY = ("pandas", "pyarrow.dataset", "pyarrow.compute", "duckdb", "torch", "transformers")


def main() -> None:
    with tempfile.TemporaryDirectory() as d:
        dump, items, out = Path(d) / "wikidata-20260801-all.json.gz", Path(d) / "items.parquet", Path(d) / "e.parquet"
        dump.write_bytes(gzip.compress(b"[\n]\n"))
        pq.write_table(pa.table({"qid": ["Q1"], "origin_wiki": ["jawiki"]}), items)
        extract = ["wikidata", "extract", str(dump), "--items", str(items), "--out", str(out)]
        imported, command = [], []
        for _ in range(TRIES):
            imported.append(command_seconds([PY, "-c", "import wikiorigin"])[0])
            command.append(command_seconds([PY, "-m", "wikiorigin.cli", *extract])[0])
        script = (
            "import sys; from wikiorigin.cli import main; main(sys.argv[1:]); "
            f"print('heavy:', *sorted(m for m in {HEAVY!r} if m in sys.modules))"
        )
        run = subprocess.run([PY, "-c", script, *extract], capture_output=True, text=True, env=installed_env())
        heavy = [line for line in run.stdout.splitlines() if line.startswith("heavy:")][0].split()[1:]
    own = min(command) - min(imported)
    print(
        f"bench_startup: import wikiorigin {min(imported):.3f} s, wikidata extract on an empty dump "
        f"{min(command):.3f} s (best of {TRIES}); heavy modules imported: {' '.join(heavy) or 'none'}"
    )
    print(f"{'wikidata extract start-up beyond the import (s)':<48} {own:7.3f} (goal <= 0.15)")
    write_results(
        "bench_startup",
        [
            {
                "benchmark": "`wikiorigin wikidata extract` on an empty dump, its own start-up: the whole command "
                "less `python -c 'import wikiorigin'` (`bench_startup.py`)",
                "figure": f"**{own:.2f} s** ({min(command):.2f} vs {min(imported):.2f} s); heavy modules imported: "
                f"{' '.join(heavy) or 'none'}",
                "anchor": "≤ 0.15 s: " + ("met" if own <= 0.15 else "**not met**"),
            }
        ],
    )


if __name__ == "__main__":
    sys.exit(main())
