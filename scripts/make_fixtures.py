"""Regenerate the synthetic fixtures in tests/data/dumps (deterministic; seeds fixed)."""

import gzip
from pathlib import Path

from wikiorigin.dumps.synthetic import page_props_rows, write_page_props_sql

HERE = Path(__file__).resolve().parent.parent / "tests" / "data" / "dumps"


def main() -> None:
    rows = list(page_props_rows(300, seed=7))
    rows.append((999, "wikibase_item", b"not-a-qid"))
    with gzip.open(HERE / "testwiki-page_props-synthetic.sql.gz", "wt", encoding="utf-8") as f:
        write_page_props_sql(f, rows, rows_per_insert=100)


if __name__ == "__main__":
    main()
