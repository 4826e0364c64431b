import gzip

import pyarrow.parquet as pq
import pytest

from wikiorigin.cli import main
from wikiorigin.files import read_provenance
from wikiorigin.schemas import PAGES, QIDS


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.slow
def test_scan_writes_the_pages_schema(tmp_path, data_dir, capsys):
    out = tmp_path / "pages" / "simplewiki.parquet"
    code, stdout, _ = run(
        capsys,
        "scan",
        data_dir / "simplewiki-pages-meta-history-excerpt-export-0.10.xml",
        data_dir / "simplewiki-file-export-v2-export-0.11.xml",
        "--wiki",
        "simple",
        "--out",
        out,
    )
    assert code == 0
    assert "simplewiki: 4 pages, 66 revisions (0 imported)" in stdout and "MB/s" in stdout
    table = pq.read_table(out)
    assert table.schema.remove_metadata() == PAGES
    assert set(table["wiki"].to_pylist()) == {"simplewiki"}
    meta = read_provenance(out)
    assert meta["stage"] == "scan" and meta["engine"] == "fast" and meta["wiki"] == "simplewiki"
    assert [i["file"] for i in meta["inputs"]][0].startswith("simplewiki-pages-meta-history")
    assert not list(tmp_path.glob("pages/.*tmp"))


def test_both_engines_through_the_cli(tmp_path, data_dir, capsys):
    sample = data_dir / "elwikivoyage-stub-meta-history-sample.xml.gz"
    tables = {}
    for engine in ("fast", "mwxml"):
        out = tmp_path / f"{engine}.parquet"
        code, stdout, _ = run(
            capsys,
            "scan",
            sample,
            "--wiki",
            "elwikivoyage",
            "--allow-non-wikipedia",
            "--engine",
            engine,
            "--out",
            out,
            "--namespaces",
            "0,4",
        )
        assert code == 0 and "0.1 MB of XML" in stdout  # decompressed bytes, for both engines
        tables[engine] = pq.read_table(out)
    fast, oracle = (t.replace_schema_metadata(None) for t in tables.values())
    assert fast.equals(oracle) and fast.num_rows > 0
    assert set(fast["namespace"].to_pylist()) <= {0, 4}


def test_scan_duckdb_reads_it(tmp_path, data_dir, capsys):
    import duckdb

    out = tmp_path / "el.parquet"
    run(
        capsys,
        "scan",
        data_dir / "elwikivoyage-stub-meta-history-sample.xml.gz",
        "--wiki",
        "elwikivoyage",
        "--allow-non-wikipedia",
        "--out",
        out,
    )
    [(n, imported)] = duckdb.sql(f"SELECT count(*), sum(imported_revisions) FROM '{out}'").fetchall()
    assert (n, imported) == (20, 3)


def test_not_a_wikipedia(tmp_path, data_dir, capsys):
    code, _, err = run(
        capsys,
        "scan",
        data_dir / "simplewiki-file-export-v2-export-0.11.xml",
        "--wiki",
        "klingonwiki",
        "--out",
        tmp_path / "x.parquet",
    )
    assert code == 2
    assert err.strip().startswith("wikiorigin: error: not a Wikipedia edition: 'klingonwiki'")
    assert len(err.strip().splitlines()) == 1


def test_dump_of_another_wiki(tmp_path, data_dir, capsys):
    code, _, err = run(
        capsys,
        "scan",
        data_dir / "simplewiki-file-export-v2-export-0.11.xml",
        "--wiki",
        "ja",
        "--out",
        tmp_path / "x.parquet",
    )
    assert code == 2 and "this dump is of simplewiki, not of jawiki" in err


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["gzip", "bzip2"])
def test_torn_file_keeps_the_pages_before(tmp_path, synthetic_stub, capsys, fmt):
    import bz2

    path, expected = synthetic_stub
    data = path.read_bytes()
    if fmt == "bzip2":
        data = bz2.compress(gzip.decompress(data))
    torn = tmp_path / "torn.xml.gz"
    torn.write_bytes(data[: len(data) // 2])
    out = tmp_path / "out.parquet"
    code, _, err = run(capsys, "scan", torn, "--wiki", "testwiki", "--allow-non-wikipedia", "--out", out)
    assert code == 2 and not out.exists()
    assert f"torn.xml.gz: {fmt} data is corrupt or truncated near compressed byte" in err
    partial = tmp_path / "out.partial.parquet"
    assert "kept in" in err and str(partial) in err
    kept = pq.read_table(partial)["page_id"].to_pylist()
    assert 0 < len(kept) < len(expected)
    assert kept == [r.page_id for r in expected[: len(kept)]]


def test_file_that_is_not_a_dump(tmp_path, capsys):
    path = tmp_path / "readme.txt"
    path.write_text("just words\n")
    code, _, err = run(capsys, "scan", path, "--wiki", "ja", "--out", tmp_path / "x.parquet")
    assert code == 2 and "readme.txt: neither a MediaWiki XML export nor" in err


def test_qids_cli(tmp_path, data_dir, capsys):
    out = tmp_path / "qids.parquet"
    code, stdout, err = run(
        capsys, "qids", data_dir / "testwiki-page_props-synthetic.sql.gz", "--wiki", "simplewiki", "--out", out
    )
    assert code == 0 and "124 pages with a Wikidata item" in stdout and "not-a-qid" in err
    table = pq.read_table(out)
    assert table.schema.remove_metadata() == QIDS
    assert all(q.startswith("Q") for q in table["qid"].to_pylist())


def test_qids_of_another_table(tmp_path, data_dir, capsys):
    code, _, err = run(
        capsys,
        "qids",
        data_dir / "simplewiki-change_tag_def.sql.gz",
        "--wiki",
        "simplewiki",
        "--out",
        tmp_path / "q.parquet",
    )
    assert code == 2 and "found table `change_tag_def`" in err


def test_scan_mediawiki_history_tsv(tmp_path, capsys):
    import bz2
    import io

    from wikiorigin.testing import write_history_tsv, write_history_xml

    records = list(write_history_xml(io.BytesIO(), 200_000, seed=6))
    text = io.StringIO()
    write_history_tsv(text, records, wiki="jawiki")
    path = tmp_path / "2026-09.jawiki.all-time.tsv.bz2"
    path.write_bytes(bz2.compress(text.getvalue().encode()))
    out = tmp_path / "jawiki.parquet"
    code, stdout, _ = run(capsys, "scan", path, "--wiki", "jawiki", "--out", out, "--namespaces", "0")
    assert code == 0 and "jawiki:" in stdout
    table = pq.read_table(out)
    expected = [r for r in records if r.namespace == 0]
    assert table["page_id"].to_pylist() == [r.page_id for r in expected]
    assert table.schema.remove_metadata() == PAGES


def test_a_part_given_twice_is_refused_not_counted_twice(tmp_path, data_dir, capsys):
    stub = data_dir.parent / "tree" / "jawiki" / "20260801" / "jawiki-20260801-stub-meta-history.xml.gz"
    link = tmp_path / "again.xml.gz"
    link.symlink_to(stub)
    out = tmp_path / "pages.parquet"
    for second in (stub, link):
        code, _, err = run(capsys, "scan", stub, second, "--wiki", "ja", "--out", out)
        assert (code, err) == (
            2,
            f"wikiorigin: error: {second}: given twice (as {stub}); give each part of the dump once\n",
        )
        assert not out.exists()
