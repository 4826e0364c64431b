"""`wikiorigin scan` starts small: a fresh process scanning a real stub sample imports none of
the heavy packages that other commands use, nor the parts of pyarrow and of wikiorigin that a
scan of XML does not need (pandas alone, which ``pa.array`` imports, was 0.4 s of the start)."""

import json
import subprocess
import sys
from pathlib import Path

SAMPLE = Path(__file__).resolve().parent.parent / "data" / "dumps" / "elwikivoyage-stub-meta-history-sample.xml.gz"
NOT_FOR_A_SCAN = [
    "pandas",
    "pyarrow.compute",
    "duckdb",
    "torch",
    "transformers",
    "openai",
    "matplotlib",
    "scipy",
    "mwxml",
    "wikiorigin.dumps.history",
    "wikiorigin.builders.presets",
    "wikiorigin.llm",
]

_RUN = """
import json, sys
from wikiorigin.cli import main
code = main(["scan", sys.argv[1], "--wiki", "elwikivoyage", "--allow-non-wikipedia", "--out", sys.argv[2]])
print(json.dumps({"code": code, "loaded": [m for m in sys.argv[3:] if m in sys.modules]}))
"""


def test_scan_imports_only_what_it_needs(tmp_path):
    out = tmp_path / "pages.parquet"
    done = subprocess.run(
        [sys.executable, "-c", _RUN, str(SAMPLE), str(out), *NOT_FOR_A_SCAN], capture_output=True, text=True, check=True
    )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result == {"code": 0, "loaded": []}
    assert out.is_file()
