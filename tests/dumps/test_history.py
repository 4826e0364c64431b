import bz2
import io

import pytest

from wikiorigin.dumps.history import history_batches
from wikiorigin.errors import DumpError
from wikiorigin.testing import write_history_tsv, write_history_xml


@pytest.mark.parametrize("old_layout", [False, True])
def test_page_events_become_pages_rows(tmp_path, old_layout):
    records = list(write_history_xml(io.BytesIO(), 300_000, seed=2))
    text = io.StringIO()
    write_history_tsv(text, records, old_layout=old_layout)
    path = tmp_path / "2026-09.testwiki.all-time.tsv.bz2"
    path.write_bytes(bz2.compress(text.getvalue().encode()))
    rows = [r for b in history_batches([path]) for r in b.to_pylist()]
    assert [r["page_id"] for r in rows] == [r.page_id for r in records]
    for row, rec in zip(rows, records):
        assert row["title"] == rec.title and row["namespace"] == rec.namespace
        assert row["is_redirect"] == rec.is_redirect
        assert row["created_at"] == (rec.created_at or rec.first_revision_at)
        assert row["first_revision_at"] == rec.first_revision_at
        assert row["revisions"] is None


def test_wrong_number_of_fields(tmp_path):
    path = tmp_path / "bad.tsv"
    path.write_text("testwiki\tpage\tcreate\t2001-01-01 00:00:00.0\tonly five\n")
    with pytest.raises(DumpError, match=r"bad\.tsv: line 1: 5 tab-separated fields"):
        list(history_batches([path]))
