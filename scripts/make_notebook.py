"""Write notebooks/01_origins.ipynb (kept as code so that its cells are reviewed as code)."""

from pathlib import Path

import nbformat as nbf

CELLS = [
    ("md", """# Exploring an origins file

`wikiorigin origins` writes one row per Wikidata item: the edition whose article was created
first (`origin_wiki`), when, the runner-up, the lead in days, whether it was a tie, and every
edition in order. This notebook reads such a file with DuckDB and pyarrow.

Set `WIKIORIGIN_ORIGINS` to your own `origins.parquet`; without it the notebook builds one from
the bundled fixture tree (`tests/data/tree`, 7 Wikipedias with known answers)."""),
    ("code", """import os
import tempfile
from pathlib import Path

import duckdb
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from wikiorigin.origin import build_origins

ORIGINS = os.environ.get("WIKIORIGIN_ORIGINS")
if ORIGINS is None:
    root = Path.cwd()
    while not (root / "tests" / "data" / "tree").is_dir() and root != root.parent:
        root = root.parent
    ORIGINS = str(Path(tempfile.mkdtemp()) / "origins.parquet")
    report = build_origins(root / "tests" / "data" / "tree", ORIGINS)
    print(f"built {report.origins.items} items from {len(report.shards)} wikis; skipped: {report.skipped}")
con = duckdb.connect()
con.sql(f"CREATE VIEW origins AS SELECT * FROM read_parquet('{ORIGINS}')")
con.sql("SELECT count(*) AS items, sum(tied::INT) AS tied, avg(n_wikis) AS mean_editions FROM origins")"""),
    ("md", "## Origin-language counts\nHow many items each edition wrote about first."),
    ("code", """counts = con.sql('''
    SELECT origin_wiki, count(*) AS items, round(100.0 * count(*) / sum(count(*)) OVER (), 1) AS pct
    FROM origins GROUP BY origin_wiki ORDER BY items DESC''')
counts"""),
    ("md", "## Lead time\nDays between the origin edition's article and the runner-up's (items in 2+ editions)."),
    ("code", """lead = [r[0] for r in con.sql("SELECT lead_days FROM origins WHERE lead_days IS NOT NULL").fetchall()]
fig, ax = plt.subplots(figsize=(6, 3))
ax.hist(lead, bins=30)
ax.set_xlabel("lead of the origin edition (days)")
ax.set_ylabel("items")
fig.tight_layout()
print(f"{len(lead)} items with a runner-up; median lead {sorted(lead)[len(lead) // 2]:.0f} days")"""),
    ("md", "## Items per edition\nHow many items each edition has an article about, and how many it originated."),
    ("code", """con.sql('''
    WITH e AS (SELECT unnest(editions, recursive := true) FROM origins)
    SELECT e.wiki, count(*) AS items,
           (SELECT count(*) FROM origins o WHERE o.origin_wiki = e.wiki) AS originated
    FROM e GROUP BY e.wiki ORDER BY items DESC''')"""),
    ("md", "## Items of one language\nThe base of a new language subset (as `wikiorigin subset`)."),
    ("code", """con.sql('''
    SELECT qid, origin_title, n_wikis, has_enwiki, round(lead_days) AS lead_days
    FROM origins WHERE origin_wiki = 'jawiki' ORDER BY n_wikis DESC, qid LIMIT 10''')"""),
]


def main() -> None:
    nb = nbf.v4.new_notebook()
    nb.cells = [nbf.v4.new_markdown_cell(src) if kind == "md" else nbf.v4.new_code_cell(src)
                for kind, src in CELLS]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    out = Path(__file__).resolve().parent.parent / "notebooks" / "01_origins.ipynb"
    nbf.write(nb, out)


if __name__ == "__main__":
    main()
