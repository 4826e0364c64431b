"""One-line errors before any work: an output that is a directory, for every command that
writes one file."""

from pathlib import Path

import pytest

from wikiorigin.cli import main

DUMPS = Path(__file__).resolve().parents[1] / "data" / "dumps"
EL_INDEX = DUMPS / "elwikivoyage-pages-articles-multistream-index-p2566p2583.txt.bz2"
EL = DUMPS / "elwikivoyage-pages-articles-multistream-p2566p2583.xml.bz2"


@pytest.mark.parametrize("argv", [
    ["scan", str(DUMPS / "elwikivoyage-stub-meta-history-sample.xml.gz"), "--wiki", "elwikivoyage",
     "--allow-non-wikipedia"],
    ["qids", str(DUMPS / "enwiki-2025-page_props-header-excerpt.sql"), "--wiki", "en"],
    ["origins", str(Path(__file__).resolve().parents[1] / "data" / "tree")],
    ["corpus", "yokai", "--dump", str(EL), "--index", str(EL_INDEX), "--list-page", "Τύνιδα"],
])
def test_an_output_that_is_a_directory(argv, tmp_path, capsys):
    assert main([*argv, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path}: a directory; give a file name" in err and len(err.strip().splitlines()) == 1
