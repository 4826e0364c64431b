"""Articles converted on several processes and streamed to the writer (issue 22): the same file,
byte for byte, for any number of jobs (and on a Dask cluster), the rows those of converting every
page in one go, in the list's order; pages fetched a window at a time, rows written a row group
at a time."""

import os
import warnings
from contextlib import closing

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.optional import needs, optional
from wikiorigin.cli import main
from wikiorigin.corpora import articles, yokai
from wikiorigin.corpora.articles import article_row
from wikiorigin.corpora.origin import build_origin_corpus
from wikiorigin.corpora.yokai import build_list_corpus, list_links
from wikiorigin.dumps.pages import Multistream, iter_pages
from wikiorigin.parallel import stream_tasks
from wikiorigin.schemas import ARTICLES, ORIGIN_ARTICLES
from wikiorigin.testing import page_xml, write_items, write_multistream

psutil = optional("psutil")  # the test extra's (through ipykernel): the workers are found by it
JA = "jawiki-20230501-pages-articles-multistream_first100k-lines.xml.xz"
LIST = "全記事の一覧"


@pytest.fixture(scope="module")
def every_article(tmp_path_factory, data_dir):
    """The jawiki sample as a multistream dump with a list page linking every page of namespace 0
    (its 189 articles and 15 redirects: two to articles also linked, so duplicates), a section, a
    section it does not have, again the first article (a repeat) and a redirect's target that
    the sample lacks."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pages = list(iter_pages(data_dir / JA, namespaces=[0]))
    lines = [f"* [[{p.title}]]" for p in pages]
    lines += ["* [[音楽家#実演家]]", "* [[音楽家#ない節]]", f"* [[{pages[0].title}]]"]
    redirect = next(p for p in pages if p.redirect)
    lines.append(f"* [[{redirect.redirect}]]")
    text = f"'''{LIST}'''\n== 記事 ==\n" + "\n".join(lines) + "\n"
    d = tmp_path_factory.mktemp("every-article")
    dump, index = d / "dump.xml.bz2", d / "index.txt.bz2"
    write_multistream(data_dir / JA, dump, index, extra_pages=[page_xml(900002, LIST, text)])
    return dump, index


def _one_go(dump: Multistream, schema=ARTICLES) -> pa.Table:
    """The rows as the corpus was built before issue 22: every page fetched, then converted."""
    links = list_links(dump.get([LIST])[LIST].text, dump)
    pages = dump.get([t for t in dict.fromkeys(t for t, _ in links) if dump.entry(t) is not None])
    rows, done = [], set()
    for title, anchor in links:
        page = pages.get(title)
        if page is None or (page.page_id, anchor) in done:
            continue
        done.add((page.page_id, anchor))
        row, _ = article_row(page, "jawiki", "ja.wikipedia.org", dump.site.namespaces, anchor)
        if row is not None:
            rows.append(row)
    return pa.Table.from_pylist(rows, schema=schema)


@pytest.fixture()
def small_pieces(monkeypatch):
    """Windows, tasks and row groups a few pages each, so that the sample crosses many of each."""
    monkeypatch.setattr(yokai, "PAGE_WINDOW", 40)
    monkeypatch.setattr(articles, "TASK_CHARS", 100_000)
    monkeypatch.setattr(yokai, "ARTICLE_GROUP_ROWS", 32)


@pytest.mark.slow
def test_the_same_file_for_any_jobs(every_article, tmp_path, small_pieces):
    outs, reports = {}, {}
    for jobs in (1, 2):
        outs[jobs] = tmp_path / f"jobs{jobs}.parquet"
        reports[jobs] = build_list_corpus(Multistream(*every_article), outs[jobs], list_page=LIST, jobs=jobs)
    assert outs[1].read_bytes() == outs[2].read_bytes()
    r = reports[1]
    assert (r.articles, r.duplicates, r.sections_missing) == (203, 2, ["音楽家#ない節"])
    assert (r.linked, r.found, r.redirected, r.missing) == (207, 204, 2, ["サンドボックス"])
    assert all(getattr(reports[2], f) == getattr(r, f) for f in r.__slots__ if f != "seconds")
    table = pq.read_table(outs[1])
    assert table.equals(_one_go(Multistream(*every_article)).replace_schema_metadata(table.schema.metadata))
    meta = pq.ParquetFile(outs[1]).metadata
    assert meta.num_row_groups == -(-203 // 32)  # written as they came, a row group at a time


@pytest.mark.slow
def test_pages_are_fetched_a_window_at_a_time(every_article, tmp_path, small_pieces, monkeypatch):
    dump = Multistream(*every_article)
    asked = []
    get = dump.get
    monkeypatch.setattr(dump, "get", lambda keys, *a, **k: asked.append(list(keys)) or get(keys, *a, **k))
    build_list_corpus(dump, tmp_path / "w.parquet", list_page=LIST)
    assert len(asked) == 1 + -(-207 // 40)  # the list page, then each window
    fetched = [t for keys in asked[1:] for t in keys]
    assert len(fetched) == len(set(fetched)) and max(map(len, asked)) <= 40  # each title once


@pytest.mark.slow
def test_cli_jobs(every_article, tmp_path, capsys):
    dump, index = every_article
    lines = []
    for jobs in ("1", "2"):
        out = tmp_path / f"cli{jobs}.parquet"
        assert (
            main(
                [
                    "corpus",
                    "yokai",
                    "--dump",
                    str(dump),
                    "--index",
                    str(index),
                    "--out",
                    str(out),
                    "--list-page",
                    LIST,
                    "--jobs",
                    jobs,
                ]
            )
            == 0
        )
        lines.append(capsys.readouterr().out.split(" articles in ")[0])
    assert lines[0] == lines[1] and lines[0].endswith("203")
    assert (tmp_path / "cli1.parquet").read_bytes() == (tmp_path / "cli2.parquet").read_bytes()


@pytest.mark.slow
def test_origin_corpus_the_same_for_any_jobs(every_article, tmp_path, data_dir, monkeypatch):
    monkeypatch.setattr(articles, "TASK_CHARS", 100_000)
    dump = Multistream(*every_article)
    pages = [
        p for p in dump.get(dump.page_ids(), follow_redirects=False).values() if p.namespace == 0 and p.redirect is None
    ]
    items = write_items(tmp_path / "items.parquet", [(f"Q{p.page_id}", "jawiki", p.page_id, p.title) for p in pages])
    outs = [tmp_path / f"origin{jobs}.parquet" for jobs in (1, 2)]
    reports = [
        build_origin_corpus(
            items,
            Multistream(*every_article),
            out,
            jobs=jobs,
            wikidata=data_dir / "wikidata-20151109-five-entities.json",
        )
        for jobs, out in zip((1, 2), outs)
    ]
    assert outs[0].read_bytes() == outs[1].read_bytes()
    assert reports[0].articles == reports[1].articles == len(pages)
    assert reports[0].missing_entities == reports[1].missing_entities
    table = pq.read_table(outs[0])
    assert table.schema.remove_metadata() == ORIGIN_ARTICLES
    assert table.column("page_id").to_pylist() == [p.page_id for p in sorted(pages, key=lambda p: p.page_id)]


@pytest.mark.slow
def test_dask_cluster_gives_the_same_file(every_article, tmp_path):
    distributed = pytest.importorskip("dask.distributed", reason="the dask extra is not installed")
    local = tmp_path / "local.parquet"
    build_list_corpus(Multistream(*every_article), local, list_page=LIST)
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, host="127.0.0.1"
    ) as cluster:
        out = tmp_path / "dask.parquet"
        build_list_corpus(Multistream(*every_article), out, list_page=LIST, scheduler=cluster.scheduler_address)
    assert out.read_bytes() == local.read_bytes()


# --- stream_tasks ---------------------------------------------------------------------------


def _square(x):
    return x * x


def _fail_on_three(x):
    if x == 3:
        raise ValueError("three")
    return x


def _loky_workers() -> list:
    """The loky worker processes under this one (not its resource trackers)."""
    return [c for c in psutil.Process().children(recursive=True) if any("LokyProcess" in part for part in c.cmdline())]


@pytest.mark.slow
@needs("psutil", extra="test")
@pytest.mark.parametrize("jobs", [1, 2])
def test_stream_in_order_reading_ahead_only_a_little(jobs):
    read = []

    def args():
        for i in range(40):
            read.append(i)
            yield (i,)

    stream = stream_tasks(_square, args(), jobs=jobs)
    first = next(stream)
    assert first == 0 and len(read) == (1 if jobs == 1 else jobs + 1)  # waited for, and one a worker
    assert [first, *stream] == [i * i for i in range(40)]
    assert _loky_workers() == []  # the workers ended with the stream


@pytest.mark.slow
@needs("psutil", extra="test")
def test_stream_stopped_early_ends_its_workers():
    with closing(stream_tasks(_square, ((i,) for i in range(100)), jobs=2)) as stream:
        assert next(stream) == 0
        assert len(_loky_workers()) == 2
    assert _loky_workers() == []


@pytest.mark.slow
@needs("psutil", extra="test")
def test_stream_raises_a_worker_error_and_ends_the_workers():
    with pytest.raises(ValueError, match="three"):
        list(stream_tasks(_fail_on_three, ((i,) for i in range(8)), jobs=2))
    assert _loky_workers() == []
    assert os.getpid() in [p.pid for p in psutil.process_iter()]


@pytest.mark.slow
@needs("psutil", extra="test")
def test_sigterm_while_workers_convert(every_article, tmp_path):
    """SIGTERM during `corpus yokai --jobs 2`: exit 143 with the resume line, the workers ended,
    no temporary file left, nothing under the output's name."""
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    dump, index = every_article
    out, err = tmp_path / "out" / "c.parquet", tmp_path / "stderr.txt"
    root = Path(__file__).resolve().parents[2]
    with open(err, "w") as stderr:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "wikiorigin.cli",
                "corpus",
                "yokai",
                "--dump",
                str(dump),
                "--index",
                str(index),
                "--out",
                str(out),
                "--list-page",
                LIST,
                "--jobs",
                "2",
            ],
            stderr=stderr,
            stdout=subprocess.DEVNULL,
            start_new_session=True,
            env={**os.environ, "PYTHONPATH": str(root)},
        )
    try:
        parent = psutil.Process(proc.pid)

        def workers():
            found = []
            for child in parent.children(recursive=True):
                try:
                    if any("LokyProcess" in part for part in child.cmdline()):
                        found.append(child)
                except psutil.NoSuchProcess:
                    pass
            return found

        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (len(workers()) == 2 and list(out.parent.glob(".*tmp*"))):
            assert proc.poll() is None, err.read_text()[-2000:]
            time.sleep(0.02)
        time.sleep(0.5)  # the workers at work
        seen = workers()
        assert len(seen) == 2, err.read_text()[-2000:]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 143
        text = err.read_text()
        assert "wikiorigin: stopped by SIGTERM" in text and "Traceback" not in text, text[-2000:]
        _, alive = psutil.wait_procs(seen, timeout=5)
        assert alive == []
        assert list(out.parent.iterdir()) == []
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
