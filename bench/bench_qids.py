"""page_props -> qids: rows per second against a regex-split baseline, on 10 M rows.

The baseline is the obvious approach: split each INSERT at '),(' and parse every row with a
regex in Python. Rows: WIKIORIGIN_BENCH_ROWS (default 10,000,000; --quick: 200,000).
"""

from __future__ import annotations

import re

from common import cached, size, timed
from wikiorigin.dumps.sql import qids_table
from wikiorigin.testing import page_props_rows, write_page_props_sql

ROWS = size(10_000_000, 200_000, "WIKIORIGIN_BENCH_ROWS")
_ROW = re.compile(r"^\(?(\d+),'((?:[^'\\]|\\.)*)','((?:[^'\\]|\\.)*)',([^)]*)\)?;?$", re.S)


def make(path):
    with open(path, "w", encoding="utf-8") as f:
        write_page_props_sql(f, page_props_rows(ROWS, seed=9))


def baseline(path) -> int:
    found = 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.startswith("INSERT INTO"):
                continue
            values = line[line.index(" VALUES ") + 8 :].rstrip()
            for row in values.split("),("):
                m = _ROW.match(row)
                if m and m.group(2) == "wikibase_item":
                    found += 1
    return found


def main() -> None:
    print(f"bench_qids: page_props dump of {ROWS:,} rows")
    path = cached(f"page_props-{ROWS}.sql", make)
    ours_s, table = timed(qids_table, path, "testwiki")
    base_s, found = timed(baseline, path)
    assert found == table.num_rows, (found, table.num_rows)
    print(
        f"  ours {ROWS / ours_s:,.0f} rows/s, regex-split baseline {ROWS / base_s:,.0f} rows/s "
        f"({table.num_rows:,} wikibase_item rows)"
    )
    print(f"{'qids / regex-split baseline':<44} {base_s / ours_s:7.2f} (rows per second ratio)")


if __name__ == "__main__":
    main()
