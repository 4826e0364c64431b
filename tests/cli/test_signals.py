"""SIGTERM is handled as Ctrl-C: the resume line, exit 143 (Ctrl-C stays 130), the
worker processes ended, and no temporary file, spill folder, lock file or SQLite journal left;
what runs killed outright leave behind is swept by the next run writing the same output.

Each test sends a real signal to a real ``python -m wikiorigin.cli`` process. Linux only: the
processes and /dev/shm are read from /proc."""

import bz2
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads processes from /proc (Linux)")

ROOT = Path(__file__).resolve().parents[2]
RESUME = "finished work is kept (completed files, shards, the request cache): run the same command again to resume"
WIKIS = ("jawiki", "enwiki")


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except (OSError, ValueError):
            continue
        if entry.isdigit() and int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry))
    return found


def _descendants(pid: int) -> list[int]:
    return [d for c in _children(pid) for d in (c, *_descendants(c))]


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _workers(pid: int) -> list[int]:
    """The loky worker processes under ``pid``."""
    out = []
    for d in _descendants(pid):
        try:
            if b"LokyProcess" in Path(f"/proc/{d}/cmdline").read_bytes():
                out.append(d)
        except OSError:
            pass
    return out


def _shm(pid: int) -> list[str]:
    """joblib's and loky's semaphores and memory-mapped folders of process ``pid`` in /dev/shm."""
    shm = Path("/dev/shm")
    return [p.name for p in shm.iterdir() if f"-{pid}-" in p.name or f"_{pid}_" in p.name] if shm.is_dir() else []


def _leftovers(directory: Path) -> list[str]:
    return sorted(
        str(p.relative_to(directory))
        for p in directory.rglob("*")
        if ".tmp" in p.name or p.name.startswith("wikiorigin-duckdb-") or p.name.endswith((".lock", "-wal", "-shm"))
    )


class _Run:
    """``python -m wikiorigin.cli ARGS`` in its own session (so that whatever it leaves running
    is ended by the test, by its process group), stderr to a file."""

    def __init__(self, args, cwd: Path, env=None):
        self.err = cwd / "stderr.txt"
        env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
        with open(self.err, "w") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "wikiorigin.cli", *map(str, args)],
                cwd=cwd,
                stderr=err,
                stdout=subprocess.DEVNULL,
                env=env,
                start_new_session=True,
            )
        self.seen: list[int] = []

    def wait_for(self, ready, seconds: float = 60):
        deadline = time.monotonic() + seconds
        while not ready() and time.monotonic() < deadline:
            assert self.proc.poll() is None, self.err.read_text()[-2000:]
            time.sleep(0.02)
        assert ready(), f"not ready after {seconds} s: " + self.err.read_text()[-2000:]

    def stop(self, signum) -> tuple[int, str]:
        self.seen = _descendants(self.proc.pid)
        self.proc.send_signal(signum)
        code = self.proc.wait(60)
        return code, self.err.read_text()

    def left_running(self, seconds: float = 5) -> list[int]:
        deadline = time.monotonic() + seconds
        while any(map(_alive, self.seen)) and time.monotonic() < deadline:
            time.sleep(0.05)
        return [p for p in self.seen if _alive(p)]

    def close(self) -> None:
        """End whatever is left of the run (where a test failed: on today's code), by the ids
        seen and then by its process group (the test's own session), and remove what it left
        in /dev/shm (named by its process id)."""
        for pid in self.seen:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        if self.proc.poll() is None:
            self.proc.wait(10)
        for name in _shm(self.proc.pid):
            shutil.rmtree(Path("/dev/shm") / name, ignore_errors=True)
            Path("/dev/shm", name).unlink(missing_ok=True)


@pytest.fixture()
def run(tmp_path):
    runs = []

    def start(args, env=None):
        runs.append(_Run(args, tmp_path, env))
        return runs[-1]

    yield start
    for r in runs:
        r.close()


def _pages(wikis=WIKIS):
    return [
        {"wiki": w, "page_id": 1, "title": "P0", "qid": "Q1", "revisions": [("2001-01-15T00:00:00Z", "U")]}
        for w in wikis
    ]


@pytest.fixture(scope="module")
def slow_tree(tmp_path_factory):
    """A dump tree whose full-history exports take each worker some 15 s: 1.5 GB of XML in
    1.4 MB of bzip2 (one block of identical revisions, repeated)."""
    from wikiorigin.testing import write_origin_tree, xml

    root = tmp_path_factory.mktemp("slow") / "tree"
    write_origin_tree(root, _pages())
    revisions = xml.revision(1000, xml.iso(0), xml.contributor("U", 7), xml.text_stub(1000, 10)) * 2000
    block = bz2.compress("".join(xml.page(f"P{j}", 0, 1 + j, [revisions]) for j in range(2)).encode(), 9)
    for wiki in WIKIS:
        with open(root / wiki / "20260801" / f"{wiki}-20260801-pages-meta-history.xml.bz2", "wb") as f:
            f.write(bz2.compress(xml.header(wiki, "0.11").encode()) + block * 1000 + bz2.compress(xml.FOOTER.encode()))
    return root


@pytest.mark.slow
def test_sigterm_while_workers_scan(slow_tree, tmp_path, run):
    """Today: exit -15, silent; both loky workers and both resource trackers go on for minutes,
    their semaphores and memory-mapped folders stay in /dev/shm, and the workers' temporary
    shards stay in the shard folder."""
    out = tmp_path / "out" / "origins.parquet"
    r = run(["origins", slow_tree, "--source", "export", "--jobs", "2", "--out", out])
    r.wait_for(lambda: len(_workers(r.proc.pid)) == 2 and list(out.parent.rglob("*.tmp*")))
    code, err = r.stop(signal.SIGTERM)
    assert code == 143, err
    assert f"wikiorigin: stopped by SIGTERM; {RESUME}" in err and "Traceback" not in err
    assert len(r.seen) >= 2 and r.left_running() == []
    assert _shm(r.proc.pid) == []
    assert _leftovers(tmp_path / "out") == []


@pytest.fixture(scope="module")
def reduction(tmp_path_factory):
    """A tree whose shards are built, the jawiki editions shard made to hold 2 million editions:
    a run goes straight to the DuckDB reduction, which takes seconds."""
    from wikiorigin.files import read_provenance, write_table
    from wikiorigin.origin import build_origins, shard_dir_for
    from wikiorigin.schemas import EDITIONS
    from wikiorigin.testing import write_origin_tree

    base = tmp_path_factory.mktemp("reduction")
    write_origin_tree(base / "tree", _pages())
    build_origins(base / "tree", base / "origins.parquet")
    shard = shard_dir_for(base / "origins.parquet") / "editions" / "jawiki.parquet"
    n = 2_000_000
    numbers = pc.cast(pa.array(range(n, 0, -1), pa.int64()), pa.string())
    table = pa.table(
        [
            pa.array(["jawiki"] * n),
            pc.binary_join_element_wise("Q", numbers, ""),
            pa.array(range(n), pa.int64()),
            numbers,
            pa.array(range(n), pa.int64()).cast(pa.timestamp("ms", "UTC")),
        ],
        schema=EDITIONS,
    )
    write_table(table, shard, EDITIONS, read_provenance(shard))
    return base


def _reduce(reduction, tmp_path, run, jobs: int):
    """A run of origins over the prepared shards, once it is in the reduction."""
    out = tmp_path / "out" / "origins.parquet"
    shutil.copytree(reduction / "origins.shards", tmp_path / "out" / "origins.shards")
    r = run(["origins", reduction / "tree", "--jobs", jobs, "--out", out])
    r.wait_for(lambda: any(p.name.startswith("wikiorigin-duckdb-") for p in out.parent.iterdir()))
    time.sleep(0.2)  # into the query (its first phase, where DuckDB takes the signal itself)
    return r


@pytest.mark.slow
def test_sigterm_during_the_reduction(reduction, tmp_path, run):
    """Today: exit -15, silent, the spill folder left, and the two loky workers idle on for five
    minutes (joblib keeps them for a next call)."""
    r = _reduce(reduction, tmp_path, run, jobs=2)
    code, err = r.stop(signal.SIGTERM)
    assert code == 143, err
    assert f"wikiorigin: stopped by SIGTERM; {RESUME}" in err and "unexpected" not in err
    assert r.left_running() == [] and _shm(r.proc.pid) == []
    assert _leftovers(tmp_path / "out") == []


@pytest.mark.slow
def test_ctrl_c_during_the_reduction(reduction, tmp_path, run):
    """Today: DuckDB turns the KeyboardInterrupt into ``RuntimeError: Query interrupted``, an
    "unexpected" error with exit 1."""
    r = _reduce(reduction, tmp_path, run, jobs=1)
    code, err = r.stop(signal.SIGINT)
    assert code == 130, err
    assert f"wikiorigin: interrupted; {RESUME}" in err and "unexpected" not in err
    assert _leftovers(tmp_path / "out") == []


def _dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(done.stdout)


@pytest.mark.slow
def test_what_killed_runs_left_is_swept(data_dir, tmp_path, run):
    """A run killed outright (kill -9, a worker killed) leaves its temporary files, spill folder
    and lock file; the next run writing the same output removes them, and only them: a file of
    a process that still runs is kept. Today all of them stay for ever."""
    dead = _dead_pid()
    out = tmp_path / "out" / "origins.parquet"
    shards = tmp_path / "out" / "origins.shards" / "pages"
    shards.mkdir(parents=True)
    left = [
        out.parent / f".origins.parquet.{dead}.tmp.parquet",
        shards / f".jawiki.parquet.{dead}.tmp.parquet",
        out.parent / f"wikiorigin-duckdb-{dead}-x1y2" / "spill.block",
        out.parent / "origins.parquet.lock",
    ]
    for path in left:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{dead}\nwikiorigin origins ...\n")
    live = out.parent / f".origins.parquet.{os.getpid()}.tmp.parquet"
    live.write_text("a run still writing")
    r = run(["origins", data_dir.parent / "tree", "--out", out])
    assert r.proc.wait(60) == 0, r.err.read_text()
    assert [p for p in left if p.exists()] == [] and not (out.parent / f"wikiorigin-duckdb-{dead}-x1y2").exists()
    assert live.exists() and out.exists()


@pytest.mark.slow
def test_sigterm_during_an_llm_evaluation(tmp_path, run):
    """Today: exit -15, silent, with ``run.lock`` and the cache's ``-wal`` and ``-shm`` left.
    Now the answers received are in the cache, and nothing else is left."""
    from tests.openai_server import ChatServer

    questions = tmp_path / "q.json"
    questions.write_text(
        json.dumps(
            [
                {"question": f"問{i}：どれか。", "choices": ["甲", "乙", "丙", "丁"], "answer": "甲", "language": "ja"}
                for i in range(200)
            ],
            ensure_ascii=False,
        )
    )
    with ChatServer(lambda messages: "甲", delay=0.2) as server:
        r = run(
            [
                "eval",
                "mcq",
                "--questions",
                questions,
                "--model",
                "m",
                "--endpoint",
                server.url,
                "--cache",
                tmp_path / "c.sqlite",
                "--out",
                tmp_path / "run",
                "--concurrency",
                "2",
            ]
        )
        r.wait_for(lambda: len(server.calls) >= 6)
        code, err = r.stop(signal.SIGTERM)
    assert code == 143, err
    assert f"wikiorigin: stopped by SIGTERM; {RESUME}" in err and "Traceback" not in err
    assert _leftovers(tmp_path) == []
    with sqlite3.connect(tmp_path / "c.sqlite") as db:
        assert db.execute("SELECT count(*) FROM answers").fetchone()[0] >= 4
