"""A set built incomplete (requests failed, the build accepted with --allow-failures: its
provenance says ``complete: false``) is said so when it is evaluated: the figures are over the
questions it holds, not the set it was meant to be."""

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.builders.test_build_faults import _articles, _mcq
from tests.builders.test_mcq import scripted
from tests.openai_server import ChatServer
from wikiorigin.cli import main
from wikiorigin.evaluators.tasks import MCQTask
from wikiorigin.files import read_provenance


@pytest.mark.slow
def test_evaluating_a_set_built_incomplete_says_so(tmp_path, capsys, caplog):
    articles = _articles(tmp_path / "articles.parquet")
    built = tmp_path / "set" / "m.parquet"
    with ChatServer(answer=scripted) as server:
        server.faults = ["500"]
        assert main(_mcq(articles, built, server.url, "--allow-failures")) == 0
    assert read_provenance(built)["complete"] is False
    rows = pq.read_table(built).to_pylist()
    responses = tmp_path / "r.json"
    responses.write_text(json.dumps([{**r, "response": r["choices"][r["answer_index"]]} for r in rows]))
    capsys.readouterr()
    argv = ["eval", "mcq", "--questions", str(built), "--responses", str(responses), "--out", str(tmp_path / "run")]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert f"wikiorigin: warning: {built}: a set built incomplete (complete: false, 1 failed)" in err
    MCQTask.from_file(built)
    assert "a set built incomplete" in caplog.text
    whole = tmp_path / "whole.parquet"
    pq.write_table(pa.Table.from_pylist(rows), whole)  # no provenance: nothing said
    caplog.clear()
    MCQTask.from_file(whole)
    assert "incomplete" not in caplog.text
