"""Start-up of the Wikidata stages: no heavy import on their path. ``pq.read_table`` imports
``pyarrow.dataset`` and with it pandas, and so does ``pa.array`` on a Python list: a fifth of a
second or more before any work (`bench/bench_startup.py` times it)."""

import gzip
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq

HEAVY = ("pandas", "pyarrow.dataset", "pyarrow.compute", "duckdb", "torch", "transformers")


# The other stages' command modules (and what they import: the LLM layer, logging), the
# package's data read through importlib.resources, difflib: none needed to extract.
OTHER_STAGES = tuple(f"wikiorigin.cli.{s}" for s in ("build", "eval", "corpus", "dumps", "export", "origins", "review"))
NOT_NEEDED = (*OTHER_STAGES, "wikiorigin.llm", "wikiorigin.cli.outcome", "importlib.resources", "difflib", "tempfile")


def _extract(tmp_path, modules):
    """``wikidata extract`` on an empty dump in a fresh interpreter: its exit status and which of
    ``modules`` it imported."""
    dump = tmp_path / "wikidata-20260801-all.json.gz"
    dump.write_bytes(gzip.compress(b"[\n]\n"))
    items = tmp_path / "items.parquet"
    pq.write_table(pa.table({"qid": ["Q1"], "origin_wiki": ["jawiki"]}), items)
    out = tmp_path / "entities.parquet"
    script = (
        "import sys; from wikiorigin.cli import main; code = main(sys.argv[1:]); "
        f"print(code, *sorted(m for m in {modules!r} if m in sys.modules))"
    )
    run = subprocess.run(
        [sys.executable, "-c", script, "wikidata", "extract", str(dump), "--items", str(items), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert pq.read_table(out).to_pylist()[0]["qid"] == "Q1", run.stdout + run.stderr
    return run.stdout.split("\n")[-2]


def test_wikidata_extract_imports_no_pandas(tmp_path):
    assert _extract(tmp_path, HEAVY) == "0"  # exit 0 and none of them imported


def test_wikidata_extract_imports_no_other_stage(tmp_path):
    """The command imports its own stage's module alone, not every stage's (the LLM layer,
    logging and the rest: a tenth of the start-up goal)."""
    assert _extract(tmp_path, NOT_NEEDED) == "0"
