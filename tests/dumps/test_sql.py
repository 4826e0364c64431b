import gzip

import pyarrow as pa
import pytest

from wikiorigin.dumps.sql import SqlDump, SqlStats, qids_table, unescape
from wikiorigin.dumps.synthetic import page_props_rows, write_page_props_sql
from wikiorigin.errors import DumpError


def test_unescape_mysql_strings():
    assert unescape(rb"It\'s \"q\" a\\b\nc\0d\Ze\%f") == b"It's \"q\" a\\b\nc\x00d\x1ae\\%f"


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
    assert stats.notes == [f"{data_dir / 'testwiki-page_props-synthetic.sql.gz'}: page 999: not a QID: 'not-a-qid'"]


def test_sql_file_of_another_table(data_dir):
    with pytest.raises(DumpError, match=r"change_tag_def\.sql\.gz: byte \d+: expected a dump of table `page_props`, found table `change_tag_def`"):
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
