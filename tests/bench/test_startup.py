"""Start-up of the Wikidata stages: no heavy import on their path. ``pq.read_table`` imports
``pyarrow.dataset`` and with it pandas, and so does ``pa.array`` on a Python list: a fifth of a
second or more before any work (`bench/bench_startup.py` times it)."""

import gzip
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq

HEAVY = ("pandas", "pyarrow.dataset", "pyarrow.compute", "duckdb", "torch", "transformers")


def test_wikidata_extract_imports_no_pandas(tmp_path):
    dump = tmp_path / "wikidata-20260801-all.json.gz"
    dump.write_bytes(gzip.compress(b"[\n]\n"))
    items = tmp_path / "items.parquet"
    pq.write_table(pa.table({"qid": ["Q1"], "origin_wiki": ["jawiki"]}), items)
    out = tmp_path / "entities.parquet"
    script = (
        "import sys; from wikiorigin.cli import main; code = main(sys.argv[1:]); "
        f"print(code, *sorted(m for m in {HEAVY!r} if m in sys.modules))"
    )
    run = subprocess.run(
        [sys.executable, "-c", script, "wikidata", "extract", str(dump), "--items", str(items), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.stdout.split("\n")[-2] == "0", run.stdout + run.stderr  # exit 0 and none of them imported
    assert pq.read_table(out).to_pylist()[0]["qid"] == "Q1"
