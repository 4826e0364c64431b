"""`eval leakage` inputs that cannot be told apart are refused before anything is scored: a
title given twice with other texts (which one would be scored was the last one read, silently)
and a blank paraphrase (its article was left out of the figures, silently). One line naming
the file and row, exit 2, no request sent."""

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.completions_server import CompletionsServer
from tests.evaluators.test_endpoint_loglikelihood import _leakage_args
from wikiorigin import cli


def _paraphrases(rows):
    return rows + [{"title": rows[0]["title"], "paraphrase": "まったく別の文。"}]


def _blank(rows):
    return [{**rows[0], "paraphrase": "  "}] + rows[1:]


@pytest.mark.parametrize(
    "change, said",
    [
        (_paraphrases, "row 6: '妖怪0' again with another paraphrase (first at row 0)"),
        (_blank, "row 0: the paraphrase"),
    ],
    ids=["title-twice", "blank"],
)
def test_paraphrases_that_cannot_be_told_apart_are_refused(tmp_path, tiny_model_dir, capsys, change, said):
    with CompletionsServer(tiny_model_dir) as server:
        args = _leakage_args(tmp_path, server.url, "--out", str(tmp_path / "run"))
        path = tmp_path / "p.json"
        path.write_text(json.dumps(change(json.loads(path.read_text())), ensure_ascii=False))
        assert cli.main(args) == 2
        assert server.calls == []
    err = capsys.readouterr().err
    assert err.count("wikiorigin: error:") == 1 and f"error: {path}: {said}" in err and not (tmp_path / "run").exists()


def test_an_article_given_twice_with_other_texts_is_refused(tmp_path, tiny_model_dir, capsys):
    with CompletionsServer(tiny_model_dir) as server:
        args = _leakage_args(tmp_path, server.url, "--out", str(tmp_path / "run"))
        path = tmp_path / "a.parquet"
        rows = pq.read_table(path).to_pylist()
        pq.write_table(pa.Table.from_pylist(rows + [{**rows[0], "text": rows[1]["text"]}]), path)
        assert cli.main(args) == 2
        assert server.calls == []
    err = capsys.readouterr().err
    assert f"error: {path}: row 6: '妖怪0' again with another text (first at row 0)" in err


def test_the_same_row_twice_is_one_article(tmp_path, tiny_model_dir, capsys):
    with CompletionsServer(tiny_model_dir) as server:
        args = _leakage_args(tmp_path, server.url, "--out", str(tmp_path / "run"))
        path = tmp_path / "a.parquet"
        rows = pq.read_table(path).to_pylist()
        pq.write_table(pa.Table.from_pylist(rows + [rows[0]]), path)
        assert cli.main(args) == 0
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["n"] == 6


def test_a_linked_section_is_a_passage_of_its_own(tmp_path, tiny_model_dir):
    """`corpus yokai` writes an article and a section of it linked on its own (``anchor``):
    the section is scored as ``title#anchor``, not refused as the title given twice."""
    with CompletionsServer(tiny_model_dir) as server:
        args = _leakage_args(tmp_path, server.url, "--out", str(tmp_path / "run"))
        path, paraphrases = tmp_path / "a.parquet", tmp_path / "p.json"
        rows = pq.read_table(path).to_pylist()
        section = {**rows[0], "anchor": "別名", "text": rows[1]["text"]}
        pq.write_table(pa.Table.from_pylist([{**r, "anchor": None} for r in rows] + [section]), path)
        said = json.loads(paraphrases.read_text())
        paraphrases.write_text(json.dumps(said + [{"title": "妖怪0#別名", "paraphrase": said[1]["paraphrase"]}]))
        assert cli.main(args) == 0
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["n"] == 7
