"""`eval compare` ranks by the figures of summary.json: a summary that says other than its
items.parquet (edited by hand, or copied from another run) is refused naming the file, and a
summary.json that is no object is one line, not an unexpected error; so are external scores
(`--external`) that are not finite, given twice for a model, or none."""

import json

import pytest

from tests.evaluators.test_incomplete_runs import _two_runs
from wikiorigin import cli


def _edit(run, **changes):
    summary = json.loads((run / "summary.json").read_text())
    (run / "summary.json").write_text(json.dumps({**summary, **changes}))


def _compare(tmp_path, *runs):
    return cli.main(["eval", "compare", *map(str, runs), "--out", str(tmp_path / "cmp")])


@pytest.mark.parametrize(
    "failed, changes, said",
    [
        (0, {"accuracy": 0.99}, "accuracy 0.99, but its items.parquet gives 0.5"),
        (4, {"complete": True, "failed": 0, "failed_requests": 0}, "counts no failed request, but 4 items"),
    ],
    ids=["figure-edited", "incomplete-said-complete"],
)
def test_a_summary_that_its_items_do_not_give_is_refused(tmp_path, capsys, failed, changes, said):
    a, b = _two_runs(tmp_path, failed_first=failed)
    _edit(a, **changes)
    capsys.readouterr()
    assert _compare(tmp_path, a, b) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"error: {a / 'summary.json'}: {said}" in err
    assert not (tmp_path / "cmp").exists()


@pytest.mark.parametrize("text", ["[1, 2]", '"a run"', "null"])
def test_a_summary_that_is_no_object_is_one_line(tmp_path, capsys, text):
    a, b = _two_runs(tmp_path, failed_first=0)
    (a / "summary.json").write_text(text)
    capsys.readouterr()
    assert _compare(tmp_path, a, b) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"error: {a / 'summary.json'}: not a run's summary" in err


@pytest.mark.parametrize(
    "text, said",
    [
        ("model,score\nm,nan\nother,0.5\n", "line 2: the score of m is nan, not a finite number"),
        ("model,score\nm,inf\nother,0.5\n", "line 2: the score of m is inf, not a finite number"),
        ("model,score\nm,0.1\nm,0.9\nother,0.5\n", "line 3: m again (first on line 2)"),
        ("", "no scores"),
    ],
    ids=["nan", "inf", "twice", "empty"],
)
def test_external_scores_that_are_no_scores_are_one_line(tmp_path, capsys, text, said):
    a, b = _two_runs(tmp_path, failed_first=0)
    external = tmp_path / "external.csv"
    external.write_text(text)
    capsys.readouterr()
    argv = ["eval", "compare", str(a), str(b), "--external", str(external), "--out", str(tmp_path / "cmp")]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"error: {external}: {said}" in err and "unexpected" not in err
    assert not (tmp_path / "cmp" / "comparison.json").exists()


def test_a_run_whose_items_cannot_be_checked_is_refused_beside_others(tmp_path, capsys):
    """A results directory without items.parquet (or one with neither ids nor questions) and no
    item set in its summary was ranked from its summary alone: over which questions, nobody
    could tell. It is refused beside other runs, naming it; with its items it is compared."""
    a, b = _two_runs(tmp_path, failed_first=0)
    items = (b / "items.parquet").read_bytes()
    (b / "items.parquet").unlink()
    _edit(b, item_set=None)
    capsys.readouterr()
    assert _compare(tmp_path, a, b) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"error: {b}: neither its items" in err and "cannot be checked" in err
    assert not (tmp_path / "cmp").exists()
    (b / "items.parquet").write_bytes(items)
    assert _compare(tmp_path, a, b) == 0
