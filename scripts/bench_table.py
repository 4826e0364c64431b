"""The performance page's table, written from the benches' own output.

Each bench writes its figures to ``bench/out/results/NAME.json`` (``bench/common.py``
``write_results``: rows of benchmark, figure and anchor). This script takes those of full runs
(not ``--quick``) into ``bench/figures.json`` (kept in the repository: the figures of the last
run of every bench, with its date) and writes the table between the markers of
``docs/reference/performance.md`` from it. ``--check``: exit 1, writing nothing, when the page's
table is not the one ``bench/figures.json`` gives (a figure typed by hand).

    python bench/bench_llm.py && python scripts/bench_table.py
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "out" / "results"
FIGURES = ROOT / "bench" / "figures.json"
PAGE = ROOT / "docs" / "reference" / "performance.md"
START = "<!-- bench-table: written by scripts/bench_table.py from bench/figures.json; do not edit by hand -->"
END = "<!-- /bench-table -->"
ORDER = [  # the page's order: the Makefile's
    f"bench_{name}"
    for name in "scan qids reduce pipeline pages decompress index wikitext wikidata startup llm eval chrf review corpus".split()
]


def merged() -> dict:
    """bench/figures.json with the full runs' results in bench/out/results taken in."""
    figures = json.loads(FIGURES.read_text()) if FIGURES.exists() else {}
    for path in sorted(RESULTS.glob("*.json")) if RESULTS.is_dir() else []:
        result = json.loads(path.read_text())
        if not result.get("quick"):
            figures[result["bench"]] = {"date": result["date"], "rows": result["rows"]}
    return dict(sorted(figures.items(), key=lambda kv: (ORDER.index(kv[0]) if kv[0] in ORDER else len(ORDER), kv[0])))


def table(figures: dict) -> str:
    lines = [START, "| benchmark | figure | anchor | run |", "| --- | --- | --- | --- |"]
    for result in figures.values():
        for row in result["rows"]:
            cells = [row["benchmark"], row["figure"], row["anchor"], result["date"]]
            lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(lines + [END])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only check that the page's table is bench/figures.json's")
    args = parser.parse_args()
    page = PAGE.read_text(encoding="utf-8")
    if START not in page or END not in page:
        print(f"{PAGE}: no table markers ({START} ... {END})", file=sys.stderr)
        return 2
    figures = (json.loads(FIGURES.read_text()) if FIGURES.exists() else {}) if args.check else merged()
    before, rest = page.split(START, 1)
    written = before + table(figures) + rest.split(END, 1)[1]
    if args.check:
        if written != page:
            print(f"{PAGE}: its table is not bench/figures.json's: run scripts/bench_table.py", file=sys.stderr)
            return 1
        return 0
    FIGURES.write_text(json.dumps(figures, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    PAGE.write_text(written, encoding="utf-8")
    print(f"{PAGE}: {sum(len(r['rows']) for r in figures.values())} figures from {len(figures)} benches")
    return 0


if __name__ == "__main__":
    sys.exit(main())
