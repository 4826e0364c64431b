"""Every file the tool writes is written whole or not at all: a full disk (a small tmpfs) leaves
the previous good file under its name; a long output name still fits its temporary name."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from wikiorigin import cli
from wikiorigin.evaluators.report import write_results
from wikiorigin.files import ParquetSink, temporary_name, write_table, write_text, write_together


def test_a_full_disk_keeps_the_previous_summary_and_report(small_disk):
    out = small_disk / "run"
    write_results(out, [{"id": "a", "correct": True}], {"accuracy": 1.0}, "# Report\n\ngood")
    before = {name: (out / name).read_bytes() for name in ("summary.json", "report.md")}
    huge = {"accuracy": 0.5, "notes": "x" * 400_000}  # larger than the disk
    with pytest.raises(OSError):
        write_results(out, [{"id": "a", "correct": False}], huge, "# Report\n\n" + "y" * 400_000)
    assert {name: (out / name).read_bytes() for name in before} == before
    assert json.loads(before["summary.json"])["accuracy"] == 1.0
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no temporary file left


def test_a_card_on_a_full_disk_keeps_the_previous_card(small_disk):
    card = small_disk / "README.md"
    write_text(card, "good card\n")
    with pytest.raises(OSError):
        write_text(card, "z" * 400_000)
    assert card.read_text() == "good card\n" and len(list(small_disk.iterdir())) == 1


def test_a_pair_of_outputs_is_written_together_or_not_at_all(small_disk):
    schema = pa.schema([("text", pa.string())])
    out, failed = small_disk / "m.parquet", small_disk / "m.failed.parquet"
    write_together([(out, pa.table({"text": ["old"]}), schema, {}), (failed, pa.table({"text": []}), schema, {})])
    big = pa.table({"text": [os.urandom(300_000).hex()]})  # does not compress: larger than the disk
    with pytest.raises(OSError):
        write_together([(out, pa.table({"text": ["new"]}), schema, {}), (failed, big, schema, {})])
    assert pq.read_table(out).column("text").to_pylist() == ["old"]  # the first was not renamed alone
    assert pq.read_table(failed).num_rows == 0
    assert sorted(p.name for p in small_disk.iterdir()) == ["m.failed.parquet", "m.parquet"]


def test_a_long_output_name_fits_its_temporary_name(tmp_path):
    path = tmp_path / ("長" * 78 + ".parquet")  # 242 bytes: the name plus ".PID.tmp" would pass 255
    assert len(path.name.encode()) == 242 and len(temporary_name(path).name.encode()) <= 255
    with ParquetSink(path, pa.schema([("a", pa.int64())]), {}) as sink:
        sink.write(pa.table({"a": [1]}))
    assert pq.read_table(path).num_rows == 1


def _fill(disk) -> None:
    """Fill ``disk`` to its last byte."""
    with open(disk / "filler", "wb") as f:
        with pytest.raises(OSError):
            f.write(b"x" * 1_000_000)


def test_a_full_disk_at_the_first_bytes_leaves_no_empty_file_and_names_the_file(small_disk):
    """pyarrow writes a Parquet file's first bytes when it opens it: on a full disk that fails
    there, before any row, and left a 0-byte temporary file; the error named no file."""
    _fill(small_disk)
    for write in (
        lambda out: write_table(pa.table({"a": [1]}), out, pa.schema([("a", pa.int64())]), {}),
        lambda out: write_text(out, "z" * 10_000),
    ):
        out = small_disk / "out.parquet"
        with pytest.raises(OSError) as raised:
            write(out)
        assert raised.value.filename == str(out) and raised.value.strerror == "No space left on device"
        assert sorted(p.name for p in small_disk.iterdir()) == ["filler"]


def _under_file_size_limit(code: str, cwd: Path) -> subprocess.CompletedProcess:
    """Run ``code`` in a child Python whose files are limited to 4 KB (RLIMIT_FSIZE), SIGXFSZ
    ignored: a write past it fails with EFBIG (File too large), as under `ulimit -f`.

    Never in this process: the limit holds for every file it writes, pytest's own log included
    (CI sends it to a file far past 4 KB)."""
    import resource
    import signal

    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))

    return subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=120, preexec_fn=limit
    )


def test_a_file_size_limit_names_the_file_being_written(tmp_path):
    code = """
import json, os, sys
import pyarrow as pa
from wikiorigin.files import write_table, write_text
big = pa.table({"a": [os.urandom(20_000).hex()]})
seen = []
for out, write in (
    ("t.parquet", lambda out: write_table(big, out, big.schema, {})),
    ("t.md", lambda out: write_text(out, "z" * 20_000)),
):
    try:
        write(os.path.abspath(out))
    except OSError as error:
        seen.append([out, error.filename, error.strerror])
print(json.dumps(seen))
"""
    run = _under_file_size_limit(code, tmp_path)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == [[name, str(tmp_path / name), "File too large"] for name in ("t.parquet", "t.md")]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_a_file_size_limit_under_the_command_is_one_line_naming_the_file(tmp_path):
    """`eval mcq` writing its results past the limit: one line naming the file, exit 2."""
    responses = Path(__file__).parent / "data" / "yokaieval" / "responses-calm2-7b-chat.json.xz"
    out = tmp_path / "run"
    argv = ["eval", "mcq", "--responses", str(responses), "--out", str(out)]
    code = f"import sys; from wikiorigin import cli; sys.exit(cli.main({argv!r}))"
    run = _under_file_size_limit(code, tmp_path)
    err = run.stderr.strip().splitlines()
    assert run.returncode == 2 and len(err) == 1, err
    assert err[0].startswith(f"wikiorigin: error: {out}{os.sep}") and err[0].endswith(": File too large")
    assert not [p for p in out.iterdir() if ".tmp" in p.name]


@pytest.mark.slow
def test_a_run_on_a_full_disk_leaves_the_previous_run_whole(small_disk, tmp_path, capsys):
    """A second `eval mcq` into a results directory, the disk filling while it writes its plots,
    leaves every file of the first run as it was: never the second's items.parquet and
    summary.json (n=40, complete) beside the first's report and plots (n=60)."""
    from tests.evaluators.test_incomplete_runs import _recorded
    from tests.evaluators.test_mcq_eval import _mcq_parquet

    first = _recorded(tmp_path / "r60.parquet", _mcq_parquet(tmp_path / "q60.parquet", 60))
    second = _recorded(tmp_path / "r40.parquet", _mcq_parquet(tmp_path / "q40.parquet", 40))
    out = small_disk / "run"
    assert cli.main(["eval", "mcq", "--responses", str(first), "--out", str(out)]) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert json.loads(before["summary.json"])["n"] == 60 and "accuracy_by_type.png" in before
    disk = os.statvfs(small_disk)
    (small_disk / "filler").write_bytes(b"x" * (disk.f_bavail * disk.f_frsize - 24_576))  # room for a table, no plot
    capsys.readouterr()
    assert cli.main(["eval", "mcq", "--responses", str(second), "--out", str(out)]) == 2
    assert capsys.readouterr().err.strip().endswith("No space left on device")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
