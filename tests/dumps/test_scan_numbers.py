"""Numbers past what the page table holds (issue 27): a page ``<id>`` of 20 digits, a revision
``<id>`` past 64 bits, a ``<ns>`` past 32 bits. The compiled core read the 20-digit id as a wrong
page id, silently; the Python path raised an unhandled OverflowError. Both paths: one line
naming the place (and the page, where its id can be read), exit 2, the pages before it kept;
the largest ids that fit are read as they are."""

import re

import pyarrow.parquet as pq
import pytest

from tests.dumps.test_scan_fuzz import _HEAD, _outcome, _page, _rev
from wikiorigin.cli import main
from wikiorigin.dumps import scanner as fast_scan
from wikiorigin.dumps.scan import partial_path
from wikiorigin.errors import DumpError

BIG = b"12345678901234567890"  # 20 digits: past 2^63 - 1
PAST = b"9223372036854775808"  # 2^63
LARGEST = b"9223372036854775807"  # 2^63 - 1


def _dump(tmp_path, *pages: bytes):
    path = tmp_path / "testwiki-stub-meta-history.xml"
    path.write_bytes(_HEAD + b"".join(pages) + b"</mediawiki>\n")
    return path


CASES = [
    (_page(BIG, _rev(b"70")), r"", f"a page <id> out of range {BIG!r}"),
    (_page(PAST, _rev(b"70")), r"", f"a page <id> out of range {PAST!r}"),
    (_page(b"7", _rev(BIG)), r", page id 7", f"a revision <id> out of range {BIG!r}"),
    (_page(b"7", _rev(b"70"), _rev(b"-" + BIG)), r", page id 7", f"a revision <id> out of range {b'-' + BIG!r}"),
    (_page(b"7", _rev(b"70")).replace(b"<ns>0</ns>", b"<ns>2147483648</ns>"), r", page id 7", "a <ns> out of range"),
    (_page(b"7", _rev(b"70")).replace(b"<ns>0</ns>", b"<ns>-" + BIG + b"</ns>"), r", page id 7", "a <ns> out of range"),
]


@pytest.mark.parametrize("page, named, message", CASES)
def test_a_number_out_of_range_is_one_line_naming_the_page(tmp_path, capsys, scan_path, page, named, message):
    path = _dump(tmp_path, _page(b"6", _rev(b"60")), page)
    out = tmp_path / "pages.parquet"
    code = main(["scan", str(path), "--wiki", "testwiki", "--allow-non-wikipedia", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert re.search(rf"{re.escape(str(path))}: near decompressed byte \d+{named}: {re.escape(message)}", err), err
    assert "unexpected" not in err and not out.exists()
    assert [r["page_id"] for r in pq.read_table(partial_path(out)).to_pylist()] == [6]


@pytest.mark.parametrize("page, named, message", CASES)
@pytest.mark.parametrize("block", ["normal", "tiny"])
def test_both_paths_say_the_same(tmp_path, monkeypatch, page, named, message, block):
    """The same error, rows and reports on either path; with tiny blocks the page is read piece
    by piece (a page larger than a block) on both."""
    core = fast_scan.CORE
    if core is None:
        pytest.skip("the compiled core is not built (no C compiler at install)")
    if block == "tiny":
        monkeypatch.setattr(fast_scan, "BLOCK", 1 << 7)
        monkeypatch.setattr(fast_scan, "MAX_PENDING", 1 << 7)
    path = _dump(tmp_path, _page(b"6", _rev(b"60")), page)
    out = tmp_path / "pages.parquet"
    compiled = _outcome(monkeypatch, core, path, "testwiki", out)
    assert compiled == _outcome(monkeypatch, None, path, "testwiki", out)
    assert compiled["error"][0] is DumpError and message in compiled["error"][1]


def test_a_broken_page_with_an_id_out_of_range_is_reported_without_it(tmp_path, monkeypatch, scan_path):
    """A page whose </title> is lost is left out and reported; an id the core cannot read is
    not named (the report names the place)."""
    broken = _page(BIG, _rev(b"70")).replace(b"</title>", b"")
    path = _dump(tmp_path, _page(b"6", _rev(b"60")), broken, _page(b"8", _rev(b"80")))
    found = _outcome(monkeypatch, fast_scan.CORE, path, "testwiki", tmp_path / "pages.parquet")
    assert found["error"] is None and [r["page_id"] for r in found["rows"]] == [6, 8]
    [(_, warning)] = found["warnings"]
    assert re.search(r"near decompressed byte \d+: <title> not closed where <ns> starts: broken page", warning)


def test_the_largest_ids_are_read_as_they_are(tmp_path, monkeypatch, scan_path):
    page = _page(LARGEST, _rev(LARGEST)).replace(b"<ns>0</ns>", b"<ns>-2147483648</ns>")
    path = _dump(tmp_path, page)
    found = _outcome(monkeypatch, fast_scan.CORE, path, "testwiki", tmp_path / "pages.parquet")
    assert found["error"] is None, found["error"]
    [row] = found["rows"]
    assert (row["page_id"], row["namespace"]) == (int(LARGEST), -(2**31))
    assert row["created_revision_id"] == int(LARGEST)
