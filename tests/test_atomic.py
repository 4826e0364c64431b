"""Every file the tool writes is written whole or not at all: a full disk (a small tmpfs) leaves
the previous good file under its name; a long output name still fits its temporary name."""

import json
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from wikiorigin.evaluators.report import write_results
from wikiorigin.files import ParquetSink, temporary_name, write_text, write_together


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
