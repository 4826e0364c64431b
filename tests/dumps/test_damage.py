"""Damaged copies of real samples: a structural break in the XML, malformed XML under mwxml,
a gzip member whose CRC fails. No row may come out wrong without a word."""

import gzip
import re
import warnings

import pyarrow.parquet as pq
import pytest

from wikiorigin.cli import main
from wikiorigin.dumps import scanner as fast_scan, stubs
from wikiorigin.dumps.compression import ChecksumError, open_dump
from wikiorigin.dumps.stubs import scan_pages, scan_pages_mwxml
from wikiorigin.errors import DumpError

STUB = "elwikivoyage-stub-meta-history-sample.xml.gz"
HISTORY = "simplewiki-pages-meta-history-excerpt-export-0.10.xml"


def sample(data_dir, name) -> bytes:
    data = (data_dir / name).read_bytes()
    return gzip.decompress(data) if name.endswith(".gz") else data


def cut(data: bytes, tag: bytes, nth: int) -> bytes:
    """``data`` without its ``nth`` (from 0) occurrence of ``tag``."""
    at = -1
    for _ in range(nth + 1):
        at = data.index(tag, at + 1)
    return data[:at] + data[at + len(tag) :]


def scan(path):
    """The fast scan's pages and what it warned."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scanner = scan_pages(path)
        pages = list(scanner)
    return pages, [str(w.message) for w in caught], scanner.stats


# (what is lost, the nth occurrence, the page left out, the message). In the stub sample the
# 7th page is Agrigent (id 45), the 6th Aegina Town (id 44); its 21st </revision> is Aegina's.
BREAKS = [
    (b"</page>", 6, 45, "<page> not closed where <page> starts"),
    (b"</revision>", 20, 44, "<revision> not closed where <revision> starts"),
    (b"</title>", 6, 45, "<title> not closed where <ns> starts"),
    (b"<page>", 6, 45, "a </page> without its <page>"),
    (b"<revision>", 21, 44, "a </revision> without its <revision>"),
    (b"</timestamp>", 20, 44, "<timestamp> not closed where <contributor> starts"),
]


@pytest.mark.parametrize("tag,nth,page_id,message", BREAKS)
@pytest.mark.parametrize("block", ["normal", "tiny"])
def test_structural_break_leaves_out_one_page(
    tmp_path, data_dir, scan_path, monkeypatch, tag, nth, page_id, message, block
):
    if block == "tiny":  # pages larger than a block: summarized piece by piece
        monkeypatch.setattr(fast_scan, "BLOCK", 1 << 9)
        monkeypatch.setattr(fast_scan, "MAX_PENDING", 1 << 9)
    whole, _, _ = scan(data_dir / STUB)
    path = tmp_path / "damaged.xml.gz"
    path.write_bytes(gzip.compress(cut(sample(data_dir, STUB), tag, nth)))
    pages, notes, stats = scan(path)
    assert pages == [p for p in whole if p.page_id != page_id]  # the pages around it intact
    assert stats.broken_pages == 1 and stats.torn_pages == 0
    [note] = notes
    assert re.fullmatch(
        rf"{re.escape(str(path))}: near decompressed byte \d+, page id {page_id}: "
        rf"{re.escape(message)}: broken page, not counted",
        note,
    )
    assert stats.notes == notes


def test_two_pages_run_together(tmp_path, data_dir, scan_path):
    """Both the </page> of Agrigent and the <page> of Aleppo lost: nothing but Aleppo's head
    between two revisions shows it."""
    whole, _, _ = scan(data_dir / STUB)
    path = tmp_path / "merged.xml"
    path.write_bytes(cut(cut(sample(data_dir, STUB), b"<page>", 7), b"</page>", 6))
    pages, notes, stats = scan(path)
    assert pages == [p for p in whole if p.page_id not in (45, 46)] and stats.broken_pages == 1
    assert "page id 45: <page> not closed where <title> starts" in notes[0]


@pytest.mark.parametrize("seed", [1, 2])
def test_both_paths_agree_on_damaged_copies(tmp_path, data_dir, seed, monkeypatch):
    """Tags lost at random in both real samples: the compiled core and the Python path give
    the same pages, the same reports, or the same error."""
    import random

    if fast_scan.CORE is None:
        pytest.skip("the compiled core is not built (no C compiler at install)")
    rng = random.Random(seed)
    tags = [
        b"</page>",
        b"<page>",
        b"</revision>",
        b"<revision>",
        b"</title>",
        b"</id>",
        b"</timestamp>",
        b"</username>",
        b"</ns>",
        b"<title>",
        b"</contributor>",
    ]
    samples = [sample(data_dir, STUB), sample(data_dir, HISTORY)]
    path = tmp_path / "damaged.xml"

    def outcome(core):
        monkeypatch.setattr(fast_scan, "CORE", core)
        try:
            pages, notes, stats = scan(path)
        except DumpError as exc:
            return str(exc)
        return pages, notes, stats.broken_pages

    for _ in range(150):
        data = rng.choice(samples)
        for _ in range(rng.randrange(1, 4)):
            tag = rng.choice(tags)
            if data.count(tag):
                data = cut(data, tag, rng.randrange(data.count(tag)))
        path.write_bytes(data)
        assert outcome(fast_scan.CORE) == outcome(None)


def test_lost_page_end_in_a_full_history_with_text(tmp_path, data_dir, scan_path):
    """Revision text between the tags: the page after the break keeps its own revisions."""
    whole, _, _ = scan(data_dir / HISTORY)
    assert [(p.page_id, p.revisions) for p in whole] == [(45046, 18), (279900, 15)]
    path = tmp_path / "history.xml"
    path.write_bytes(cut(sample(data_dir, HISTORY), b"</page>", 0))
    pages, notes, stats = scan(path)
    assert pages == whole[1:] and stats.broken_pages == 1
    assert "page id 45046: <page> not closed where <page> starts" in notes[0]


def test_only_the_first_broken_pages_are_shown(tmp_path, data_dir, scan_path, monkeypatch):
    monkeypatch.setattr(fast_scan, "NOTE_LIMIT", 2)
    data = sample(data_dir, STUB)
    for nth in (12, 9, 6):  # three pages lose their title's end
        data = cut(data, b"</title>", nth)
    path = tmp_path / "titles.xml"
    path.write_bytes(data)
    pages, notes, stats = scan(path)
    assert len(pages) == 17 and stats.broken_pages == 3
    assert len(notes) == 2 and notes[1].endswith("(further broken pages are counted, not shown)")


@pytest.mark.parametrize(
    "tag,nth,place",
    [
        (b"</page>", 6, r"page id 45 \(at decompressed byte \d+\): malformed page: "),
        (b"</revision>", 20, r"page id 44 \(at decompressed byte \d+\): malformed page: "),
        (b"</title>", 6, r"line 511, column 4, page id 45 \(at decompressed byte \d+\): malformed XML: mismatched tag"),
        (b"<page>", 6, r"after page id 44, before decompressed byte \d+ \(page id 46\): malformed page: "),
    ],
)
def test_mwxml_malformed_page_in_the_middle_is_an_error(tmp_path, data_dir, tag, nth, place):
    path = tmp_path / "damaged.xml.gz"
    path.write_bytes(gzip.compress(cut(sample(data_dir, STUB), tag, nth)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # not a torn end
        with pytest.raises(DumpError, match=re.escape(str(path)) + r"(: |, )" + place):
            list(scan_pages_mwxml(path))


def test_mwxml_file_cut_mid_page_is_a_torn_end(tmp_path, data_dir):
    data = sample(data_dir, STUB)
    path = tmp_path / "cut.xml"
    path.write_bytes(data[: data.index(b"<title>Aleppo</title>") + 200])
    stats = stubs.ScanStats()
    torn = r"cut\.xml: XML ends early in page id 46 \('Aleppo'\).*torn last page"
    with pytest.warns(UserWarning, match=torn):
        pages = list(scan_pages_mwxml(path, stats=stats))
    assert [p.page_id for p in pages][-1] == 45 and len(pages) == 7 and stats.torn_pages == 1


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_lost_page_end(tmp_path, data_dir, capsys):
    """The fast engine leaves the page out and says so; mwxml stops with the place (exit 2)."""
    path = tmp_path / "elwikivoyage-damaged.xml.gz"
    path.write_bytes(gzip.compress(cut(sample(data_dir, STUB), b"</page>", 6)))
    out = tmp_path / "fast.parquet"
    code, stdout, err = run(capsys, "scan", path, "--wiki", "elwikivoyage", "--allow-non-wikipedia", "--out", out)
    assert code == 0
    assert "page id 45: <page> not closed where <page> starts: broken page, not counted" in err
    assert "19 pages, 114 revisions (3 imported), 0 torn, 1 broken;" in stdout
    rows = {r["page_id"]: r for r in pq.read_table(out).to_pylist()}
    assert 45 not in rows and rows[46]["title"] == "Aleppo" and rows[46]["revisions"] == 4
    assert rows[46]["created_at"].isoformat() == "2013-05-19T16:15:33+00:00"

    code, _, err = run(
        capsys,
        "scan",
        path,
        "--wiki",
        "elwikivoyage",
        "--allow-non-wikipedia",
        "--engine",
        "mwxml",
        "--out",
        tmp_path / "mwxml.parquet",
    )
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "elwikivoyage-damaged.xml.gz, page id 45 (at decompressed byte" in err
    assert "torn" not in err and not (tmp_path / "mwxml.parquet").exists()
    assert pq.read_table(tmp_path / "mwxml.partial.parquet").num_rows == 6


def stored_gzip_with_a_changed_digit(data_dir, tmp_path):
    """The stub as stored (uncompressed) deflate blocks, one timestamp digit changed after
    compression: it decodes cleanly, only the closing CRC-32 catches it."""
    packed = bytearray(gzip.compress(sample(data_dir, STUB), compresslevel=0))
    at = packed.index(b"<timestamp>2012-12-17T17:17:19Z")  # Aegina Town's first revision
    packed[at + len(b"<timestamp>201")] = ord("0")  # 2012 -> 2010
    path = tmp_path / "crc.xml.gz"
    path.write_bytes(bytes(packed))
    return path


def test_crc_failure_marks_the_data_unverified(tmp_path, data_dir):
    path = stored_gzip_with_a_changed_digit(data_dir, tmp_path)
    with open_dump(path) as stream:
        with pytest.raises(
            ChecksumError,
            match=r"crc\.xml\.gz: gzip data decodes but fails its "
            r"CRC-32/length check .* unverified",
        ):
            while stream.read(1 << 14):
                pass


@pytest.mark.parametrize("engine", ["fast", "mwxml"])
def test_cli_crc_failure_names_the_salvage_unverified(tmp_path, data_dir, capsys, engine):
    path = stored_gzip_with_a_changed_digit(data_dir, tmp_path)
    out = tmp_path / "el.parquet"
    code, _, err = run(
        capsys, "scan", path, "--wiki", "elwikivoyage", "--allow-non-wikipedia", "--engine", engine, "--out", out
    )
    assert code == 2 and len(err.strip().splitlines()) == 1
    salvage = tmp_path / "el.unverified.partial.parquet"
    assert not out.exists() and not (tmp_path / "el.partial.parquet").exists()
    assert f"kept in {salvage}, unverified" in err and "CRC-32" in err
    rows = {r["page_id"]: r for r in pq.read_table(salvage).to_pylist()}
    assert rows[44]["created_at"].year == 2010  # what the changed byte did: why it is flagged
