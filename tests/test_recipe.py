"""The new-language recipe end to end, on the bundled data, through the CLI:

mirror -> download -> origins over all wikis -> subset -> multistream and Wikidata -> corpus
origin -> build freeform -> eval freeform -> build card.

The steps are scripts/recipe.py's (``make recipe`` runs the same ones as processes): the fixture
tree served as a dump mirror on loopback, an OpenAI-compatible server on loopback with a
scripted generator, and a tiny random local model. The recipe runs once per module; each test
checks one step's rows against what the tree encodes (tests/data/tree/EXPECTED.json, and the
Wikidata names scripts/make_fixtures.py gave the items).
"""

import contextlib
import importlib.util
import io
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.mirror import Mirror
from tests.openai_server import ChatServer
from wikiorigin.builders.prompts import CRITERIA
from wikiorigin.cli import main

pytest.importorskip("transformers", reason="eval freeform runs a local model (the eval extra)")
pytestmark = pytest.mark.slow  # the recipe end to end: every command on the bundled data, a local model

ROOT = Path(__file__).resolve().parent.parent
TREE = ROOT / "tests" / "data" / "tree"
_spec = importlib.util.spec_from_file_location("recipe", ROOT / "scripts" / "recipe.py")
recipe = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(recipe)

EXPECTED = json.loads((TREE / "EXPECTED.json").read_text())
JA = sorted(q for q, a in EXPECTED.items() if a["origin_wiki"] == "jawiki")


@pytest.fixture(scope="module")
def run(tmp_path_factory, tiny_model_dir):
    """Every step of the recipe, in order; per step its exit code and output."""
    work = tmp_path_factory.mktemp("recipe")
    commands, said = [], []
    with Mirror(TREE) as mirror, ChatServer(answer=recipe.scripted_model, models=[recipe.MODEL]) as llm:
        for what, argv in recipe.steps(work, mirror.url, llm.url, tiny_model_dir):
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main(argv)
            assert code == 0, f"{what}: `wikiorigin {' '.join(argv)}` exited {code}: {err.getvalue()}"
            commands.append(" ".join(argv[:2] if argv[0] in ("corpus", "build", "eval") else argv[:1]))
            said.append((out.getvalue(), err.getvalue()))
        probes, calls, log = list(llm.probes), list(llm.calls), list(mirror.log)
    return {"work": work, "commands": commands, "said": said, "probes": probes, "calls": calls, "mirror_log": log}


def _rows(path, key="qid"):
    return {r[key]: r for r in pq.read_table(path).to_pylist()}


def test_every_step_ran_and_said_what_it_did(run):
    assert run["commands"] == [
        "download",
        "origins",
        "subset",
        "download",
        "download",
        "corpus origin",
        "build freeform",
        "eval freeform",
        "build card",
    ]
    (
        (download, _),
        (origins, skipped),
        (subset, _),
        (multistream, _),
        (wikidata, _),
        (corpus, warned),
        (build, _),
        (evaluated, _),
        (card, _),
    ) = run["said"]
    assert download.startswith("15 files fetched and verified, 0 already verified")
    assert "384 items from 7 wikis (0 shards reused, 1 wikis skipped), 1 tied" in origins
    assert "wikiorigin: skipped eowiki: no page_props in" in skipped
    assert subset.startswith(f"{len(JA)} items originate in jawiki -> ")
    assert multistream.startswith("2 files fetched") and wikidata.startswith("1 files fetched")
    corpus = corpus.split("\n", 1)[1] if corpus.startswith("text: ") else corpus  # the text source, said first
    assert corpus.startswith(
        f"jawiki: {len(JA)} items (0 of other editions), 0 pages not in the dump, "
        "0 renamed (kept), 0 with another title or now a redirect (left out), "
        f"1 without Wikidata data, 0 bad Wikidata lines; {len(JA)} articles in "
    )
    assert [w for w in warned.splitlines() if "item" in w] == ["wikiorigin: warning: item Q2000154: no Wikidata entity"]
    assert f"{len(JA) - 1} questions from {len(JA)} articles (dropped: score 1)" in build
    assert evaluated.startswith(f"freeform: {len(JA) - 1} questions, exact ")
    assert card.startswith("dataset card -> ") and card.strip().endswith("croissant.json")


def test_download_fetches_the_mirror_s_files_verified(run):
    dumps = run["work"] / "dumps"
    fetched = sorted(p.relative_to(dumps) for p in dumps.rglob("[!.]*") if p.is_file())
    wanted = sorted(
        p.relative_to(TREE)
        for p in TREE.rglob("*")
        if p.is_file()
        and p.name != "EXPECTED.json"
        and not p.name.endswith(("dumpstatus.json", "md5sums.txt"))
        and ("pages-articles" not in p.name or p.parts[-3] == "jawiki")
    )
    assert fetched == wanted
    assert all((dumps / p).read_bytes() == (TREE / p).read_bytes() for p in fetched)
    assert not list(dumps.rglob("*.part"))
    assert all((dumps / p).with_name(f".{p.name}.verified").exists() for p in fetched)  # skipped on a re-run
    agents = {ua for _, ua, _ in run["mirror_log"]}
    assert agents and all(recipe.CONTACT in ua for ua in agents)


def test_origins_over_all_wikis_are_the_known_answers(run):
    rows = _rows(run["work"] / "origins.parquet")
    assert set(rows) == set(EXPECTED)
    for qid, want in EXPECTED.items():
        got = rows[qid]
        assert got["origin_wiki"] == want["origin_wiki"], qid
        assert got["origin_created_at"].strftime("%Y-%m-%dT%H:%M:%SZ") == want["origin_created_at"], qid
        assert (got["n_wikis"], got["tied"]) == (want["n_wikis"], want["tied"]), qid
        assert [e["wiki"] for e in got["editions"]] == want["editions"], qid


def test_subset_keeps_the_items_of_jawiki(run):
    items = _rows(run["work"] / "ja-items.parquet")
    assert sorted(items) == JA and len(JA) > 50
    assert items["Q1002"]["tied"] and items["Q170002"]["runner_up_wiki"] == "enwiki"


def test_corpus_has_each_item_s_article_with_its_wikidata_names(run):
    items = _rows(run["work"] / "ja-items.parquet")
    articles = _rows(run["work"] / "ja-articles.parquet")
    assert sorted(articles) == JA
    for qid, row in articles.items():
        edition = next(e for e in items[qid]["editions"] if e["wiki"] == "jawiki")
        assert (row["wiki"], row["page_id"], row["title"]) == ("jawiki", edition["page_id"], edition["title"])
        assert row["origin_wiki"] == "jawiki" and row["n_wikis"] == EXPECTED[qid]["n_wikis"]
        assert row["text"] and row["references"] and "[1]" in row["text"]
    kappa = articles["Q170002"]
    assert kappa["url"] == "https://ja.wikipedia.org/wiki/%E6%B2%B3%E7%AB%A5"
    assert (kappa["label_en"], kappa["enwiki_title"]) == ("kappa", "Kappa (folklore)")
    assert kappa["aliases"] == ["kappa", "河童", "kappa (folklore)", "kawataro", "川童", "河太郎"]
    assert kappa["categories"] == ["日本の妖怪"] and len(kappa["references"]) == 2
    # A random item: Wikidata's English label and alias, its title as the Japanese label, a
    # Japanese alias; no English article.
    random_ja = [q for q in JA if q.startswith("Q2") and articles[q]["aliases"]]
    number = (int(random_ja[0][1:]) - 2_000_000) // 7
    row = articles[random_ja[0]]
    assert row["aliases"] == [f"item {number}", row["title"], f"thing {number}", f"項目{number}"]
    assert (row["enwiki_title"] is None) == ("enwiki" not in EXPECTED[random_ja[0]]["editions"])
    # The item the Wikidata dump lacks keeps its article, without names (and was reported).
    new = [q for q in JA if not articles[q]["aliases"]]
    assert len(new) == 1 and articles[new[0]]["label_en"] is None


def test_build_freeform_questions_with_their_answers(run):
    articles = _rows(run["work"] / "ja-articles.parquet")
    qa = run["work"] / "qa"
    rows = _rows(qa / "freeform.parquet")
    failed = pq.read_table(qa / "freeform.failed.parquet").to_pylist()
    assert [(f["qid"], f["step"], f["reason"]) for f in failed] == [("Q1002", "score", "below 5 on not_trivial=3")]
    assert sorted(rows) == [q for q in JA if q != "Q1002"]
    for qid, row in rows.items():
        assert row["question"] and row["question_source"] and row["language"] == "ja"
        assert row["answers"][0] == articles[qid]["title"] == row["title"]
        assert set(articles[qid]["aliases"]) <= set(row["answers"])
        assert row["criteria"] == {c: 5 for c in CRITERIA}
        assert row["source_revision_id"] == articles[qid]["revision_id"]
        assert not any(a.casefold() in row["question"].casefold() for a in row["answers"])
    assert rows["Q170002"]["answers"] == [
        "河童",
        "Kappa (folklore)",
        "Kappa",
        "kappa",
        "kappa (folklore)",
        "kawataro",
        "川童",
        "河太郎",
    ]
    assert rows["Q170002"]["has_enwiki"]
    assert [r["has_enwiki"] for r in rows.values()] == ["enwiki" in EXPECTED[q]["editions"] for q in rows]
    # The endpoint was checked before the first call; then generate, refine twice (the third
    # pass asks what the second did: a cache hit), translate and score each article, and check
    # those that scored 5 on everything for giving their answer away.
    assert run["probes"] and run["probes"][0].startswith("/v1/models")
    assert len(run["calls"]) == 6 * len(JA) - 1


def test_eval_freeform_writes_results(run):
    out = run["work"] / "results" / "tiny"
    summary = json.loads((out / "summary.json").read_text())
    n = pq.ParquetFile(run["work"] / "qa" / "freeform.parquet").metadata.num_rows
    assert summary["mode"] == "freeform" and summary["n"] == n and summary["failed"] == 0
    assert 0 <= summary["exact"] <= 1 and "ja" in json.dumps(summary["by_language"])
    assert summary["signature"].startswith("wikiorigin-eval|task:freeform|")
    assert pq.ParquetFile(out / "items.parquet").metadata.num_rows == n
    assert (out / "report.md").read_text().strip()


def test_build_card_describes_the_dataset(run):
    card = (run["work"] / "qa" / "README.md").read_text()
    n = pq.ParquetFile(run["work"] / "qa" / "freeform.parquet").metadata.num_rows
    from huggingface_hub import DatasetCard

    meta = DatasetCard.load(run["work"] / "qa" / "README.md").data
    assert meta.license == "cc-by-sa-4.0" and meta.language == ["en", "ja"]
    assert "- split: freeform\n    path: freeform.parquet" in card and "failed.parquet" not in card  # no split
    assert "# WikiOriginQA (ja, bundled sample)" in card and f"{n} rows in 1 file(s)" in card
    assert '"generator": "loopback-gen"' in card
    datasets = pytest.importorskip("datasets")
    loaded = datasets.load_dataset(str(run["work"] / "qa"), split="freeform")
    assert loaded.num_rows == n and loaded[0]["answers"]


def test_card_names_the_language_of_the_questions(run):
    card = (run["work"] / "qa" / "README.md").read_text()
    assert "language:\n- en\n- ja\n" in card  # the questions in English, their source in Japanese


def test_every_wiki_s_multistream_matches_its_stubs():
    """Each wiki of the tree: the multistream dump holds the stub's pages (talk pages aside) with
    the same ids, titles and last revisions, and the Wikidata dump's sitelinks name them."""
    import gzip
    import re

    from wikiorigin.dumps.pages import Multistream
    from wikiorigin.dumps.wikidata import read_entities

    page = re.compile(r"<title>([^<]*)</title>\s*<ns>(\d+)</ns>\s*<id>(\d+)</id>(.*?)</page>", re.S)
    sitelinks = {}
    for entity in read_entities(
        TREE / "wikidatawiki" / "entities" / recipe.WIKIDATA_DATE / f"wikidata-{recipe.WIKIDATA_DATE}-all.json.gz"
    ):
        for wiki, title in entity.sitelinks.items():
            sitelinks[wiki, title] = entity.qid
    unlinked = []
    for wiki in recipe.tree_wikis():
        run = TREE / wiki / recipe.DATE
        stub = gzip.decompress((run / f"{wiki}-{recipe.DATE}-stub-meta-history.xml.gz").read_bytes()).decode()
        pages = {
            int(i): (
                t.replace("&amp;", "&"),
                int(ns),
                int(re.findall(r"<revision>\s*<id>(\d+)", rest)[-1]),
                "<redirect" in rest,
            )
            for t, ns, i, rest in page.findall(stub)
        }
        dump = Multistream(
            run / f"{wiki}-{recipe.DATE}-pages-articles-multistream.xml.bz2",
            run / f"{wiki}-{recipe.DATE}-pages-articles-multistream-index.txt.bz2",
        )
        assert dump.site.dbname == wiki
        assert sorted(dump.page_ids()) == sorted(i for i, (_, ns, _, _) in pages.items() if ns % 2 == 0)
        for page_id, text in dump.get(dump.page_ids(), follow_redirects=False).items():
            title, ns, revision, redirect = pages[page_id]
            assert (text.title, text.revision_id, text.redirect is not None) == (title, revision, redirect)
            if ns == 0 and not redirect and (wiki, title) not in sitelinks:
                unlinked.append((wiki, title))
    # Q1008 has two dewiki pages (Wikidata links one); item 22 (jawiki's alone, eowiki having no
    # page_props) is the one the Wikidata dump leaves out.
    assert unlinked == [("dewiki", "Doppel"), ("eowiki", "Item 22 (eowiki)"), ("jawiki", "Item 22 (jawiki)")]


@pytest.mark.slow
def test_download_all_passes_over_what_the_mirror_lacks(tmp_path, capsys):
    """`download all` from a mirror that holds 8 of the open Wikipedias: the others are notes,
    not the end of the run; the Wikidata dump is found by its own date, not the wikis' --date."""
    with Mirror(TREE) as mirror:
        fetch = ["--mirror", mirror.url, "--out", str(tmp_path / "dumps"), "--contact", "t@example.org"]
        assert main(["download", "all", "--kinds", "stubs", "--dry-run", *fetch]) == 0
        said = capsys.readouterr()
        assert "abwiki: skipped (" in said.err and "jawiki-20260801-stub-meta-history" in said.out
        assert (
            main(["download", "ja", "--kinds", "multistream,wikidata", "--date", "20260801", "--dry-run", *fetch]) == 0
        )
        assert "wikidata-20260803-all.json.gz" in capsys.readouterr().out
        assert main(["download", "jawiki", "abwiki", "--kinds", "stubs", "--dry-run", *fetch]) == 2
        assert "abwiki" in capsys.readouterr().err
