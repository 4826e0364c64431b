"""Origins and corpora have the shape of every stage: a config, a run, and a result with a
``signature`` (the settings, and each input by name and SHA-256) and ``save()``; the run is
guarded whoever calls it (a second run on the same output is refused)."""

import hashlib
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import wikiorigin as wo
from wikiorigin.dumps.pages import Multistream
from wikiorigin.errors import ParameterError
from wikiorigin.lock import RunLock
from wikiorigin.testing import write_items

DATA = Path(__file__).resolve().parent / "data"
DUMPS = DATA / "dumps"
WD = "wikidata-20151109-five-entities.json"


def _sha(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def test_an_origins_run_returns_a_signed_result_that_saves(tmp_path):
    tree = tmp_path / "tree"
    shutil.copytree(DATA / "tree", tree)
    out = tmp_path / "origins.parquet"
    config = wo.OriginsConfig(wikis=("jawiki", "enwiki"))
    result = wo.OriginsRun(config).run(tree, out)
    assert isinstance(result, wo.OriginsResult) and result.path == out
    assert result.origins.items == result.table().num_rows == pq.read_metadata(out).num_rows > 0
    assert [s.wiki for s in result.shards] == ["jawiki", "enwiki"] and result.skipped == []
    assert result.signature.startswith("origins|source:stubs|wikis:jawiki,enwiki|in:")
    first = result.inputs[0]
    assert f"|in:{first.name}={_sha(first)[:12]}|" in result.signature
    assert result.signature.endswith(f"|version:{wo.__version__}")
    assert result.save(tmp_path / "copy.parquet").read_bytes() == out.read_bytes()
    assert result.save(out) == out  # its own file: nothing written
    with RunLock(out), pytest.raises(ParameterError, match="is being written by another run"):
        wo.OriginsRun(config).run(tree, out)
    with pytest.raises(wo.WikioriginError, match="one of stubs, export, history"):
        wo.OriginsConfig(source="dumps")
    out.unlink()
    with pytest.raises(wo.WikioriginError, match="the run's output is gone"):
        result.save(tmp_path / "again.parquet")


@pytest.mark.slow
def test_a_corpus_run_returns_a_signed_result_that_saves(ja_multistream, tmp_path):
    items, out = tmp_path / "items.parquet", tmp_path / "articles.parquet"
    write_items(items, [("Q1", "jawiki", 56, "地理"), ("Q8", "jawiki", 272, "個人")])
    dump = Multistream(*ja_multistream[:2])
    run = wo.OriginCorpusRun(wo.OriginCorpusConfig(text="wikitext"))
    result = run.run(items, dump, out, wikidata=DUMPS / WD)
    assert isinstance(result, wo.CorpusResult) and result.path == out
    assert result.counts["articles"] == result.report.articles == result.table().num_rows == 2
    assert result.counts["missing_entities"] == 0 and result.report.wiki == "jawiki"
    assert result.signature.startswith("corpus|corpus:origin|text:wikitext (")
    assert "|wiki:jawiki|in:items.parquet=" in result.signature
    assert f"in:items.parquet={_sha(items)[:12]}" in result.signature
    assert f"in:{WD}={_sha(DUMPS / WD)[:12]}" in result.signature
    assert result.save(tmp_path / "saved.parquet").read_bytes() == out.read_bytes()
    with pytest.raises(wo.WikioriginError, match="the output would overwrite the input"):
        result.save(items)
    with RunLock(out), pytest.raises(ParameterError, match="is being written by another run"):
        run.run(items, dump, out, wikidata=DUMPS / WD)
    # the list corpus: the same shape
    listed = wo.ListCorpusRun(wo.ListCorpusConfig(list_page="日本の妖怪一覧", text="wikitext"))
    found = listed.run(dump, tmp_path / "list.parquet")
    assert isinstance(found, wo.CorpusResult) and found.counts["articles"] == found.report.articles == 5
    assert found.signature.startswith("corpus|corpus:list|list_page:日本の妖怪一覧|text:wikitext (")
    assert found.save(tmp_path / "list-copy.parquet").read_bytes() == (tmp_path / "list.parquet").read_bytes()
