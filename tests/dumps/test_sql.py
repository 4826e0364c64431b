import gzip
import re

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from wikiorigin.cli import main
from wikiorigin.dumps.sql import SqlDump, SqlStats, qids_table, unescape
from wikiorigin.errors import DumpError
from wikiorigin.testing import page_props_rows, write_page_props_sql


def test_unescape_mysql_strings():
    assert unescape(rb"It\'s \"q\" a\\b\nc\0d\Ze\%f") == b'It\'s "q" a\\b\nc\x00d\x1ae\\%f'


def test_generic_rows_of_a_real_table_dump(data_dir):
    dump = SqlDump(data_dir / "simplewiki-change_tag_def.sql.gz", table="change_tag_def")
    rows = list(dump.rows())
    assert dump.columns == ["ctd_id", "ctd_name", "ctd_user_defined", "ctd_count"]
    assert rows[0] == (1, b"mw-replace", 0, 10200)
    assert len(rows) == dump.stats.rows > 50


def test_round_trip_of_generated_page_props(tmp_path):
    rows = list(page_props_rows(5000, seed=3))
    path = tmp_path / "pp.sql.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        write_page_props_sql(f, rows, rows_per_insert=333)
    parsed = list(SqlDump(path, "page_props").rows())
    assert [(p, n.decode(), v) for p, n, v, _ in parsed] == rows
    table = qids_table(path, "simplewiki")
    assert table.schema.field("page_id").type == pa.int64()
    expected = [(p, v.decode()) for p, n, v in rows if n == "wikibase_item"]
    assert list(zip(table["page_id"].to_pylist(), table["qid"].to_pylist())) == expected
    assert set(table["wiki"].to_pylist()) == {"simplewiki"}


def test_2025_mariadb_header_with_no_rows(data_dir):
    table = qids_table(data_dir / "enwiki-2025-page_props-header-excerpt.sql", "enwiki")
    assert table.num_rows == 0 and table.column_names == ["wiki", "page_id", "qid"]


def test_bad_qid_values_are_noted(data_dir):
    stats = SqlStats()
    table = qids_table(data_dir / "testwiki-page_props-synthetic.sql.gz", "simplewiki", stats)
    assert table.num_rows == 124
    assert stats.notes == [
        f"{data_dir / 'testwiki-page_props-synthetic.sql.gz'}: byte 15170: page 999: not a QID: 'not-a-qid'"
    ]
    assert (stats.bad_values, stats.unreadable) == (1, 0)


def test_sql_file_of_another_table(data_dir):
    with pytest.raises(
        DumpError,
        match=r"change_tag_def\.sql\.gz: byte \d+: "
        r"expected a dump of table `page_props`, found table `change_tag_def`",
    ):
        qids_table(data_dir / "simplewiki-change_tag_def.sql.gz", "simplewiki")


def test_statement_cut_short(tmp_path):
    path = tmp_path / "cut.sql"
    with open(path, "w") as f:
        write_page_props_sql(f, page_props_rows(100))
    text = path.read_text().replace(");\nUNLOCK", ",(5,'wikibase_item'\nUNLOCK")
    path.write_text(text)
    with pytest.raises(DumpError, match=r"cut\.sql: byte \d+: INSERT statement cut short"):
        qids_table(path, "simplewiki")


def test_not_sql(tmp_path):
    path = tmp_path / "x.sql"
    path.write_text("hello\nworld\n")
    with pytest.raises(DumpError, match=r"x\.sql: not a MySQL table dump"):
        qids_table(path, "simplewiki")


# --- the forms mysqldump writes for binary columns, and damaged rows ---------------
# Copies of the real samples rewritten as `mysqldump --hex-blob` (0x...) and MySQL 8's
# mysqldump (_binary '...') write them, then damaged.

SYNTHETIC = "testwiki-page_props-synthetic.sql.gz"
HEADER = "enwiki-2025-page_props-header-excerpt.sql"
_QUOTED = re.compile(rb"'((?:[^'\\]|\\.)*)'")


def _rewrite(text: bytes, form: str) -> bytes:
    """The INSERT lines of ``text`` with every string in ``form``: binary (_binary '...') or
    hex (0x..., and '' for an empty value, as --hex-blob writes it)."""

    def one(m):
        if form == "binary":
            return b"_binary " + m.group(0)
        raw = unescape(m.group(1))
        return b"0x" + raw.hex().upper().encode() if raw else b"''"

    return b"\n".join(_QUOTED.sub(one, line) if line.startswith(b"INSERT INTO") else line for line in text.split(b"\n"))


def _copy(tmp_path, data_dir, form, edit=lambda t: t):
    """A copy of the synthetic sample in ``form`` (None: as it is), edited by ``edit``."""
    text = gzip.decompress((data_dir / SYNTHETIC).read_bytes())
    text = edit(_rewrite(text, form) if form else text)
    path = tmp_path / f"{form or 'plain'}-{SYNTHETIC}"
    path.write_bytes(gzip.compress(text))
    return path, text


def _pairs(table):
    return list(zip(table["page_id"].to_pylist(), table["qid"].to_pylist()))


@pytest.mark.parametrize("form", ["binary", "hex"])
def test_binary_and_hex_values_read_as_plain_ones(tmp_path, data_dir, form):
    expected = qids_table(data_dir / SYNTHETIC, "testwiki", SqlStats())
    path, text = _copy(tmp_path, data_dir, form)
    assert (b"_binary 'Q20246634'" if form == "binary" else b",0x513230323436363334,") in text
    stats = SqlStats()
    table = qids_table(path, "testwiki", stats)
    assert _pairs(table) == _pairs(expected) and table.num_rows == 124
    assert (stats.bad_values, stats.unreadable) == (1, 0)
    assert re.fullmatch(r".*: byte \d+: page 999: not a QID: 'not-a-qid'", stats.notes[0])
    plain = list(SqlDump(data_dir / SYNTHETIC, "page_props").rows())
    assert list(SqlDump(path, "page_props").rows()) == plain


def test_hex_rows_after_the_real_2025_header(tmp_path, data_dir):
    """The enwiki 2025 header and DDL, then rows as --hex-blob writes them (lower-case too)."""
    rows = gzip.decompress((data_dir / SYNTHETIC).read_bytes()).split(b"\n")
    inserts = [line for line in rows if line.startswith(b"INSERT INTO")]
    header = (data_dir / HEADER).read_bytes()
    text = _rewrite(header + b"\n".join(inserts) + b"\n", "hex")
    text = text.replace(b"0x5131", b"0x5131".lower(), 1)  # a lower-case digit of mysqldump's
    path = tmp_path / "enwiki-page_props.sql"
    path.write_bytes(text)
    stats = SqlStats()
    table = qids_table(path, "enwiki", stats)
    assert _pairs(table) == _pairs(qids_table(data_dir / SYNTHETIC, "testwiki", SqlStats()))
    assert stats.unreadable == 0


def _damage(old: bytes, new: bytes, count: int = 1):
    def edit(text):
        assert text.count(old) >= count, old
        return text.replace(old, new, count)

    return edit


@pytest.mark.parametrize(
    "form, old, new",
    [
        (None, b"(4,'wikibase_item','Q11535643',NULL)", b"(4,'wikibase_item',Q11535643,NULL)"),
        (None, b"(4,'wikibase_item','Q11535643',NULL)", b"(-4,'wikibase_item','Q11535643',NULL)"),
        (
            "binary",
            b"(4,_binary 'wikibase_item',_binary 'Q11535643',NULL)",
            b"(4,_binary 'wikibase_item',_binary Q11535643,NULL)",
        ),
        (
            "hex",
            b"(4,0x77696B69626173655F6974656D,0x513131353335363433,NULL)",
            b"(4,0x77696B69626173655F6974656D,NULL,NULL)",
        ),
    ],
)
def test_a_row_that_cannot_be_read_is_counted_with_its_offset(tmp_path, data_dir, form, old, new):
    path, text = _copy(tmp_path, data_dir, form, edit=_damage(old, new))
    stats = SqlStats()
    table = qids_table(path, "testwiki", stats)
    assert table.num_rows == 123 and 4 not in table["page_id"].to_pylist()
    assert (stats.bad_values, stats.unreadable) == (1, 1)
    at = text.index(new)
    assert f"{path}: byte {at}: a wikibase_item row that cannot be read: " in stats.notes[0]
    with pytest.warns(UserWarning, match=r"1 wikibase_item values not a QID and 1 rows unreadable"):
        qids_table(path, "testwiki")


def test_the_word_in_a_description_is_no_row(tmp_path, data_dir):
    old = b"(2,'wikibase-shortdesc','It\\'s a"
    new = b"(2,'wikibase-shortdesc','wikibase_item, It\\'s a"
    path, _ = _copy(tmp_path, data_dir, None, edit=_damage(old, new))
    stats = SqlStats()
    assert qids_table(path, "testwiki", stats).num_rows == 124
    assert (stats.bad_values, stats.unreadable) == (1, 0)


@pytest.mark.parametrize(
    "form, old, new, message",
    [
        (
            None,
            b"(4,'wikibase_item'",
            b"(99999999999999999999,'wikibase_item'",
            r"byte {at}: page id 99999999999999999999 of a wikibase_item row is beyond int64",
        ),
        (
            "hex",
            b"(4,0x77696B69626173655F6974656D,0x51",
            b"(9223372036854775808,0x77696B69626173655F6974656D,0x51",
            r"byte {at}: page id 9223372036854775808 of a wikibase_item row is beyond int64",
        ),
        (None, b"'Q11535643'", b"'Q115\xff35643'", r"byte {at}: page 4: the wikibase_item value is not UTF-8"),
        (
            "hex",
            b"0x513131353335363433",
            b"0x5131FF353335363433",
            r"byte {at}: page 4: the wikibase_item value is not UTF-8",
        ),
    ],
)
def test_page_id_beyond_int64_or_value_not_utf8_is_an_error(tmp_path, data_dir, capsys, form, old, new, message):
    path, text = _copy(tmp_path, data_dir, form, edit=_damage(old, new))
    at = text.rfind(b"(", 0, text.index(new) + 1)
    with pytest.raises(DumpError, match=re.escape(f"{path}: ") + message.format(at=at)):
        qids_table(path, "testwiki")
    assert main(["qids", str(path), "--wiki", "simple", "--out", str(tmp_path / "q.parquet")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"wikiorigin: error: {path}: byte {at}: ")
    assert not (tmp_path / "q.parquet").exists()


def test_cli_reads_binary_values_and_reports_what_it_left_out(tmp_path, data_dir, capsys):
    old = b"(4,_binary 'wikibase_item',_binary 'Q11535643',NULL)"
    new = b"(4,_binary 'wikibase_item',NULL,NULL)"
    path, _ = _copy(tmp_path, data_dir, "binary", edit=_damage(old, new))
    out = tmp_path / "qids.parquet"
    assert main(["qids", str(path), "--wiki", "simple", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "simplewiki: 123 pages with a Wikidata item" in captured.out
    assert "left out: 1 values not a QID, 1 unreadable rows" in captured.out
    assert f"a wikibase_item row that cannot be read: {new.decode()!r}" in captured.err
    assert pq.read_table(out).num_rows == 123
