import lzma
import re
from pathlib import Path

import mwparserfromhell
import pyarrow.parquet as pq
import pytest

from wikiorigin.cli import main
from wikiorigin.corpora.yokai import ENTRY_RULE, LEFT_OUT, build_list_corpus, list_entries, list_links
from wikiorigin.dumps.pages import Multistream
from wikiorigin.errors import WikioriginError
from wikiorigin.files import read_provenance
from wikiorigin.presets.yokaieval import LIST_PAGE
from wikiorigin.schemas import ARTICLES
from wikiorigin.testing import page_xml
from wikiorigin.testing.multistream import write_multistream_pages

JA = "jawiki-20230501-pages-articles-multistream_first100k-lines.xml.xz"
DATA = Path(__file__).resolve().parents[1] / "data"
REAL = (DATA / "yokai-list-page-real.wiki").read_text(encoding="utf-8")


def test_list_links(ja_multistream):
    dump = Multistream(*ja_multistream[:2])
    text = dump.get(["日本の妖怪一覧"])["日本の妖怪一覧"].text
    assert list_links(text, dump) == [
        ("アンパサンド", None),
        ("河童", None),
        ("地理", None),
        ("音楽家", "実演家"),
        ("個人", None),
        ("スメクティック相", None),
    ]
    found = list_entries(text, dump)  # the second ＆ link repeats; ノート: heads an entry unlinked
    assert (found.entries, found.unlinked, found.left_out) == (8, 1, {"repeat": 1, "namespace": 4})


@pytest.mark.slow
def test_yokai_corpus(ja_multistream, tmp_path):
    dump = Multistream(*ja_multistream[:2])
    out = tmp_path / "yokai.parquet"
    report = build_list_corpus(dump, out, LIST_PAGE)
    assert (report.linked, report.found, report.redirected, report.missing) == (6, 5, 1, ["河童"])
    assert report.articles == 5 and report.without_references == 1  # the 実演家 section has none
    table = pq.read_table(out)
    assert table.schema.remove_metadata() == ARTICLES
    rows = {(r["title"], r["anchor"]): r for r in table.to_pylist()}
    assert set(rows) == {
        ("アンパサンド", None),
        ("地理", None),
        ("音楽家", "実演家"),
        ("個人", None),
        ("液晶", None),
    }  # スメクティック相 is a redirect to 液晶
    for row in rows.values():
        cited = {(g or None, int(n)) for g, n in re.findall(r"\[(?:([^\s\[\]]+) )?(\d+)\]", row["text"])}
        assert cited == {(r["group"], r["number"]) for r in row["references"]}
    section = rows[("音楽家", "実演家")]
    assert section["text"].startswith("== 実演家 ==") and section["url"].endswith("#%E5%AE%9F%E6%BC%94%E5%AE%B6")
    assert rows[("個人", None)]["wiki"] == "jawiki" and len(rows[("個人", None)]["references"]) == 4


@pytest.mark.slow
def test_cli_and_missing_list_page(ja_multistream, tmp_path, capsys):
    dump, index, _ = ja_multistream
    out = tmp_path / "y.parquet"
    assert main(["corpus", "yokai", "--dump", str(dump), "--index", str(index), "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "6 linked, 5 found, 1 redirected, 1 missing" in captured.out
    assert "'河童' is linked but not in the dump" in captured.err
    with pytest.raises(WikioriginError, match="no page 'Nothing here' .*list page"):
        build_list_corpus(Multistream(dump, index), tmp_path / "z.parquet", list_page="Nothing here")


def test_the_library_refuses_an_output_that_is_an_input(ja_multistream):
    dump, index, _ = ja_multistream
    with pytest.raises(WikioriginError, match="would overwrite the input"):
        build_list_corpus(Multistream(dump, index), index, LIST_PAGE)


# The entries of tests/data/yokai-list-page-real.wiki, a page written the way the real
# 「日本の妖怪一覧」 is: tables of 名前・読み・備考 by kana, some sections still bulleted.
REAL_ENTRIES = [
    ("アイヌカイセイ", None),
    ("人魚", "アイヌソッキ"),
    ("青行燈", None),
    ("送り雀", None),
    ("青女房 (妖怪)", None),
    ("垢嘗", None),
    ("あかなめ", None),
    ("化け狸", "赤殿中"),
    ("アカマタ", None),
    ("小豆洗い", None),
    ("天邪鬼", None),
    ("アマビエ", None),  # あ: a wikitable
    ("イクチ", None),
    ("磯女", None),
    ("一本だたら", "類話"),
    ("一反木綿", None),
    ("木綿ひき", None),
    ("犬神", None),  # い: bullets, a nested one
    ("牛鬼", None),
    ("産女", None),  # う: ; terms
    ("河童", None),
    ("河童", "別名"),
    ("川赤子", None),  # か: a sortable wikitable with a caption
    ("狐火", None),
    ("キジムナー", None),  # き: bullets in a <div>
    ("件 (妖怪)", None),  # く: row headers
    ("座敷童子", None),
    ("さとり (妖怪)", None),
    ("山本五郎左衛門", "類話"),  # さ: {{Columns-list}}
    ("天狗", None),
    ("烏天狗", None),
    ("土蜘蛛", None),
    ("手の目", None),  # た: a layout table
    ("ぬらりひょん", None),
    ("塗壁", None),
]
# Every other link, by why it is left out (counted by hand on the page)
REAL_LEFT_OUT = {
    "prose": 12,  # the lead: 日本, 妖怪, 民俗学, 鳥山石燕, 画図百鬼夜行, 江戸時代, 柳田國男, ...
    "description": 24,  # after an entry's name: 常陸国, 根岸鎮衛, 耳嚢, 水木しげる, →管狐, ...
    "cell": 20,  # 備考 and 地域 cells: 北海道, →送り雀, 秋田県, 仙北市, 鹿児島県, ...
    "header": 1,  # the caption's 伝承
    "footnote": 6,  # <ref>s: 村上健司, 角川書店, 更科源蔵, 湯本豪一, 岩波書店, 宇和島市
    "template": 15,  # {{Navbox}} (10), {{妖怪}} (2), {{Cite book}} in 参考文献 (3)
    "back_matter": 11,  # 関連項目 (5), 参考文献 (5), 外部リンク (1)
    "namespace": 12,  # the file and its caption's link, [[:Category:...]], the contents' [[#あ行|あ]]s,
    "repeat": 1,  # Wikipedia:, the categories; and 川太郎, a second link to 河童
}
AUTHORS_BOOKS_PLACES = {
    "柳田國男",
    "鳥山石燕",
    "画図百鬼夜行",
    "村上健司",
    "日本妖怪大事典",
    "水木しげる",
    "ゲゲゲの鬼太郎",
    "耳嚢",
    "北海道",
    "鹿児島県",
    "西日本",
    "百鬼夜行絵巻",
    "日本の幽霊一覧",
    "妖怪",
    "妖怪画",
    "多田克己",
    "小学館",
    "国際日本文化研究センター",
    "井上円了",
    "管狐",
}


@pytest.fixture(scope="module")
def real_dump(tmp_path_factory):
    """A jawiki multistream dump (the real sample's siteinfo) of the realistic list page and a
    few of its articles: one a redirect, one without the section the list links to."""
    with lzma.open(DATA / "dumps" / JA) as f:
        head = f.read(1 << 16)
    head = head[: head.index(b"</siteinfo>") + len(b"</siteinfo>\n")]
    ref = "<ref>{{Cite book|和書|author=村上健司|title=日本妖怪大事典|year=2005}}</ref>"
    articles = {
        "アイヌカイセイ": f"'''アイヌカイセイ'''は[[アイヌ]]の妖怪{ref}。",
        "人魚": f"'''人魚'''は水に棲む。\n== アイヌソッキ ==\n[[北海道]]の人魚{ref}。\n== 脚注 ==\n{{{{Reflist}}}}",
        "垢嘗": f"'''垢嘗'''は風呂場の垢をなめる妖怪{ref}。",
        "河童": f"'''河童'''は川に棲む{ref}。\n== 別名 ==\nガラッパ、川太郎<ref>別名の出典</ref>。",
        "化け狸": "'''化け狸'''は化ける狸。\n== 伝承 ==\n各地にある。",
        "天狗": "'''天狗'''は山に棲む。",
    }
    pages = [page_xml(1, "日本の妖怪一覧", REAL)]
    pages += [page_xml(10 + i, title, text) for i, (title, text) in enumerate(articles.items())]
    pages.append(page_xml(30, "あかなめ", "#転送 [[垢嘗]]", redirect="垢嘗"))
    d = tmp_path_factory.mktemp("real-list")
    write_multistream_pages(head, pages, d / "dump.xml.bz2", d / "index.txt.bz2", pages_per_stream=3)
    return d / "dump.xml.bz2", d / "index.txt.bz2"


def test_the_entries_of_a_page_written_like_the_real_one(real_dump):
    found = list_entries(REAL, Multistream(*real_dump))
    assert found.links == REAL_ENTRIES
    assert not {title for title, _ in found.links} & AUTHORS_BOOKS_PLACES
    assert found.left_out == REAL_LEFT_OUT and list(REAL_LEFT_OUT) == list(LEFT_OUT)
    # 41 entries: 20 table rows and 21 list items; 5 name no article (赤テン鳥, {{仮リンク|赤子}},
    # 以津真天, 飯綱 → [[管狐]], 首かじり)
    assert (found.entries, found.unlinked) == (41, 5)
    # every link of the page is taken or left out for one reason (a comment's link is none)
    assert len(found.links) + sum(found.left_out.values()) == len(mwparserfromhell.parse(REAL).filter_wikilinks())


@pytest.mark.parametrize(
    ("wikitext", "links", "left_out"),
    [
        # a heading of several back-matter parts; a section of the body after it takes entries again
        ("== 脚注・出典 ==\n* [[A]]\n=== 注釈 ===\n* [[B]]\n== い ==\n* [[C]]", [("C", None)], {"back_matter": 2}),
        # a per-section 関連項目 at level 3 ends at the next heading of its level or above
        (
            "== あ ==\n* [[A]]\n=== 関連項目 ===\n* [[B]]\n=== い ===\n* [[C]]",
            [("A", None), ("C", None)],
            {"back_matter": 1},
        ),
        # text before the link: the entry is unlinked, its link a description; 「」, '''...''' are not text
        ("* 赤舐め → [[垢嘗]]\n* 「'''[[垢嘗]]'''」", [("垢嘗", None)], {"description": 1}),
        # a template before the name ends the head, except an anchor
        ("* {{lang|ja|X}} [[鳥山石燕]]\n* {{Anchor|y}}[[Y]]", [("Y", None)], {"description": 1}),
        # a table without class wikitable and no list is layout: its links are prose
        ("{|\n| [[A]] || [[B]]\n|}", [], {"prose": 2}),
        # a wikitable's first data cell names the row, also without a header row or "|-"
        (
            '{| class="wikitable"\n| [[A]] || [[B]]\n|-\n| [[C]]<ref>[[D]]</ref> || x\n|}',
            [("A", None), ("C", None)],
            {"cell": 1, "footnote": 1},
        ),
        # a raw navbox table is a template; a leading colon does not make a category an article
        ('{| class="navbox"\n| [[A]]\n|}\n* [[:Category:妖怪]]\n* [[:en:Yokai]]', [], {"template": 1, "namespace": 2}),
    ],
)
def test_the_entry_rule(real_dump, wikitext, links, left_out):
    found = list_entries(wikitext, Multistream(*real_dump))
    assert (found.links, found.left_out) == (links, left_out)


def test_corpus_of_a_page_written_like_the_real_one(real_dump, tmp_path, capsys):
    dump, index = real_dump
    out = tmp_path / "real.parquet"
    assert main(["corpus", "yokai", "--dump", str(dump), "--index", str(index), "--out", str(out)]) == 0
    printed = capsys.readouterr()
    assert (
        "日本の妖怪一覧: 41 entries (5 unlinked), 35 linked, 7 found, 1 redirected, 27 missing, "
        "1 duplicates, 1 without any reference" in printed.out
    )
    assert printed.out.rstrip().endswith(
        "other links left out: 12 prose, 24 description, 20 cell, 1 header, 6 footnote, 15 template, "
        "11 back matter, 12 namespace, 1 repeat"
    )
    assert "'柳田國男'" not in printed.err and "'イクチ' is linked but not in the dump" in printed.err
    rows = {(r["title"], r["anchor"]): r for r in pq.read_table(out).to_pylist()}
    # あかなめ is a redirect to 垢嘗, taken once; 化け狸 has no section 赤殿中
    assert set(rows) == {
        ("アイヌカイセイ", None),
        ("人魚", "アイヌソッキ"),
        ("垢嘗", None),
        ("河童", None),
        ("河童", "別名"),
        ("天狗", None),
    }
    assert rows[("河童", "別名")]["text"].startswith("== 別名 ==") and len(rows[("河童", "別名")]["references"]) == 1
    report = build_list_corpus(Multistream(dump, index), tmp_path / "again.parquet", LIST_PAGE)
    assert report.sections_missing == ["化け狸#赤殿中"] and report.left_out == REAL_LEFT_OUT
    meta = read_provenance(out)
    assert meta["entries"] == ENTRY_RULE and meta["entry_counts"] == {
        "entries": 41,
        "unlinked": 5,
        "linked": 35,
        "left_out": REAL_LEFT_OUT,
    }
