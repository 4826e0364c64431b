"""A Wikidata file that is cut short, or is not a dump, is never taken for a whole one (issue 27):
`wikidata extract` on the bundled real dump cut mid-line, cut at a line end, compressed and cut,
on a file that is no dump, on JSON arrays laid out otherwise, and on entities whose values are
of types a dump never has: exit 2, one line naming the file (and the line), what was read kept
as ``OUT.partial.parquet``. Every reader of the dump (``read_entities``, the one pass of
``corpus origin --wikidata``) keeps the same rule."""

import bz2
import gzip
import json
import lzma
import shutil
import subprocess

import pyarrow.parquet as pq
import pytest

from tests.corpora.test_origin import WD, _items, _run
from tests.corpora.test_region_rules import LINES
from wikiorigin.cli import main
from wikiorigin.corpora.entities import partial_path
from wikiorigin.dumps.wikidata import read_entities, read_items_and_places
from wikiorigin.errors import DumpError
from wikiorigin.testing.wikidata import entity_json

ITEMS = [("Q1", "jawiki", 56, "地理"), ("Q900104", "jawiki", 272, "個人")]


def _dump_lines(data_dir) -> list[bytes]:
    """The entities of the bundled real dump (Q1, Q8, three properties), then places."""
    real = [line for line in (data_dir / WD).read_bytes().splitlines() if line not in (b"[", b"]")]
    return [line.rstrip(b",") for line in real] + [line.encode() for line in LINES]


def _whole(lines: list[bytes]) -> bytes:
    return b"[\n" + b",\n".join(lines) + b"\n]\n"


def _extract(capsys, tmp_path, dump):
    items = tmp_path / "items.parquet"
    _items(items, ITEMS)
    out = tmp_path / "entities.parquet"
    code = main(["wikidata", "extract", str(dump), "--items", str(items), "--out", str(out)])
    captured = capsys.readouterr()
    return code, captured.err, out


def _kept(out) -> list[str]:
    return [r["qid"] for r in pq.read_table(partial_path(out)).to_pylist()]


def test_the_whole_dump_is_read(data_dir, tmp_path, capsys):
    dump = tmp_path / "wikidata.json"
    dump.write_bytes(_whole(_dump_lines(data_dir)))
    code, err, out = _extract(capsys, tmp_path, dump)
    assert code == 0 and out.exists() and not partial_path(out).exists(), err


@pytest.mark.parametrize("where", ["mid-line", "line-end"])
def test_a_plain_dump_cut_short_is_exit_2_and_keeps_what_came_before(data_dir, tmp_path, capsys, where):
    lines = _dump_lines(data_dir)
    whole = _whole(lines)
    at = whole.index(lines[8]) + (len(lines[8]) // 2 if where == "mid-line" else len(lines[8]) + 2)
    dump = tmp_path / "wikidata.json"
    dump.write_bytes(whole[:at])
    code, err, out = _extract(capsys, tmp_path, dump)
    assert code == 2 and err.count("\n") == 1, err
    assert f"{dump}: cut short: the dump ends after {at:,} bytes without its closing line ']'" in err
    assert "entities.partial.parquet" in err and not out.exists()
    assert "Q1" in _kept(out) and "Q900104" not in _kept(out)  # Q900104 lies after the cut


def _compress(kind: str, data: bytes) -> bytes:
    if kind == "zst":
        zstandard = pytest.importorskip("zstandard")
        return zstandard.ZstdCompressor().compress(data)
    return {"gz": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress}[kind](data)


@pytest.mark.parametrize("kind", ["gz", "bz2", "xz", "zst"])
def test_a_compressed_dump_cut_short_is_exit_2(data_dir, tmp_path, capsys, kind):
    lines = _dump_lines(data_dir) * 3
    data = _compress(kind, _whole(lines))
    dump = tmp_path / f"wikidata.json.{kind}"
    dump.write_bytes(data[: len(data) * 2 // 3])  # the stream's end lost
    code, err, out = _extract(capsys, tmp_path, dump)
    assert code == 2 and err.count("\n") == 1 and f"{dump}: " in err and not out.exists(), err
    assert "corrupt or truncated" in err or "cut short" in err
    whole = _whole(lines)
    dump.write_bytes(_compress(kind, whole[: whole.index(lines[-3])]))  # a whole stream of a dump cut at a line end
    code, err, out = _extract(capsys, tmp_path, dump)
    assert code == 2 and "cut short: the dump ends after" in err and not out.exists(), err
    assert "Q1" in _kept(out)


@pytest.mark.parametrize(
    "content, line, says",
    [
        (b"hello\n", 1, "found b'hello'"),
        (b"hello", 1, "found b'hello'"),
        (b"<mediawiki>\n<page>\n", 1, "found b'<mediawiki>'"),
        (b"[\nhello\n]\n", 2, "found b'hello'"),
        (b"[\n" + json.dumps({"a": 1}).encode() + b"\n]\n", 2, "found b'{\"a\": 1}'"),
    ],
)
def test_a_file_that_is_no_dump_is_exit_2(tmp_path, capsys, content, line, says):
    dump = tmp_path / "wikidata.json"
    dump.write_bytes(content)
    code, err, out = _extract(capsys, tmp_path, dump)
    assert code == 2 and err.count("\n") == 1, err
    assert f"{dump}: line {line}: not a Wikidata JSON dump: one entity per line ({says};" in err
    assert not out.exists() and not partial_path(out).exists()


def test_an_empty_file_is_exit_2(tmp_path, capsys):
    dump = tmp_path / "wikidata.json.gz"
    dump.write_bytes(gzip.compress(b""))
    code, err, out = _extract(capsys, tmp_path, dump)
    assert code == 2 and f"{dump}: empty: not a Wikidata JSON dump" in err and not out.exists()


def _arrays(data_dir) -> dict[str, bytes]:
    entities = [json.loads(line) for line in _dump_lines(data_dir)]
    return {
        "pretty": json.dumps(entities, indent=2, ensure_ascii=False).encode(),
        "one line": json.dumps(entities, ensure_ascii=False).encode(),
        "json lines": b"\n".join(json.dumps(e).encode() for e in entities) + b"\n",
    }


@pytest.mark.parametrize(
    "layout, line, says",
    [
        ("pretty", 2, "a JSON array over several lines"),
        ("one line", 1, "a JSON array on one line"),
        ("json lines", 1, "entities without the line '[' before them"),
    ],
)
def test_a_json_array_laid_out_otherwise_is_refused_with_the_way_to_convert_it(
    data_dir, tmp_path, capsys, layout, line, says
):
    dump = tmp_path / "array.json"
    dump.write_bytes(_arrays(data_dir)[layout])
    code, err, out = _extract(capsys, tmp_path, dump)
    assert code == 2 and err.count("\n") == 1 and not out.exists(), err
    assert f"{dump}: line {line}: not a Wikidata JSON dump: one entity per line ({says};" in err
    assert f"jq -c '.[]' {dump} |" in err
    if layout != "json lines" and shutil.which("jq"):  # the command given writes a dump read whole
        command = err.split("write a JSON array so: ")[1].split(")")[0] + ") > DUMP.json"
        command = command.replace("DUMP.json", str(tmp_path / "dump.json"))
        subprocess.run(["bash", "-c", command], check=True)
        code, err, out = _extract(capsys, tmp_path, tmp_path / "dump.json")
        assert code == 0, err
        assert {r["qid"] for r in pq.read_table(out).to_pylist() if r["asked"] and r["labels"]} == {"Q1", "Q900104"}


def _with(line: str, change) -> bytes:
    data = json.loads(line)
    change(data)
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()


def _target(data):
    data["claims"]["P131"][0]["mainsnak"]["datavalue"]["value"]["id"] = 900113


def _label(data):
    data["labels"]["ja"]["value"] = 7


def _alias(data):
    data["aliases"] = {"en": [{"language": "en", "value": None}]}


def _sitelink(data):
    data["sitelinks"] = {"jawiki": {"site": "jawiki", "title": ["x"]}}


def _numeric(data):
    value = data["claims"]["P131"][0]["mainsnak"]["datavalue"]["value"]
    del value["id"]
    value["numeric-id"] = "900113"


def _statements(data):
    data["claims"]["P131"] = "torn"


# an item asked for, read whole; a place, read from its statements (it keeps no aliases or sitelinks)
@pytest.mark.parametrize(
    "change, asked",
    [(c, True) for c in (_target, _label, _alias, _sitelink, _numeric, _statements)]
    + [(c, False) for c in (_target, _label, _numeric, _statements)],
)
def test_an_entity_of_unexpected_types_is_one_line_naming_it(data_dir, tmp_path, capsys, change, asked):
    lines = _dump_lines(data_dir)
    place = next(i for i, line in enumerate(lines) if b'"P131"' in line and b'"id":"Q900104"' not in line)
    at = [i for i, line in enumerate(lines) if b'"id":"Q900104"' in line][0] if asked else place
    lines[at] = _with(lines[at].decode(), change)
    dump = tmp_path / "wikidata.json"
    dump.write_bytes(_whole(lines))
    code, err, out = _extract(capsys, tmp_path, dump)
    assert code == 2 and err.count("\n") == 1 and not out.exists(), err
    assert f"{dump}: line {at + 2}: an entity of unexpected types (" in err
    assert "unexpected ArrowTypeError" not in err


@pytest.mark.slow
def test_every_reader_of_the_dump_keeps_the_rule(data_dir, tmp_path, ja_multistream, capsys):
    lines = _dump_lines(data_dir)
    whole = _whole(lines)
    cut = tmp_path / "cut.json"
    cut.write_bytes(whole[: whole.index(lines[-2])])
    hello = tmp_path / "hello.json"
    hello.write_bytes(b"hello\n")
    typed = tmp_path / "typed.json"
    typed.write_bytes(_whole([_with(lines[0].decode(), lambda d: d["labels"]["en"].update(value=1))]))
    for reader in (lambda p: list(read_entities(p)), lambda p: list(read_entities(p, ["Q1"]))):
        with pytest.raises(DumpError, match=r"cut\.json: cut short"):
            reader(cut)
        with pytest.raises(DumpError, match=r"hello\.json: line 1: not a Wikidata JSON dump"):
            reader(hello)
        with pytest.raises(DumpError, match=r"typed\.json: line 2: an entity of unexpected types"):
            reader(typed)
    read = []
    with pytest.raises(DumpError, match=r"cut\.json: cut short"):
        for entity in read_items_and_places(cut, ["Q1"], ["en"]):
            read.append(entity.qid)
    assert read[0] == "Q1"
    items = tmp_path / "items.parquet"
    _items(items, ITEMS)
    for dump, says in ((cut, "cut short"), (hello, "line 1: not a Wikidata JSON dump")):
        code, _, err = _run(capsys, items, ja_multistream, tmp_path / "a.parquet", "--wikidata", str(dump))
        assert code == 2 and err.count("\n") == 1 and f"{dump}: {says}" in err, err
        assert not (tmp_path / "a.parquet").exists()


def test_a_dump_without_entities_is_whole(tmp_path, capsys):
    dump = tmp_path / "wikidata.json"
    dump.write_bytes(b"[\n]\n")
    code, err, out = _extract(capsys, tmp_path, dump)
    assert code == 0 and out.exists(), err
    dump.write_bytes(b"[\n" + entity_json("Q1", {"en": "x"}).encode() + b"\n]")  # no newline at the end
    code, err, out = _extract(capsys, tmp_path, dump)
    assert code == 0, err


def test_an_items_file_where_the_partial_rows_would_go_is_never_overwritten(data_dir, tmp_path, capsys):
    """OUT.partial.parquet is written beside the output on damage: an input of that name is
    refused as the output itself would be, before the dump is read."""
    dump = tmp_path / "wikidata.json"
    dump.write_bytes(_whole(_dump_lines(data_dir))[:-3])  # cut short: would write the partial rows
    items = tmp_path / "entities.partial.parquet"
    _items(items, ITEMS)
    before = items.read_bytes()
    out = tmp_path / "entities.parquet"
    assert main(["wikidata", "extract", str(dump), "--items", str(items), "--out", str(out)]) == 2
    assert "entities.partial.parquet" in capsys.readouterr().err
    assert items.read_bytes() == before
