"""Regenerate the synthetic fixtures in tests/data (deterministic; seeds fixed).

- tests/data/dumps/testwiki-page_props-synthetic.sql.gz: a page_props dump with a bad QID.
- tests/data/tree/: a Wikimedia-layout dump tree of 7 Wikipedias (stub-meta-history and
  page_props each; eowiki has no page_props, so it is skipped and reported) with known
  answers in tests/data/tree/EXPECTED.json: hand-written cases (an imported revision older
  than every local one, redirects, a tie, an item in one edition only, a page whose every
  revision is imported, a talk page, two pages of one wiki with the same item) and 400
  random items.
"""

import json
import random
import shutil
from pathlib import Path

from wikiorigin.dumps.synthetic import (
    _gzip_text,
    page_props_rows,
    write_origin_tree,
    write_page_props_sql,
)

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"
WIKIS = ["jawiki", "enwiki", "dewiki", "kowiki", "fiwiki", "zh_yuewiki", "be_x_oldwiki", "eowiki"]


def page(wiki, page_id, title, qid, *revisions, ns=0, redirect=False):
    return {"wiki": wiki, "page_id": page_id, "title": title, "qid": qid, "ns": ns,
            "redirect": redirect, "revisions": list(revisions)}


def known_cases():
    return [
        # Kappa: Japanese first.
        page("jawiki", 10, "河童", "Q170002", ("2003-05-01T10:00:00Z", "Ja1"), ("2010-01-01T00:00:00Z", "Ja2")),
        page("enwiki", 10, "Kappa (folklore)", "Q170002", ("2004-02-01T00:00:00Z", "En1")),
        page("dewiki", 10, "Kappa (Fabelwesen)", "Q170002", ("2005-03-01T00:00:00Z", "De1")),
        # Imported: dewiki's page carries an enwiki revision of 2002 (imported, does not
        # count); its own first edit is 2009. enwiki (2006) is the origin.
        page("dewiki", 11, "Import & Export", "Q1001", ("2002-01-01T00:00:00Z", "en>Old"),
             ("2009-09-09T09:09:09Z", "De2")),
        page("enwiki", 11, "Import & Export", "Q1001", ("2006-06-06T06:06:06Z", "En2")),
        # A tie to the second: kowiki and jawiki; the dbname decides (jawiki), flagged.
        page("kowiki", 12, "동시", "Q1002", ("2007-07-07T07:07:07Z", "Ko1")),
        page("jawiki", 12, "同時", "Q1002", ("2007-07-07T07:07:07Z", "Ja3")),
        # Only in one edition.
        page("fiwiki", 13, "Vain täällä", "Q1003", ("2011-11-11T11:11:11Z", "Fi1")),
        # A redirect with an early date does not count; the article does.
        page("zh_yuewiki", 14, "轉向", "Q1004", ("2001-02-03T00:00:00Z", "Yue1"), redirect=True),
        page("zh_yuewiki", 15, "文章", "Q1004", ("2012-12-12T12:12:12Z", "Yue2")),
        page("be_x_oldwiki", 14, "Артыкул", "Q1004", ("2013-01-01T00:00:00Z", "Be1")),
        # Every revision imported: no creation on this wiki.
        page("kowiki", 16, "수입", "Q1005", ("2000-01-01T00:00:00Z", "imported>X")),
        page("fiwiki", 16, "Tuonti", "Q1005", ("2014-04-04T04:04:04Z", "Fi2")),
        # A talk page with an item: not an article.
        page("jawiki", 17, "ノート:議論", "Q1006", ("2001-01-01T00:00:00Z", "Ja4"), ns=1),
        page("enwiki", 17, "Discussion", "Q1006", ("2015-05-05T05:05:05Z", "En3")),
        # eowiki has no page_props: skipped, so its early article cannot win.
        page("eowiki", 18, "Esperanto", "Q1007", ("2001-01-01T00:00:00Z", "Eo1")),
        page("dewiki", 18, "Esperanto", "Q1007", ("2003-03-03T03:03:03Z", "De3")),
        # Two dewiki pages carry the same item: the earlier counts, once.
        page("dewiki", 19, "Doppel (spät)", "Q1008", ("2016-06-06T00:00:00Z", "De4")),
        page("dewiki", 20, "Doppel", "Q1008", ("2008-08-08T00:00:00Z", "De5")),
        page("fiwiki", 19, "Tupla", "Q1008", ("2010-10-10T00:00:00Z", "Fi3")),
    ]


def random_items(rng: random.Random, n: int):
    pages, next_id = [], {w: 100 for w in WIKIS}
    for i in range(n):
        qid = f"Q{2_000_000 + i * 7}"
        for wiki in rng.sample(WIKIS, rng.choice([1, 1, 2, 2, 3, 4, 6])):
            year = rng.randrange(2001, 2025)
            when = f"{year}-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}T{rng.randrange(24):02d}:00:00Z"
            revisions = [(when, f"U{rng.randrange(99)}")]
            if rng.random() < 0.1:
                revisions.insert(0, ("2001-01-15T00:00:00Z", "en>Imported"))
            pages.append(page(wiki, next_id[wiki], f"Item {i} ({wiki})", qid, *revisions,
                              redirect=rng.random() < 0.05))
            next_id[wiki] += 1
    return pages


def main() -> None:
    rows = list(page_props_rows(300, seed=7))
    rows.append((999, "wikibase_item", b"not-a-qid"))
    with _gzip_text(DATA / "dumps" / "testwiki-page_props-synthetic.sql.gz") as f:
        write_page_props_sql(f, rows, rows_per_insert=100)

    tree = DATA / "tree"
    shutil.rmtree(tree, ignore_errors=True)
    pages = known_cases() + random_items(random.Random(5), 400)
    expected = write_origin_tree(tree, pages, without_page_props={"eowiki"})
    (tree / "EXPECTED.json").write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
