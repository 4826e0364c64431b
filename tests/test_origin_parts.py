"""Origins scheduled per dump file (issue 22): a wiki whose stub-meta-history comes in parts is
scanned a task per part (and one for its page_props), merged into its editions as soon as its
last task is in; the origins are those of the same pages in one file, for any number of jobs."""

import gzip
import os
import re
import shutil

import pyarrow.parquet as pq
import pytest

from wikiorigin.dumps.layout import find_inputs
from wikiorigin.errors import WikioriginError
from wikiorigin.origin import _plan, build_origins, scan_wiki, shard_dir_for
from wikiorigin.parallel import run_tasks

PAGE = re.compile(rb"  <page>.*?</page>\n", re.S)
RUN = "20260801"


def split_stub(tree, wiki: str, parts: int) -> list:
    """Cut ``wiki``'s stub-meta-history into ``parts`` files (``...-stub-meta-history1.xml.gz``,
    ...), each the same header, a run of consecutive pages and the footer, as Wikimedia splits
    a big wiki's dump by page id; the whole file is removed."""
    whole = tree / wiki / RUN / f"{wiki}-{RUN}-stub-meta-history.xml.gz"
    data = gzip.decompress(whole.read_bytes())
    pages = PAGE.findall(data)
    head, foot = data[: data.index(pages[0])], data[data.rindex(pages[-1]) + len(pages[-1]) :]
    size = -(-len(pages) // parts)
    paths = []
    for k in range(parts):
        path = whole.with_name(f"{wiki}-{RUN}-stub-meta-history{k + 1}.xml.gz")
        path.write_bytes(gzip.compress(head + b"".join(pages[k * size : (k + 1) * size]) + foot, mtime=0))
        paths.append(path)
    whole.unlink()
    return paths


@pytest.fixture()
def trees(tmp_path, data_dir):
    """The bundled tree as it is, and a copy with jawiki in 3 parts and enwiki in 2."""
    whole, split = tmp_path / "whole", tmp_path / "split"
    shutil.copytree(data_dir.parent / "tree", whole)
    shutil.copytree(data_dir.parent / "tree", split)
    split_stub(split, "jawiki", 3)
    split_stub(split, "enwiki", 2)
    return whole, split


@pytest.mark.slow
def test_parts_give_the_origins_of_the_whole_for_any_jobs(trees, tmp_path):
    whole, split = trees
    reference = tmp_path / "whole" / "origins.parquet"
    build_origins(whole, reference)
    outs = {}
    for jobs in (1, 2, 3):
        outs[jobs] = tmp_path / f"jobs{jobs}" / "origins.parquet"
        report = build_origins(split, outs[jobs], jobs=jobs)
        ja = next(r for r in report.shards if r.wiki == "jawiki")
        assert len(ja.parts) == 3 and ja.pages is None and ja.editions and not ja.error
        assert [r.wiki for r in report.shards] == [
            "be_x_oldwiki",
            "dewiki",
            "enwiki",
            "fiwiki",
            "jawiki",
            "kowiki",
            "zh_yuewiki",
        ]
    assert outs[1].read_bytes() == outs[2].read_bytes() == outs[3].read_bytes()
    assert pq.read_table(outs[1]).equals(pq.read_table(reference))  # rows and order (not provenance)
    shards = shard_dir_for(outs[1])
    assert sorted(p.name for p in (shards / "pages").glob("jawiki*")) == [
        "jawiki.part1.parquet",
        "jawiki.part2.parquet",
        "jawiki.part3.parquet",
    ]
    whole_editions = shard_dir_for(reference) / "editions" / "jawiki.parquet"
    assert pq.read_table(shards / "editions" / "jawiki.parquet").equals(pq.read_table(whole_editions))


@pytest.mark.slow
def test_part_shards_are_reused_and_one_changed_part_is_scanned_again(trees, tmp_path):
    _, split = trees
    out = tmp_path / "origins.parquet"
    build_origins(split, out, jobs=2)
    before = out.read_bytes()
    again = build_origins(split, out, jobs=2)
    assert all(r.reused for r in again.shards) and out.read_bytes() == before
    part = split / "jawiki" / RUN / f"jawiki-{RUN}-stub-meta-history2.xml.gz"
    part.write_bytes(part.read_bytes())  # same bytes, new mtime: that part "changed"
    third = build_origins(split, out, jobs=2)
    assert [r.wiki for r in third.shards if not r.reused] == ["jawiki"]
    assert next(r for r in third.shards if r.wiki == "jawiki").xml_bytes > 0
    assert out.read_bytes() == before


def test_a_damaged_part_names_its_file_and_the_rest_is_kept(trees, tmp_path):
    _, split = trees
    part = split / "jawiki" / RUN / f"jawiki-{RUN}-stub-meta-history3.xml.gz"
    part.write_bytes(part.read_bytes()[:200])
    out = tmp_path / "origins.parquet"
    with pytest.raises(WikioriginError, match=r"1 of 7 wikis failed .*jawiki-20260801-stub-meta-history3\.xml\.gz"):
        build_origins(split, out, jobs=2)
    assert not out.exists()
    assert (shard_dir_for(out) / "pages" / "jawiki.part1.parquet").exists()
    assert (shard_dir_for(out) / "editions" / "kowiki.parquet").exists()


def test_the_plan_puts_the_largest_files_first(trees):
    _, split = trees
    ready = [find_inputs(split, w) for w in ("kowiki", "jawiki", "enwiki")]
    tasks = _plan(ready, split=True)
    sizes = [t[0] for t in tasks]
    assert sizes == sorted(sizes, reverse=True)
    kinds = sorted((t[2].wiki, t[1].__name__, t[3]) for t in tasks)
    assert kinds == [
        ("enwiki", "scan_items", None),
        ("enwiki", "scan_part", 0),
        ("enwiki", "scan_part", 1),
        ("jawiki", "scan_items", None),
        ("jawiki", "scan_part", 0),
        ("jawiki", "scan_part", 1),
        ("jawiki", "scan_part", 2),
        ("kowiki", "scan_wiki", None),
    ]
    # MediaWiki history TSV files of one wiki are read together: one task per wiki
    assert [t[1] for t in _plan(ready, split=False)] == [scan_wiki] * 3


def test_no_more_workers_than_tasks():
    """One task with --jobs 4 runs here: no worker is started only to wait."""
    assert run_tasks(os.getpid, [()], jobs=4) == [os.getpid()]
    pids = run_tasks(os.getpid, [(), ()], jobs=4)
    assert os.getpid() not in pids
