"""The floor every stage stands on: inputs checked before any work, outputs written whole."""

import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from wikiorigin.errors import WikioriginError
from wikiorigin.files import ParquetSink, check_output, input_schema, provenance, read_input, read_provenance

SCHEMA = pa.schema([("qid", pa.string()), ("n", pa.int64())])


def _parquet(path, rows=({"qid": "Q1", "n": 1},)):
    pq.write_table(pa.Table.from_pylist(list(rows), schema=SCHEMA), path)
    return path


def test_input_schema_names_the_file_and_the_command(tmp_path):
    good = _parquet(tmp_path / "items.parquet")
    assert input_schema(good, ["qid"], "wikiorigin subset").names == ["qid", "n"]
    cases = {
        tmp_path / "absent.parquet": r"absent.parquet: no such file \(make one with `wikiorigin subset`\)",
        tmp_path: r"a directory, not a Parquet file made by `wikiorigin subset`",
    }
    (tmp_path / "text.parquet").write_text("qid,n\nQ1,1\n")
    cases[tmp_path / "text.parquet"] = (
        r"text.parquet: not a Parquet file \(.*\); expected the output of `wikiorigin subset`"
    )
    for path, message in cases.items():
        with pytest.raises(WikioriginError, match=message) as err:
            input_schema(path, ["qid"], "wikiorigin subset")
        assert "\n" not in str(err.value)
    with pytest.raises(
        WikioriginError, match=r"items.parquet: not the output of `wikiorigin subset`: no column origin_wiki, title"
    ):
        input_schema(good, ["qid", "origin_wiki", "title"], "wikiorigin subset")


def test_read_input_reads_the_columns_asked(tmp_path):
    path = _parquet(tmp_path / "x.parquet", [{"qid": "Q1", "n": 1}, {"qid": "Q2", "n": 2}])
    assert read_input(path, ["qid"], "x", columns=["n"]).column("n").to_pylist() == [1, 2]


def test_check_output_makes_the_directory_and_refuses_what_cannot_be_written(tmp_path):
    assert check_output(tmp_path / "new" / "deeper" / "out.parquet").parent.is_dir()
    with pytest.raises(WikioriginError, match=r"a directory; give a file name"):
        check_output(tmp_path)
    (tmp_path / "file").write_text("")
    with pytest.raises(WikioriginError, match=r"cannot make the directory for out.parquet"):
        check_output(tmp_path / "file" / "out.parquet")
    if os.geteuid() != 0:  # root writes anywhere
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        with pytest.raises(WikioriginError, match=r"not writable"):
            check_output(locked / "out.parquet")


def test_check_output_wants_the_name_of_the_format_written(tmp_path):
    """``--out out.csv`` silently wrote Parquet. Every caller writes Parquet, so
    that is the default; another format says so (``suffix``), or any name (None)."""
    for name, example in (
        ("out.csv", "out.parquet"),
        ("items", "items.parquet"),
        ("d.parquet.tmp", "d.parquet.parquet"),
    ):
        with pytest.raises(
            WikioriginError,
            match=rf"{name}: give a file name ending in \.parquet, the format "
            rf"written \(e\.g\. {example}\)",
        ):
            check_output(tmp_path / name)
    assert check_output(tmp_path / "out.parquet").name == "out.parquet"
    assert check_output(tmp_path / "cache.sqlite", suffix=".sqlite").name == "cache.sqlite"
    assert check_output(tmp_path / "anything", suffix=None).name == "anything"
    assert not list(tmp_path.iterdir())  # nothing made but directories


def test_read_input_names_the_first_null_row_of_a_column_needed_on_every_row(tmp_path):
    path = tmp_path / "a.parquet"
    pq.write_table(pa.table({"title": ["a", None, None], "anchor": [None, None, "s"]}), path)
    assert read_input(path, ["anchor"], "x").num_rows == 3  # anchor may be null
    with pytest.raises(
        WikioriginError,
        match=r"a\.parquet: row 1: title is null \(2 rows in all\); the stage needs "
        r"one on every row \(the output of `x` has it\)",
    ):
        read_input(path, ["title", "anchor"], "x")


def test_a_sink_writes_whole_files_or_nothing(tmp_path):
    out = tmp_path / "out.parquet"
    meta = provenance(stage="test", rows=2)
    with ParquetSink(out, SCHEMA, meta) as sink:
        sink.write(pa.Table.from_pylist([{"qid": "Q1", "n": 1}], schema=SCHEMA))
        assert not out.exists()  # under a temporary name until closed
    assert read_provenance(out)["rows"] == 2 and pq.read_table(out).num_rows == 1
    with pytest.raises(RuntimeError):
        with ParquetSink(tmp_path / "torn.parquet", SCHEMA, meta) as sink:
            sink.write(pa.Table.from_pylist([{"qid": "Q1", "n": 1}], schema=SCHEMA))
            raise RuntimeError("killed mid-write")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.parquet"]  # nothing torn left


def test_check_output_refuses_to_overwrite_an_input(tmp_path):
    source = _parquet(tmp_path / "items.parquet")
    with pytest.raises(WikioriginError, match=r"items.parquet: the output would overwrite the input"):
        check_output(tmp_path / "sub" / ".." / "items.parquet", inputs=[None, source])
    assert check_output(tmp_path / "other.parquet", inputs=[source]).name == "other.parquet"


def test_check_output_refuses_a_sibling_that_is_an_input(tmp_path):
    """A file written beside the output (``siblings``) is checked against the inputs as the output is,
    under another name for the same file too (a hard link)."""
    source = _parquet(tmp_path / "m.failed.parquet")
    os.link(source, tmp_path / "linked.parquet")
    for given in (source, tmp_path / "linked.parquet"):
        with pytest.raises(WikioriginError, match=r"m\.parquet: the file written beside it, m\.failed\.parquet, would"):
            check_output(tmp_path / "m.parquet", inputs=[given], siblings=[tmp_path / "m.failed.parquet"])
    assert check_output(tmp_path / "n.parquet", inputs=[source], siblings=[tmp_path / "n.failed.parquet"])


def test_a_partial_file_says_so_under_any_name_and_is_no_input(tmp_path):
    """The rows a failed run keeps (ParquetSink's keep_partial) carry why it stopped in the
    file's footer: renamed, the file still says it, and no stage takes it for a whole input."""
    import shutil

    from wikiorigin.files import partial_reason

    schema = pa.schema([("qid", pa.string())])
    kept = tmp_path / "x.partial.parquet"
    try:
        with ParquetSink(tmp_path / "x.parquet", schema, {"stage": "test"}, keep_partial=kept) as sink:
            sink.write(pa.table({"qid": ["Q1", "Q2"]}, schema=schema))
            raise OSError("the disk went away")
    except OSError:
        pass
    renamed = tmp_path / "whole-looking.parquet"
    shutil.copy(kept, renamed)
    assert partial_reason(renamed) == "the disk went away" and read_provenance(renamed)["complete"] is False
    with pytest.raises(WikioriginError, match=r"whole-looking.parquet: the rows kept before a run failed \(the disk"):
        read_input(renamed, ["qid"], "wikiorigin test")
    whole = tmp_path / "whole.parquet"
    with ParquetSink(whole, schema, {"stage": "test"}, keep_partial=kept) as sink:
        sink.write(pa.table({"qid": ["Q1"]}, schema=schema))
    assert partial_reason(whole) is None and "partial" not in read_provenance(whole)
    assert read_input(whole, ["qid"], "wikiorigin test").num_rows == 1


def test_a_file_of_someones_where_a_build_writes_beside_its_output_is_kept(tmp_path, capsys):
    """`OUT.failed.parquet` that no run wrote (Parquet without our provenance) is refused, one
    line, before any request: the build would replace it. A previous run's is replaced."""
    from tests.builders.test_build_faults import _articles, _mcq
    from tests.builders.test_mcq import scripted
    from tests.openai_server import ChatServer
    from wikiorigin.cli import main

    articles = _articles(tmp_path / "articles.parquet")
    pq.write_table(pa.table({"mine": [1, 2, 3]}), tmp_path / "m.failed.parquet")
    before = (tmp_path / "m.failed.parquet").read_bytes()
    with ChatServer(answer=scripted) as server:
        assert main(_mcq(articles, tmp_path / "m.parquet", server.url)) == 2
        assert server.calls == []
        err = capsys.readouterr().err
        assert "m.failed.parquet beside it is not wikiorigin's" in err and err.count("\n") == 1
        assert (tmp_path / "m.failed.parquet").read_bytes() == before
        (tmp_path / "m.failed.parquet").unlink()
        server.faults = ["500"]
        assert main(_mcq(articles, tmp_path / "m.parquet", server.url, "--allow-failures")) == 0
        assert (tmp_path / "m.failed.parquet").exists()
        assert main(_mcq(articles, tmp_path / "m.parquet", server.url)) == 0  # ours: replaced
