import gzip
import warnings
from datetime import datetime, timezone

import pytest

from wikiorigin.dumps import scanner as fast_scan, stubs
from wikiorigin.dumps.stubs import scan_pages, scan_pages_mwxml
from wikiorigin.errors import DumpError
from wikiorigin.testing import write_history_xml

SAMPLES = [
    "elwikivoyage-stub-meta-history-sample.xml.gz",
    "simplewiki-pages-meta-history-excerpt-export-0.10.xml",
    "simplewiki-file-export-v2-export-0.11.xml",
    "elwikivoyage-pages-articles-multistream-p2566p2583.xml.bz2",
    "jawiki-20230501-pages-articles-multistream_first100k-lines.xml.xz",
]


@pytest.fixture(autouse=True)
def both_paths(scan_path):
    """Every test runs on the compiled core and on the pure-Python path (conftest's scan_path)."""
    return scan_path


def both(path, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return list(scan_pages(path, **kw)), list(scan_pages_mwxml(path, **kw))


def utc(text):
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)


@pytest.mark.parametrize("name", SAMPLES)
def test_engines_agree_on_real_samples(data_dir, name):
    fast, oracle = both(data_dir / name)
    assert fast and fast == oracle


def test_imported_revisions_do_not_set_creation(data_dir):
    pages = {p.title: p for p in scan_pages(data_dir / "elwikivoyage-stub-meta-history-sample.xml.gz")}
    assert len(pages) == 20 and sum(p.revisions for p in pages.values()) == 118
    aleppo = pages["Aleppo"]  # one revision imported from enwiki, older than the local ones
    assert aleppo.imported_revisions == 1 and aleppo.is_redirect
    assert aleppo.first_revision_at == utc("2012-12-23T22:51:57Z")
    assert aleppo.created_at == utc("2013-05-19T16:15:33Z")
    assert sum(p.imported_revisions for p in pages.values()) == 3


def test_suppressed_fields_are_normal(data_dir):
    pages = list(scan_pages(data_dir / "simplewiki-pages-meta-history-excerpt-export-0.10.xml"))
    ryulong = pages[0]
    assert (ryulong.page_id, ryulong.namespace, ryulong.title) == (45046, 2, "User:Ryulong")
    assert ryulong.revisions == 18 and ryulong.created_revision_id == 266092
    assert ryulong.created_at == utc("2006-12-13T03:07:14Z")


def test_torn_last_page_is_reported_and_the_rest_kept(data_dir):
    scanner = scan_pages(data_dir / "jawiki-20230501-pages-articles-multistream_first100k-lines.xml.xz")
    with pytest.warns(UserWarning, match=r"page id 453 .*torn last page"):
        pages = list(scanner)
    assert len(pages) == 238 and scanner.stats.torn_pages == 1
    assert "near decompressed byte" in scanner.torn


def test_namespaces_filter(data_dir):
    path = data_dir / "jawiki-20230501-pages-articles-multistream_first100k-lines.xml.xz"
    fast, oracle = both(path, namespaces=[0])
    assert fast == oracle and len(fast) == 204 and {p.namespace for p in fast} == {0}


@pytest.mark.parametrize("version,with_text", [("0.10", False), ("0.11", False), ("0.10", True)])
def test_generated_files_known_answers(tmp_path, version, with_text):
    path = tmp_path / "gen.xml.gz"
    with gzip.open(path, "wb", compresslevel=1) as f:
        expected = list(write_history_xml(f, 600_000, seed=5, version=version, with_text=with_text))
    fast, oracle = both(path)
    assert fast == expected
    assert oracle == expected
    assert any(p.imported_revisions for p in expected)
    assert any(p.created_at is None for p in expected)  # every revision imported


def test_page_larger_than_a_block(tmp_path, monkeypatch, synthetic_stub):
    path, expected = synthetic_stub
    monkeypatch.setattr(fast_scan, "BLOCK", 1 << 12)
    monkeypatch.setattr(fast_scan, "MAX_PENDING", 1 << 12)
    assert list(scan_pages(path)) == expected


def test_stats_add():
    a = stubs.ScanStats(pages=2, revisions=5, notes=["x"])
    b = stubs.ScanStats(pages=1, revisions=1, imported_revisions=1)
    total = a + b
    assert (total.pages, total.revisions, total.imported_revisions, total.notes) == (3, 6, 1, ["x"])


def _xml(body: bytes, version=b"0.10") -> bytes:
    return (
        b'<mediawiki xmlns="http://www.mediawiki.org/xml/export-'
        + version
        + b'/" version="'
        + version
        + b'">\n  <siteinfo>\n    <dbname>testwiki</dbname>\n  </siteinfo>\n'
        + body
    )


PAGE = (
    b"  <page>\n    <title>A &amp; B</title>\n    <ns>0</ns>\n    <id>7</id>\n"
    b"    <revision>\n      <id>70</id>\n      <timestamp>2005-01-02T03:04:05Z</timestamp>\n"
    b"      <contributor>\n        <username>X</username>\n        <id>1</id>\n      </contributor>\n"
    b"    </revision>\n  </page>\n"
)


def test_xml_cut_mid_page(tmp_path):
    path = tmp_path / "cut.xml"
    path.write_bytes(_xml(PAGE + PAGE.replace(b"<id>7<", b"<id>8<")[:120]))
    with pytest.warns(UserWarning, match=r"cut\.xml: .*page id 8 .*torn last page"):
        pages = list(scan_pages(path))
    assert [p.page_id for p in pages] == [7] and pages[0].title == "A & B"


def test_unknown_schema_version(tmp_path):
    path = tmp_path / "v.xml"
    path.write_bytes(_xml(PAGE, version=b"0.3"))
    with pytest.raises(DumpError, match=r"v\.xml: unknown export schema version '0\.3'"):
        list(scan_pages(path))


def test_not_a_dump(tmp_path):
    path = tmp_path / "notes.txt.gz"
    path.write_bytes(gzip.compress(b"hello, this is not XML\n" * 100))
    with pytest.raises(DumpError, match=r"notes\.txt\.gz: not a MediaWiki XML export"):
        list(scan_pages(path))


def test_document_type_declarations_are_refused(tmp_path):
    path = tmp_path / "entities.xml"
    evil = b'<?xml version="1.0"?>\n<!DOCTYPE m [<!ENTITY e SYSTEM "file:///etc/passwd">]>\n'
    path.write_bytes(evil + _xml(PAGE.replace(b"A &amp; B", b"&e;")))
    for engine in (scan_pages, scan_pages_mwxml):
        with pytest.raises(DumpError, match="refusing an XML document type declaration"):
            list(engine(path))


def test_malformed_timestamp_names_the_page(tmp_path):
    path = tmp_path / "ts.xml"
    path.write_bytes(_xml(PAGE.replace(b"2005-01-02T03:04:05Z", b"yesterday")) + b"</mediawiki>\n")
    with pytest.raises(DumpError, match=r"ts\.xml: .*page id 7: malformed <timestamp> b'yesterday'"):
        list(scan_pages(path))


def test_revision_without_timestamp(tmp_path):
    path = tmp_path / "nots.xml"
    bad = PAGE.replace(b"      <timestamp>2005-01-02T03:04:05Z</timestamp>\n", b"")
    path.write_bytes(_xml(PAGE + bad) + b"</mediawiki>\n")
    with pytest.raises(DumpError, match=r"nots\.xml: .*a <revision> without <id> or <timestamp>"):
        list(scan_pages(path))


def test_literal_greater_than_in_username_counts_as_import(tmp_path):
    path = tmp_path / "lit.xml"
    imported = PAGE.replace(b"<username>X<", b"<username>en>X<").replace(
        b"</revision>\n  </page>",
        b"</revision>\n    <revision>\n      <id>71</id>\n      <timestamp>2006-01-01T00:00:00Z"
        b"</timestamp>\n      <contributor>\n        <ip>1.2.3.4</ip>\n      </contributor>\n"
        b"      <comment>a &gt; b</comment>\n    </revision>\n  </page>",
    )
    path.write_bytes(_xml(imported) + b"</mediawiki>\n")
    fast, oracle = both(path)
    assert fast == oracle
    assert fast[0].imported_revisions == 1 and fast[0].created_revision_id == 71


@pytest.mark.parametrize("scan_threads", [1, 2])
def test_blocks_scanned_in_parallel_parts(synthetic_stub, scan_threads):
    path, expected = synthetic_stub
    scanner = scan_pages(path, scan_threads=scan_threads)
    assert list(scanner) == expected
    assert scanner.stats.pages == len(expected)
    assert scanner.stats.revisions == sum(r.revisions for r in expected)


def test_bzip2_full_history_with_text(tmp_path):
    import bz2

    path = tmp_path / "testwiki-20260801-p1p999.xml.bz2"
    with bz2.open(path, "wb") as f:
        expected = list(write_history_xml(f, 2_500_000, seed=8, with_text=True, text_size=3000))
    assert list(scan_pages(path, threads=2)) == expected


def test_damaged_xml_never_crashes(tmp_path, data_dir):
    """Random damage to a real stub: each scan ends in records or a DumpError, never a crash
    (the compiled core reads raw memory: this guards its bounds)."""
    import random

    data = gzip.decompress((data_dir / "elwikivoyage-stub-meta-history-sample.xml.gz").read_bytes())
    rng = random.Random(4)
    path = tmp_path / "damaged.xml"
    for _ in range(150):
        damaged = bytearray(data)
        for _ in range(rng.randrange(1, 20)):
            at = rng.randrange(len(damaged))
            damaged[at : at + rng.randrange(1, 30)] = bytes(
                rng.choice(b"<>/&;#x0123 \n") for _ in range(rng.randrange(0, 30))
            )
        path.write_bytes(bytes(damaged[: rng.randrange(len(damaged) // 2, len(damaged) + 1)]))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                pages = list(scan_pages(path))
            except DumpError:
                continue
        assert all(p.revisions >= 0 for p in pages)
