"""Regenerate the synthetic fixtures in tests/data (deterministic; seeds fixed).

- tests/data/dumps/testwiki-page_props-synthetic.sql.gz: a page_props dump with a bad QID.
- tests/data/tree/: a Wikimedia-layout dump tree of 7 Wikipedias (stub-meta-history and
  page_props each; eowiki has no page_props, so it is skipped and reported) with known
  answers in tests/data/tree/EXPECTED.json: hand-written cases (an imported revision older
  than every local one, redirects, a tie, an item in one edition only, a page whose every
  revision is imported, a talk page, two pages of one wiki with the same item) and 400
  random items. Each run directory also holds the pages-articles multistream dump and its
  index (the same page ids and titles as the stubs) and the dumpstatus.json a mirror
  serves, so that tests/mirror.py serves the tree as a dump mirror; and
  wikidatawiki/entities/20260803/ holds a Wikidata JSON dump of the items (labels, aliases,
  sitelinks; one jawiki item is left out, as a new item) with its md5sums.txt. The
  new-language recipe (scripts/recipe.py, tests/test_recipe.py) runs on this tree.
"""

import json
import random
import shutil
from pathlib import Path

from wikiorigin.languages import lookup
from wikiorigin.testing import (
    entity_json,
    gzip_text,
    page_props_rows,
    write_origin_tree,
    write_page_props_sql,
    write_wikidata_json,
)

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"
# Wikidata's JSON dumps have dates of their own, not those of the wikis' runs.
WIKIDATA_DATE = "20260803"
WIKIS = ["jawiki", "enwiki", "dewiki", "kowiki", "fiwiki", "zh_yuewiki", "be_x_oldwiki", "eowiki"]


def page(wiki, page_id, title, qid, *revisions, ns=0, redirect=False, text=None):
    return {
        "wiki": wiki,
        "page_id": page_id,
        "title": title,
        "qid": qid,
        "ns": ns,
        "redirect": redirect,
        "revisions": list(revisions),
        "text": text,
    }


# Article texts (our own words) of the hand-written jawiki items; the others get a short
# English stub with one footnote (wikiorigin.testing.trees).
KAPPA_JA = (
    "'''河童'''（かっぱ）は、日本の川や沼に住むとされる妖怪である。頭に水をたたえた皿を持ち、"
    "それが乾くと力を失うと伝えられる<ref>{{Cite book|和書|title=妖怪の民俗|year=1990}}</ref>。"
    "\n\n== 伝承 ==\nきゅうりを好むとされ、相撲を挑むという話が各地に残る<ref>地方の聞き書き。</ref>。"
    "\n\n== 脚注 ==\n{{Reflist}}\n[[Category:日本の妖怪]]\n"
)
SAME_TIME_JA = (
    "'''同時'''とは、二つ以上の出来事が同じ時刻に起こることである"
    "<ref>{{Cite book|和書|title=時間の辞典|year=2005}}</ref>。\n\n== 脚注 ==\n{{Reflist}}\n"
)
# Wikidata: the English label and the aliases of the hand-written items (their other labels are
# their sitelinks' titles).
LABELS_EN = {
    "Q170002": "kappa",
    "Q1001": "import and export",
    "Q1002": "simultaneity",
    "Q1003": "only here",
    "Q1004": "article",
    "Q1005": "import",
    "Q1006": "discussion",
    "Q1007": "Esperanto",
    "Q1008": "double",
}
ALIASES = {
    "Q170002": {"en": ["kappa (folklore)", "kawataro"], "ja": ["川童", "河太郎"]},
    "Q1002": {"en": ["simultaneous"], "ja": ["同時性"]},
}


def known_cases():
    return [
        # Kappa: Japanese first.
        page(
            "jawiki",
            10,
            "河童",
            "Q170002",
            ("2003-05-01T10:00:00Z", "Ja1"),
            ("2010-01-01T00:00:00Z", "Ja2"),
            text=KAPPA_JA,
        ),
        page("enwiki", 10, "Kappa (folklore)", "Q170002", ("2004-02-01T00:00:00Z", "En1")),
        page("dewiki", 10, "Kappa (Fabelwesen)", "Q170002", ("2005-03-01T00:00:00Z", "De1")),
        # Imported: dewiki's page carries an enwiki revision of 2002 (imported, does not
        # count); its own first edit is 2009. enwiki (2006) is the origin.
        page(
            "dewiki",
            11,
            "Import & Export",
            "Q1001",
            ("2002-01-01T00:00:00Z", "en>Old"),
            ("2009-09-09T09:09:09Z", "De2"),
        ),
        page("enwiki", 11, "Import & Export", "Q1001", ("2006-06-06T06:06:06Z", "En2")),
        # A tie to the second: kowiki and jawiki; the dbname decides (jawiki), flagged.
        page("kowiki", 12, "동시", "Q1002", ("2007-07-07T07:07:07Z", "Ko1")),
        page("jawiki", 12, "同時", "Q1002", ("2007-07-07T07:07:07Z", "Ja3"), text=SAME_TIME_JA),
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


def entities(pages, left_out=()) -> list[str]:
    """Wikidata JSON lines of the pages' items but ``left_out``: sitelinks to their articles, a
    label in English and in each of their editions' languages (the title), aliases; and one
    property."""
    by_qid: dict[str, list[dict]] = {}
    for p in pages:
        by_qid.setdefault(p["qid"], []).append(p)
    lines = [
        '{"type":"property","datatype":"wikibase-item","id":"P31","labels":{"en":'
        '{"language":"en","value":"instance of"}},"descriptions":{},"aliases":{},"claims":{}}'
    ]
    for qid in sorted(by_qid, key=lambda q: int(q[1:])):
        if qid in left_out:
            continue
        articles = sorted(
            (p for p in by_qid[qid] if p["ns"] == 0 and not p["redirect"]), key=lambda p: (p["wiki"], p["page_id"])
        )
        sitelinks = {}
        for p in articles:
            sitelinks.setdefault(p["wiki"], p["title"])
        if qid in LABELS_EN:
            labels, aliases = {"en": LABELS_EN[qid]}, ALIASES.get(qid, {})
        else:  # a random item: its number in random_items
            number = (int(qid[1:]) - 2_000_000) // 7
            labels, aliases = {"en": f"item {number}"}, {"en": [f"thing {number}"]}
            if "jawiki" in sitelinks:
                aliases["ja"] = [f"項目{number}"]
        for wiki, title in sitelinks.items():
            labels.setdefault(lookup(wiki).language, title)
        lines.append(entity_json(qid, labels, aliases, sitelinks))
    return lines


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
            pages.append(page(wiki, next_id[wiki], f"Item {i} ({wiki})", qid, *revisions, redirect=rng.random() < 0.05))
            next_id[wiki] += 1
    return pages


def main() -> None:
    rows = list(page_props_rows(300, seed=7))
    rows.append((999, "wikibase_item", b"not-a-qid"))
    with gzip_text(DATA / "dumps" / "testwiki-page_props-synthetic.sql.gz") as f:
        write_page_props_sql(f, rows, rows_per_insert=100)

    tree = DATA / "tree"
    shutil.rmtree(tree, ignore_errors=True)
    pages = known_cases() + random_items(random.Random(5), 400)
    expected = write_origin_tree(tree, pages, without_page_props={"eowiki"}, multistream=True, dumpstatus=True)
    # The first random item of jawiki alone is not in the Wikidata dump (a new item): its
    # article comes without Wikidata's names.
    new_item = min(
        (q for q, a in expected.items() if a["editions"] == ["jawiki"] and q.startswith("Q2")), key=lambda q: int(q[1:])
    )
    write_wikidata_json(tree, entities(pages, left_out={new_item}), date=WIKIDATA_DATE)
    (tree / "EXPECTED.json").write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
