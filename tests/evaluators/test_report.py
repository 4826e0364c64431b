"""Comparing runs: per-model bars, a scatter against an external score table, errors."""

import json

import pytest

from wikiorigin import cli
from wikiorigin.errors import WikioriginError
from wikiorigin.evaluators.report import compare_runs, markdown_table


def _run(tmp_path, model, accuracy):
    run = tmp_path / model
    run.mkdir()
    (run / "summary.json").write_text(json.dumps({"model": model, "accuracy": accuracy}))
    return run


def test_compare_with_external_scores(tmp_path, capsys):
    runs = [_run(tmp_path, m, a) for m, a in (("a", 0.4), ("b", 0.6), ("c", 0.5), ("d", 0.7))]
    external = tmp_path / "jmt.csv"
    external.write_text("model,score\na,4.0\nb,6.0\nc,5.0\n")
    result = compare_runs(runs, tmp_path / "cmp", external=external, external_name="JMT-Bench")
    assert result["pearson"] == pytest.approx(1.0) and result["not_in_external"] == ["d"]
    assert (tmp_path / "cmp" / "scatter.png").exists() and (tmp_path / "cmp" / "models.png").exists()
    assert "| d | 0.700 | – |" in (tmp_path / "cmp" / "comparison.md").read_text()
    assert cli.main(["eval", "compare", *map(str, runs), "--out", str(tmp_path / "c2")]) == 0
    assert "4 runs compared" in capsys.readouterr().out


def test_compare_errors(tmp_path):
    run = _run(tmp_path, "a", 0.4)
    with pytest.raises(WikioriginError, match="no 'chrf' in the summary"):
        compare_runs([run], tmp_path / "o", metric="chrf")
    with pytest.raises(WikioriginError, match="no such summary"):
        compare_runs([tmp_path / "missing"], tmp_path / "o")
    bad = tmp_path / "x.csv"
    bad.write_text("model,score\na,high\n")
    with pytest.raises(WikioriginError, match="x.csv: line 2"):
        compare_runs([run], tmp_path / "o", external=bad)


def test_markdown_table():
    assert markdown_table(["a", "b"], [["x", 0.5], ["y", float("nan")]]).splitlines() == [
        "| a | b |", "|---|---|", "| x | 0.500 |", "| y | – |"]
