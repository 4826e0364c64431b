"""What a new user found: an output named for another format, a
directory given to ``scan``, a card for a folder that holds no built set, and a Wikidata dump
that repeats an entity. Each is one line and exit 2 before any work (and no call paid), or a
counted warning. (Options out of range: tests/test_inputs_options.py.)"""

import json

import pyarrow as pa
import pyarrow.parquet as pq

from tests.conftest import DATA, ROOT
from tests.openai_server import ChatServer
from wikiorigin.cli import main
from wikiorigin.files import provenance, write_table
from wikiorigin.schemas import ARTICLES, MCQ, ORIGINS

TREE = ROOT / "tests" / "data" / "tree"


def _error(capsys) -> str:
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "unexpected" not in err, err
    return err


def _origins(path):
    rows = [
        {"qid": f"Q{i}", "origin_wiki": "jawiki", "n_wikis": i, "lead_days": 1.0, "editions": []} for i in range(1, 6)
    ]
    pq.write_table(pa.Table.from_pylist(rows, schema=ORIGINS), path)
    return path


def test_an_output_named_for_another_format_is_refused_before_any_call(tmp_path, capsys):
    articles = tmp_path / "articles.parquet"
    pq.write_table(
        pa.Table.from_pylist(
            [
                {
                    "wiki": "jawiki",
                    "page_id": 1,
                    "title": "河童",
                    "revision_id": 5,
                    "url": "https://ja.wikipedia.org/wiki/河童",
                    "text": "河童[1]。",
                    "references": [],
                }
            ],
            schema=ARTICLES,
        ),
        articles,
    )
    with ChatServer(answer=lambda messages: "{}") as server:
        assert (
            main(
                [
                    "build",
                    "mcq",
                    "--articles",
                    str(articles),
                    "--out",
                    str(tmp_path / "out.csv"),
                    "--model",
                    "gen",
                    "--base-url",
                    server.url,
                    "--cache",
                    str(tmp_path / "c.sqlite"),
                ]
            )
            == 2
        )
    assert "out.csv: give a file name ending in .parquet, the format written (e.g. out.parquet)" in _error(capsys)
    assert server.calls == [] and not (tmp_path / "out.csv").exists()
    origins = _origins(tmp_path / "origins.parquet")
    assert main(["subset", str(origins), "--wiki", "ja", "--out", str(tmp_path / "items")]) == 2
    assert "items: give a file name ending in .parquet" in _error(capsys)


def test_scan_of_a_directory_says_what_to_give(tmp_path, capsys):
    assert main(["scan", str(TREE / "jawiki"), "--wiki", "ja", "--out", str(tmp_path / "p.parquet")]) == 2
    err = _error(capsys)
    assert (
        f"{TREE / 'jawiki'}: a directory, not a dump file: give the dump files of one wiki (e.g. "
        f"{TREE / 'jawiki' / '20260801' / 'jawiki-20260801-stub-meta-history.xml.gz'})" in err
    )
    assert f"or run `wikiorigin origins {TREE / 'jawiki'}` over a whole dump tree" in err
    assert "no such file" not in err
    (tmp_path / "empty").mkdir()
    assert main(["scan", str(tmp_path / "empty"), "--wiki", "ja", "--out", str(tmp_path / "p.parquet")]) == 2
    assert "empty: a directory, not a dump file: give the dump files of one wiki, or run" in _error(capsys)


def test_a_card_is_written_for_built_sets_only(tmp_path, capsys):
    corpus = tmp_path / "corpus"
    write_table(
        pa.Table.from_pylist([], schema=ARTICLES),
        corpus / "articles.parquet",
        ARTICLES,
        provenance(stage="corpus", corpus="list"),
    )
    assert main(["build", "card", str(corpus), "--kind", "mcq", "--title", "X"]) == 2
    assert (
        f"{corpus / 'articles.parquet'}: not a dataset built by wikiorigin (made by `wikiorigin corpus`): a card "
        "describes the outputs of `wikiorigin build mcq|freeform|preference` or `wikiorigin review export`"
        in _error(capsys)
    )
    assert not (corpus / "README.md").exists()
    plain = tmp_path / "plain"
    plain.mkdir()
    pq.write_table(pa.table({"x": [1]}), plain / "data.parquet")  # no provenance at all
    assert main(["build", "card", str(plain), "--kind", "mcq", "--title", "X"]) == 2
    assert "data.parquet: not a dataset built by wikiorigin: a card describes" in _error(capsys)
    built = tmp_path / "built"
    write_table(
        pa.Table.from_pylist([], schema=MCQ),
        built / "test.parquet",
        MCQ,
        provenance(stage="build", builder="mcq", language="ja"),
    )
    assert main(["build", "card", str(built), "--kind", "freeform", "--title", "X"]) == 2
    assert "test.parquet: a mcq set, not freeform: give --kind mcq" in _error(capsys)
    assert main(["build", "card", str(built), "--kind", "mcq", "--title", "X"]) == 0
    from huggingface_hub import DatasetCard

    assert DatasetCard.load(built / "README.md").data.license == "cc-by-sa-4.0"


def test_a_repeated_wikidata_entity_is_read_from_its_first_line_and_counted(tmp_path):
    from wikiorigin.dumps.wikidata import EntityStats, read_entities

    lines = (DATA / "wikidata-20151109-five-entities.json").read_text().splitlines()
    q8 = json.loads(lines[2].rstrip(","))
    q8["labels"]["en"]["value"] = "later copy"
    dump = tmp_path / "repeated.json"
    dump.write_text("\n".join(lines[:-1] + [json.dumps(q8) + ",", lines[2], lines[-1]]) + "\n")
    for wanted in (["Q1", "Q8"], None):
        stats = EntityStats()
        found = list(read_entities(dump, wanted, stats))
        assert [e.qid for e in found].count("Q8") == 1
        assert next(e for e in found if e.qid == "Q8").labels["en"] == "happiness"  # the first line's
        assert stats.duplicates == 2 and stats.first_duplicate == "Q8 on line 7"
        assert stats.notes == [
            f"{dump}: 2 lines repeat an entity already read (the first: Q8 on line 7); "
            "each entity was read from its first line"
        ]
