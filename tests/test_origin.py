import json
import shutil

import pyarrow.parquet as pq
import pytest

from wikiorigin.cli import main
from wikiorigin.errors import WikioriginError
from wikiorigin.files import read_provenance
from wikiorigin.origin import SHARD_VERSION, build_origins, reduce_origins, shard_dir_for, subset
from wikiorigin.schemas import ORIGINS


@pytest.fixture()
def tree(tmp_path, data_dir):
    copy = tmp_path / "tree"
    shutil.copytree(data_dir.parent / "tree", copy)
    return copy


def expected(tree):
    return json.loads((tree / "EXPECTED.json").read_text())


def check_against_expected(path, answers):
    rows = {r["qid"]: r for r in pq.read_table(path).to_pylist()}
    assert set(rows) == set(answers)
    for qid, want in answers.items():
        got = rows[qid]
        assert got["origin_wiki"] == want["origin_wiki"], qid
        assert got["origin_created_at"].strftime("%Y-%m-%dT%H:%M:%SZ") == want["origin_created_at"]
        assert got["n_wikis"] == want["n_wikis"] and got["tied"] == want["tied"]
        assert [e["wiki"] for e in got["editions"]] == want["editions"]
        assert got["has_enwiki"] == ("enwiki" in want["editions"])
        if want["n_wikis"] == 1:
            assert got["runner_up_wiki"] is None and got["lead_days"] is None
        else:
            assert got["runner_up_wiki"] == want["editions"][1] and got["lead_days"] >= 0
    return rows


def test_origins_match_the_known_answers(tree, tmp_path):
    out = tmp_path / "origins.parquet"
    report = build_origins(tree, out)
    rows = check_against_expected(out, expected(tree))
    assert report.skipped == [("eowiki", f"no page_props in {tree / 'eowiki' / '20260801'}")]
    assert pq.read_schema(out).remove_metadata() == ORIGINS
    # the hand-written cases (scripts/make_fixtures.py)
    assert rows["Q170002"]["origin_wiki"] == "jawiki" and rows["Q170002"]["origin_title"] == "河童"
    assert rows["Q1001"]["origin_wiki"] == "enwiki"  # dewiki's older revision was imported
    assert rows["Q1002"]["tied"] and rows["Q1002"]["origin_wiki"] == "jawiki"
    assert rows["Q1003"]["n_wikis"] == 1
    assert rows["Q1004"]["origin_wiki"] == "zh_yuewiki"  # its earlier redirect does not count
    assert rows["Q1005"]["n_wikis"] == 1  # kowiki's page has only imported revisions
    assert rows["Q1006"]["origin_wiki"] == "enwiki"  # the jawiki talk page is no article
    q1008 = rows["Q1008"]  # two dewiki pages with one item: the earlier, once
    assert [(e["wiki"], e["page_id"]) for e in q1008["editions"]] == [("dewiki", 20), ("fiwiki", 19)]
    meta = read_provenance(out)
    assert meta["stage"] == "origins" and meta["skipped"][0]["wiki"] == "eowiki"
    assert {w["wiki"] for w in meta["wikis"]} == {
        "jawiki",
        "enwiki",
        "dewiki",
        "kowiki",
        "fiwiki",
        "zh_yuewiki",
        "be_x_oldwiki",
    }


def test_shards_are_reused_and_rebuilt_when_inputs_change(tree, tmp_path):
    out = tmp_path / "origins.parquet"
    first = build_origins(tree, out)
    assert not any(r.reused for r in first.shards)
    before = out.read_bytes()
    second = build_origins(tree, out)
    assert all(r.reused for r in second.shards)
    assert out.read_bytes() == before
    stub = tree / "fiwiki" / "20260801" / "fiwiki-20260801-stub-meta-history.xml.gz"
    stub.write_bytes(stub.read_bytes())  # same bytes, new mtime: the inputs "changed"
    third = build_origins(tree, out)
    assert [r.wiki for r in third.shards if not r.reused] == ["fiwiki"]
    assert out.read_bytes() == before


def test_shard_of_an_older_version_is_rebuilt_and_reported(tree, tmp_path):
    out = tmp_path / "origins.parquet"
    build_origins(tree, out)
    shard = shard_dir_for(out) / "pages" / "kowiki.parquet"
    table = pq.read_table(shard)
    meta = json.loads(table.schema.metadata[b"wikiorigin"])
    meta["shard_version"] = SHARD_VERSION - 1
    pq.write_table(table.replace_schema_metadata({b"wikiorigin": json.dumps(meta).encode()}), shard)
    report = build_origins(tree, out)
    assert [r.wiki for r in report.shards if not r.reused] == ["kowiki"]
    assert any("kowiki.parquet: written by an older version" in n for n in report.notes)
    check_against_expected(out, expected(tree))


def test_malformed_qid_is_reported(tree, tmp_path):
    import gzip

    props = tree / "dewiki" / "20260801" / "dewiki-20260801-page_props.sql.gz"
    text = gzip.decompress(props.read_bytes()).decode()
    props.write_bytes(gzip.compress(text.replace("'Q1001'", "'Qxyz'").encode()))
    report = build_origins(tree, tmp_path / "origins.parquet")
    assert any("not a QID: 'Qxyz'" in n for n in report.notes)


def test_damaged_wiki_stops_the_run_and_keeps_the_others(tree, tmp_path):
    stub = tree / "kowiki" / "20260801" / "kowiki-20260801-stub-meta-history.xml.gz"
    stub.write_bytes(stub.read_bytes()[:200])
    out = tmp_path / "origins.parquet"
    with pytest.raises(
        WikioriginError, match=r"1 of 7 wikis failed .*kowiki-20260801-stub-meta-history\.xml\.gz: gzip data is corrupt"
    ):
        build_origins(tree, out)
    assert not out.exists()
    assert (shard_dir_for(out) / "pages" / "jawiki.parquet").exists()


@pytest.mark.slow
def test_parallel_jobs_give_the_same_bytes(tree, tmp_path):
    one, two = tmp_path / "one" / "origins.parquet", tmp_path / "two" / "origins.parquet"
    build_origins(tree, one, jobs=1)
    build_origins(tree, two, jobs=2)
    assert one.read_bytes() == two.read_bytes()


@pytest.mark.slow
def test_dask_local_cluster_gives_the_same_bytes(tree, tmp_path):
    distributed = pytest.importorskip("dask.distributed", reason="the dask extra is not installed")
    local = tmp_path / "local" / "origins.parquet"
    build_origins(tree, local)
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, host="127.0.0.1"
    ) as cluster:
        out = tmp_path / "dask" / "origins.parquet"
        build_origins(tree, out, scheduler=cluster.scheduler_address)
    assert out.read_bytes() == local.read_bytes()


@pytest.mark.slow
def test_unreachable_scheduler(tree, tmp_path, capsys):
    pytest.importorskip("dask.distributed", reason="the dask extra is not installed")
    code = main(["origins", str(tree), "--out", str(tmp_path / "o.parquet"), "--scheduler", "tcp://127.0.0.1:9"])
    err = capsys.readouterr().err
    assert code == 2 and "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in err


def test_split_shards_reduce_to_the_same_origins(tree, tmp_path):
    """Origins of a dump split into parts equal those of the whole."""
    out = tmp_path / "whole.parquet"
    build_origins(tree, out)
    shards = shard_dir_for(out)
    editions = sorted((shards / "editions").glob("*.parquet"))
    parts = []
    for i, path in enumerate(editions):
        table = pq.read_table(path)
        half = table.num_rows // 2
        for j, piece in enumerate((table.slice(0, half), table.slice(half))):
            parts.append(tmp_path / f"part-{i}-{j}.parquet")
            pq.write_table(piece, parts[-1])
    split = tmp_path / "split.parquet"
    reduce_origins(parts, split)
    assert pq.read_table(split).equals(pq.read_table(out))


@pytest.mark.slow
def test_subset_and_cli(tree, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("WIKIORIGIN_PROGRESS_SECONDS", "0")
    out = tmp_path / "origins.parquet"
    assert main(["origins", str(tree), "--out", str(out), "--jobs", "2"]) == 0
    captured = capsys.readouterr()
    assert "384 items from 7 wikis" in captured.out and "skipped eowiki" in captured.err
    assert "origins: 7/7 tasks (" in captured.err and "MB of XML scanned)" in captured.err
    answers = expected(tree)
    ja = [q for q, a in answers.items() if a["origin_wiki"] == "jawiki"]
    items = tmp_path / "ja.parquet"
    assert main(["subset", str(out), "--wiki", "ja", "--out", str(items)]) == 0
    assert sorted(pq.read_table(items)["qid"].to_pylist()) == sorted(ja)
    multi = [q for q in ja if answers[q]["n_wikis"] >= 2]
    assert subset(out, "jawiki", tmp_path / "m.parquet", min_editions=2) == len(multi)
    first = subset(out, "jawiki", tmp_path / "s1.parquet", sample=5, seed=3)
    again = subset(out, "jawiki", tmp_path / "s2.parquet", sample=5, seed=3)
    assert first == 5 and (tmp_path / "s1.parquet").read_bytes() == (tmp_path / "s2.parquet").read_bytes()
    picked = pq.read_table(tmp_path / "s1.parquet")["qid"].to_pylist()
    assert set(picked) <= set(ja) and again == 5


def test_tree_without_any_usable_wiki(tmp_path):
    (tmp_path / "jawiki" / "20260801").mkdir(parents=True)
    with pytest.raises(WikioriginError, match="no wiki with stubs files and page_props found; jawiki: no page_props"):
        build_origins(tmp_path, tmp_path / "o.parquet")


def test_groups_spanning_batches(tree, tmp_path):
    """Items whose editions straddle the reader's batches come out whole."""
    out = tmp_path / "whole.parquet"
    build_origins(tree, out)
    editions = sorted((shard_dir_for(out) / "editions").glob("*.parquet"))
    for batch_rows in (1, 2, 7, 50):
        small = tmp_path / f"b{batch_rows}.parquet"
        reduce_origins(editions, small, batch_rows=batch_rows)
        assert pq.read_table(small).equals(pq.read_table(out)), batch_rows


def _page_props(path, records, qid_of):
    from wikiorigin.testing import gzip_text as _gzip_text, write_page_props_sql

    rows = [(r.page_id, "wikibase_item", qid_of(r).encode()) for r in records if r.namespace == 0]
    with _gzip_text(path) as f:
        write_page_props_sql(f, rows)


@pytest.mark.parametrize("source", ["export", "history"])
def test_other_sources(tmp_path, source):
    """File Export (full history, bz2) and MediaWiki history TSV trees give the same origins
    as the rules say."""
    import bz2
    import io

    from wikiorigin.testing import write_history_tsv, write_history_xml

    tree = tmp_path / "tree"
    qid_of = lambda r: f"Q{r.page_id % 40 + 1}"  # noqa: E731  items shared by both wikis
    expected = {}
    for seed, wiki in ((1, "jawiki"), (2, "kowiki")):
        run = tree / wiki / "20260801"
        run.mkdir(parents=True)
        buffer = io.BytesIO()
        records = list(write_history_xml(buffer, 80_000, seed=seed, with_text=True, dbname=wiki))
        if source == "export":
            (run / f"{wiki}-20260801-p1p9999.xml.bz2").write_bytes(bz2.compress(buffer.getvalue()))
        else:
            month = tree / "other" / "mediawiki_history" / "2026-07" / wiki
            month.mkdir(parents=True)
            text = io.StringIO()
            write_history_tsv(text, records, wiki=wiki)
            (month / f"2026-07.{wiki}.all-time.tsv.bz2").write_bytes(bz2.compress(text.getvalue().encode()))
        _page_props(run / f"{wiki}-20260801-page_props.sql.gz", records, qid_of)
        for r in records:
            # the history dumps' page_creation_timestamp: a page of imported revisions only
            # is dated by its first revision there (see write_history_tsv)
            created = r.created_at if source == "export" else (r.created_at or r.first_revision_at)
            if r.namespace == 0 and not r.is_redirect and created is not None:
                best = expected.setdefault(qid_of(r), {}).get(wiki)
                if best is None or (created, r.page_id) < best:
                    expected[qid_of(r)][wiki] = (created, r.page_id)
    out = tmp_path / "origins.parquet"
    build_origins(tree, out, source=source)
    rows = {r["qid"]: r for r in pq.read_table(out).to_pylist()}
    assert set(rows) == set(expected)
    for qid, per_wiki in expected.items():
        order = sorted((created, wiki) for wiki, (created, _) in per_wiki.items())
        assert [e["wiki"] for e in rows[qid]["editions"]] == [w for _, w in order]


def test_subset_of_a_file_that_is_not_origins(tmp_path, capsys):
    """A missing file, a pages file or a text file given to subset: one line, exit 2."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from wikiorigin.cli import main

    pages = tmp_path / "pages.parquet"
    pq.write_table(pa.table({"wiki": ["jawiki"], "page_id": [1]}), pages)
    (tmp_path / "notes.txt").write_text("not parquet")
    for given, said in (
        (tmp_path / "none.parquet", "none.parquet: no such file (make one with `wikiorigin origins`)"),
        (pages, "pages.parquet: not the output of `wikiorigin origins`: no column qid, origin_wiki"),
        (tmp_path / "notes.txt", "notes.txt: not a Parquet file"),
    ):
        assert main(["subset", str(given), "--wiki", "jawiki", "--out", str(tmp_path / "s.parquet")]) == 2
        err = capsys.readouterr().err
        assert said in err and len(err.strip().splitlines()) == 1


def test_memory_limit_is_checked_at_the_command_line(tmp_path, capsys):
    import pytest as _pytest

    from wikiorigin.cli import main

    with _pytest.raises(SystemExit) as stop:
        main(["origins", str(tmp_path), "--out", str(tmp_path / "o.parquet"), "--memory-limit", "lots"])
    assert stop.value.code == 2 and "'lots' is not a memory size such as 4GB" in capsys.readouterr().err


def test_a_subset_with_no_items_is_one_line_and_no_file(tree, tmp_path, capsys):
    """An items file of no items is refused where it would be made (a wiki no item originates
    in, filters that leave none), not written for `corpus origin` to make an empty corpus of."""
    origins = tmp_path / "origins.parquet"
    assert main(["origins", str(tree), "--out", str(origins)]) == 0
    capsys.readouterr()
    out = tmp_path / "fr.parquet"
    assert main(["subset", str(origins), "--wiki", "fr", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        f"wikiorigin: error: {origins}: no item originates in frwiki (they originate in zh_yuewiki (77), "
    )
    assert err.count("\n") == 1 and "Traceback" not in err and not out.exists()
    assert main(["subset", str(origins), "--wiki", "ja", "--min-editions", "50", "--out", str(out)]) == 2
    assert capsys.readouterr().err == (
        f"wikiorigin: error: {origins}: none of its 61 items of jawiki passes min_editions=50; nothing written\n"
    )
    assert not out.exists()


@pytest.mark.parametrize("cut", ["mid-page", "after a page"])
def test_a_stub_file_cut_short_fails_its_wiki_however_it_is_cut(tree, tmp_path, capsys, cut):
    """A whole gzip stream of XML that ends early (mid-page, or after a page with no
    </mediawiki>) is no whole wiki: its items would originate elsewhere, exit 0."""
    import gzip

    stub = next((tree / "kowiki").rglob("*stub-meta-history.xml.gz"))
    xml = gzip.decompress(stub.read_bytes())
    end = len(xml) * 2 // 3
    end = end if cut == "mid-page" else xml.rindex(b"</page>", 0, end) + len(b"</page>\n")
    stub.write_bytes(gzip.compress(xml[:end]))
    out = tmp_path / "origins.parquet"
    for _ in range(2):  # the partial shard is never reused
        assert main(["origins", str(tree), "--out", str(out)]) == 2
        err = capsys.readouterr().err
        (line,) = [e for e in err.splitlines() if e.startswith("wikiorigin: error: ")]
        assert f"{stub}: near decompressed byte" in line and ": the file is cut short; the " in line
        assert "kowiki.partial.parquet" in line and not out.exists()


def test_a_history_tsv_cut_mid_line_fails_its_wiki(tmp_path, capsys):
    """A TSV has no closing element: a last line without its newline is the sign of a file cut
    short (its later pages' items would originate elsewhere, exit 0)."""
    import bz2
    import io

    from wikiorigin.testing import write_history_tsv, write_history_xml

    tree = tmp_path / "tree"
    for seed, wiki in ((1, "jawiki"), (2, "kowiki")):
        (tree / wiki / "20260801").mkdir(parents=True)
        records = list(write_history_xml(io.BytesIO(), 80_000, seed=seed, with_text=True, dbname=wiki))
        month = tree / "other" / "mediawiki_history" / "2026-07" / wiki
        month.mkdir(parents=True)
        text = io.StringIO()
        write_history_tsv(text, records, wiki=wiki)
        data = text.getvalue().encode()
        data = data[: len(data) * 2 // 3] if wiki == "kowiki" else data
        (month / f"2026-07.{wiki}.all-time.tsv.bz2").write_bytes(bz2.compress(data))
        _page_props(tree / wiki / "20260801" / f"{wiki}-20260801-page_props.sql.gz", records, lambda r: f"Q{r.page_id}")
    out = tmp_path / "origins.parquet"
    assert main(["origins", str(tree), "--source", "history", "--out", str(out)]) == 2
    (line,) = [e for e in capsys.readouterr().err.splitlines() if e.startswith("wikiorigin: error: ")]
    assert "1 of 2 wikis failed" in line and line.endswith(
        "2026-07.kowiki.all-time.tsv.bz2: line 73: the file ends mid-line: cut short"
    )
    assert not out.exists()


def test_a_page_props_dump_cut_after_an_insert_fails_its_wiki(tree, tmp_path, capsys):
    """Cut after a whole INSERT, in a whole gzip stream: every statement reads, but the dump's
    UNLOCK TABLES never comes; the items of the missing statements would be lost, exit 0."""
    import gzip

    props = next((tree / "fiwiki").rglob("*page_props.sql.gz"))
    sql = gzip.decompress(props.read_bytes())
    props.write_bytes(gzip.compress(sql[: sql.rindex(b");\n", 0, len(sql) * 2 // 3) + 3]))
    out = tmp_path / "origins.parquet"
    assert main(["origins", str(tree), "--out", str(out)]) == 2
    (line,) = [e for e in capsys.readouterr().err.splitlines() if e.startswith("wikiorigin: error: ")]
    assert "1 of 7 wikis failed" in line and f"{props}: byte " in line
    assert line.endswith(": the file ends before UNLOCK TABLES: cut short") and not out.exists()
    assert main(["qids", str(props), "--wiki", "fi", "--out", str(tmp_path / "q.parquet")]) == 2
    assert capsys.readouterr().err.endswith(": the file ends before UNLOCK TABLES: cut short\n")


def test_the_shards_directory_is_checked_before_any_work(tree, tmp_path, capsys):
    """OUT.shards is the run's: a file there is kept, and a link to the dump tree (or into it)
    is refused, or the shards would be written, and swept, among the dumps."""
    notes = tmp_path / "a.shards"
    notes.write_text("my notes", encoding="utf-8")
    assert main(["origins", str(tree), "--out", str(tmp_path / "a.parquet")]) == 2
    assert capsys.readouterr().err == (
        f"wikiorigin: error: {notes}: not a directory, where the run keeps its shards; move it\n"
    )
    assert notes.read_text(encoding="utf-8") == "my notes"
    before = sorted(p.relative_to(tree) for p in tree.rglob("*"))
    for target in (tree, tree / "jawiki"):
        link = tmp_path / f"{target.name}.shards"
        link.symlink_to(target)
        assert main(["origins", str(tree), "--out", str(tmp_path / f"{target.name}.parquet")]) == 2
        assert capsys.readouterr().err == (
            f"wikiorigin: error: {link}: the shards would be written in the dump tree {tree}; give another out\n"
        )
    assert sorted(p.relative_to(tree) for p in tree.rglob("*")) == before
    assert main(["origins", str(tree), "--out", str(tree / "origins.parquet")]) == 0  # an output in the tree
