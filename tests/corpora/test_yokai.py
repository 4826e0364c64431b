import re

import pyarrow.parquet as pq
import pytest

from wikiorigin.cli import main
from wikiorigin.corpora.yokai import build_list_corpus, list_links
from wikiorigin.dumps.pages import Multistream
from wikiorigin.errors import WikioriginError
from wikiorigin.schemas import ARTICLES

JA = "jawiki-20230501-pages-articles-multistream_first100k-lines.xml.xz"


def test_list_links(ja_multistream):
    dump = Multistream(*ja_multistream[:2])
    text = dump.get(["日本の妖怪一覧"])["日本の妖怪一覧"].text
    assert list_links(text, dump) == [
        ("アンパサンド", None), ("河童", None), ("地理", None), ("音楽家", "実演家"),
        ("個人", None), ("スメクティック相", None),
    ]


def test_yokai_corpus(ja_multistream, tmp_path):
    dump = Multistream(*ja_multistream[:2])
    out = tmp_path / "yokai.parquet"
    report = build_list_corpus(dump, out)
    assert (report.linked, report.found, report.redirected, report.missing) == (6, 5, 1, ["河童"])
    assert report.articles == 5 and report.without_references == 1  # the 実演家 section has none
    table = pq.read_table(out)
    assert table.schema.remove_metadata() == ARTICLES
    rows = {(r["title"], r["anchor"]): r for r in table.to_pylist()}
    assert set(rows) == {("アンパサンド", None), ("地理", None), ("音楽家", "実演家"), ("個人", None),
                         ("液晶", None)}  # スメクティック相 is a redirect to 液晶
    for row in rows.values():
        cited = {(g or None, int(n)) for g, n in re.findall(r"\[(?:([^\s\[\]]+) )?(\d+)\]", row["text"])}
        assert cited == {(r["group"], r["number"]) for r in row["references"]}
    section = rows[("音楽家", "実演家")]
    assert section["text"].startswith("== 実演家 ==") and section["url"].endswith("#%E5%AE%9F%E6%BC%94%E5%AE%B6")
    assert rows[("個人", None)]["wiki"] == "jawiki" and len(rows[("個人", None)]["references"]) == 4


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
        build_list_corpus(Multistream(dump, index), index)
