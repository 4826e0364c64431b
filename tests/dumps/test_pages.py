import bz2
import warnings

import pytest

from wikiorigin.dumps.pages import Multistream, TitleNormalizer, iter_pages
from wikiorigin.dumps.xmlhead import SiteInfo
from wikiorigin.errors import DumpError
from wikiorigin.testing import page_xml, write_multistream, xml

EL = "elwikivoyage-pages-articles-multistream-p2566p2583.xml.bz2"
EL_INDEX = "elwikivoyage-pages-articles-multistream-index-p2566p2583.txt.bz2"
JA = "jawiki-20230501-pages-articles-multistream_first100k-lines.xml.xz"


def test_real_multistream_sample(data_dir):
    ms = Multistream(data_dir / EL, data_dir / EL_INDEX)
    assert ms.site.dbname == "elwikivoyage" and len(ms) == 17
    sequential = {p.page_id: p for p in iter_pages(data_dir / EL)}
    assert set(sequential) == set(ms.page_ids())
    fetched = ms.get(ms.titles())
    assert {p.page_id: p for p in fetched.values()} == sequential
    page = ms.get([2583])[2583]
    assert page.title == "Τύνιδα" and page.revision_id > 0 and "Τύνιδα" in page.text


@pytest.mark.slow
def test_random_access_equals_sequential_on_jawiki(ja_multistream, data_dir):
    dump, index, n = ja_multistream
    with pytest.warns(UserWarning, match="torn last page"):
        sequential = list(iter_pages(data_dir / JA))
    assert n == len(sequential) + 1 == 239  # and our list page
    ms = Multistream(dump, index, threads=2)
    fetched = ms.get([p.title for p in sequential], follow_redirects=False)
    assert [fetched[p.title] for p in sequential] == sequential
    assert ms.site.namespaces[1] == "ノート"


def test_titles_are_normalized(ja_multistream):
    dump, index, _ = ja_multistream
    ms = Multistream(dump, index)
    assert ms.get(["wikipedia:Sandbox"], follow_redirects=False)["wikipedia:Sandbox"].title == "Wikipedia:Sandbox"
    assert "アンパサンド" in ms.get(["  アンパサンド_"])["  アンパサンド_"].title
    assert ms.missing(["存在しない記事", "アンパサンド"]) == ["存在しない記事"]
    assert ms.get(["存在しない記事"]) == {}


def test_title_normalizer():
    site = SiteInfo(version="0.10", case="first-letter", namespaces={0: "", 1: "Talk", 4: "Wikipedia"})
    norm = TitleNormalizer(site)
    assert norm("kappa_(folklore)") == "Kappa (folklore)"
    assert norm("talk:  kappa") == "Talk:Kappa"
    assert norm("Kappa#History") == "Kappa"
    assert norm("Nowhere:kappa") == "Nowhere:kappa"
    sensitive = TitleNormalizer(SiteInfo(version="0.10", case="case-sensitive"))
    assert sensitive("iPhone") == "iPhone"


def _page(pid, title, body="text", redirect=None):
    return page_xml(pid, title, body, redirect=redirect).decode()


def _dump(tmp_path, pages, per_stream=2):
    source = tmp_path / "src.xml"
    source.write_text(xml.header("testwiki") + "".join(pages) + xml.FOOTER)
    dump, index = tmp_path / "d.xml.bz2", tmp_path / "i.txt.bz2"
    write_multistream(source, dump, index, pages_per_stream=per_stream)
    return dump, index


def test_redirects_are_followed_and_loops_reported(tmp_path):
    dump, index = _dump(
        tmp_path,
        [
            _page(1, "Kappa", "#REDIRECT [[Water imp]]", redirect="Water imp"),
            _page(2, "Water imp", "about kappa"),
            _page(3, "Loop A", redirect="Loop B"),
            _page(4, "Loop B", redirect="Loop A"),
            _page(5, "Dangling", redirect="Nowhere"),
        ],
    )
    ms = Multistream(dump, index)
    got = ms.get(["Kappa", "Loop A", "Dangling"])
    assert got["Kappa"].title == "Water imp" and got["Kappa"].text == "about kappa"
    assert got["Loop A"].title == "Loop A"
    assert ms.problems == ["'Loop A': redirect loop at 'Loop A'", "'Dangling': redirect to 'Nowhere', not in the dump"]


def test_index_of_another_dump(tmp_path, data_dir):
    dump, _ = _dump(tmp_path, [_page(i, f"Page {i}") for i in range(1, 9)])
    with pytest.raises(DumpError, match="does the index belong to this dump"):
        Multistream(dump, data_dir / EL_INDEX).get(["Τύνιδα"])


def test_not_an_index(tmp_path, data_dir):
    bad = tmp_path / "index.txt.bz2"
    bad.write_bytes(bz2.compress(b"this is not an index\n"))
    with pytest.raises(DumpError, match="not a multistream index line"):
        Multistream(data_dir / EL, bad)


def test_index_parsed_in_blocks_with_colons_in_titles(tmp_path, monkeypatch):
    from wikiorigin.dumps import multistream

    titles = ["Help:Contents: a guide", "河童", "Z", "A:B:C", "Ämter", "a lower case"] + [
        f"Page {i}" for i in range(40)
    ]
    dump, index = _dump(tmp_path, [_page(i + 1, t, body=f"body {i}") for i, t in enumerate(titles)], per_stream=3)
    monkeypatch.setattr(multistream, "_INDEX_BLOCK", 37)  # lines straddle the blocks
    ms = Multistream(dump, index)
    assert len(ms) == len(titles) and ms.titles() == titles
    got = ms.get(["Help:Contents: a guide", "A:B:C", "河童", "Page 39", "Ämter", "a lower case", 3, 999])
    assert got["A:B:C"].text == "body 3" and got["河童"].page_id == 2 and got[3].title == "Z"
    assert got["a lower case"].title == "a lower case" and 999 not in got
    assert ms.missing(["Nothing", 999, "Page 39"]) == ["Nothing", 999]


def test_a_bad_line_among_good_ones_and_an_empty_index(tmp_path, data_dir):
    lines = bz2.decompress((data_dir / EL_INDEX).read_bytes()).splitlines()
    bad = tmp_path / "index.txt.bz2"
    bad.write_bytes(bz2.compress(b"\n".join(lines[:5] + [b"600:twelve:Title"] + lines[5:]) + b"\n"))
    with pytest.raises(DumpError, match=r"index.txt.bz2: not a multistream index line: b'600:twelve:Title'"):
        Multistream(data_dir / EL, bad)
    bad.write_bytes(bz2.compress(b"\n\n"))
    with pytest.raises(DumpError, match="an empty multistream index"):
        Multistream(data_dir / EL, bad)


def test_a_dump_that_is_not_bzip2_and_a_stream_damaged_inside(tmp_path, data_dir):
    """Not a multistream dump at all: said so, naming the file. A real stream damaged inside
    (its start where the index says, bytes flipped in the middle): damage, not a wrong index."""
    text = tmp_path / "dump.xml"
    text.write_text("<mediawiki>not compressed</mediawiki>\n" * 50)
    with pytest.raises(DumpError, match=r"dump.xml: not a bzip2 multistream dump: its first \d+ bytes are no bzip2"):
        Multistream(text, data_dir / EL_INDEX)
    ms = Multistream(data_dir / EL, data_dir / EL_INDEX)
    offset = ms.entry("Τύνιδα").offset
    end = min(o for o in ms.offsets if o > offset)
    raw = bytearray((data_dir / EL).read_bytes())
    for at in range(offset + (end - offset) // 2, offset + (end - offset) // 2 + 64):
        raw[at] ^= 0xFF
    damaged = tmp_path / EL
    damaged.write_bytes(bytes(raw))
    with pytest.raises(DumpError, match=rf"{EL}: the bzip2 stream at byte {offset} \(\d+ bytes\) is damaged"):
        Multistream(damaged, data_dir / EL_INDEX).get(["Τύνιδα"])


def test_fetching_articles_shows_progress(data_dir, capsys, monkeypatch):
    monkeypatch.setenv("WIKIORIGIN_PROGRESS_SECONDS", "0")
    ms = Multistream(data_dir / EL, data_dir / EL_INDEX)
    ms.get(ms.titles())
    assert f"{EL}: articles: 17/17 articles (" in capsys.readouterr().err


def test_redirect_chains_are_followed_hop_by_hop(tmp_path):
    dump, index = _dump(
        tmp_path,
        [
            _page(1, "A", redirect="B"),
            _page(2, "B", redirect="C"),
            _page(3, "C", "the end"),
            _page(4, "D", redirect="C"),
        ],
        per_stream=1,
    )
    ms = Multistream(dump, index)
    got = ms.get(["A", "D", "C"])
    assert {k: p.title for k, p in got.items()} == {"A": "C", "D": "C", "C": "C"}
    assert ms.problems == []
    short = Multistream(dump, index)
    assert short.get(["A"], max_hops=1)["A"].title == "A"
    assert short.problems == ["'A': more than 1 redirects"]


class _Counting(Multistream):
    """A Multistream that counts the streams it decompresses."""

    streams = 0

    def _read_stream(self, offset):
        self.streams += 1
        return super()._read_stream(offset)


@pytest.mark.slow
def test_each_reads_the_dump_in_order_a_few_streams_ahead(tmp_path, data_dir):
    dump, index = tmp_path / "ja.xml.bz2", tmp_path / "ja-index.txt.bz2"
    with warnings.catch_warnings():  # the sample's torn last page
        warnings.simplefilter("ignore")
        write_multistream(data_dir / JA, dump, index, pages_per_stream=10, compresslevel=1)
    ms = _Counting(dump, index, threads=2)
    ids = ms.page_ids()
    shuffled = ids[1::2] + ids[::2] + ids[:5] + [10**9]  # any order, repeats, one not in the dump
    pages = ms.each(shuffled)
    first_key, first = next(pages)
    streams = len(ms.entries.stream_offsets())
    assert streams > 10 and ms.streams <= 2 * 2 + 1  # the first stream and those decompressed ahead
    got = [(first_key, first), *pages]
    assert [key for key, _ in got] == ids  # the dump's order, each once; the id not in it left out
    assert ms.streams == streams  # each stream once
    assert {key: page for key, page in got} == ms.get(ids, follow_redirects=False)
