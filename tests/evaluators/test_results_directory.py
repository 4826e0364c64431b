"""A results directory holds the files of one run, ours only (issue 27): `eval ... --out DIR`
never replaces a hand-written report.md or someone's summary.json (exit 2 before any request),
a previous run's files are replaced, and a comparison's too."""

import json

import pytest

from tests.evaluators.test_mcq_eval import _answering, _mcq_parquet
from tests.openai_server import ChatServer
from wikiorigin import cli


def _eval(path, server, out, cache, model="m"):
    argv = ["eval", "mcq", "--questions", str(path), "--model", model, "--endpoint", server.url]
    return cli.main([*argv, "--cache", str(cache), "--out", str(out)])


def test_files_the_command_did_not_write_are_never_replaced(tmp_path, capsys):
    path = _mcq_parquet(tmp_path / "mcq.parquet", 4)
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "report.md").write_text("my notes\n")
    (notes / "summary.json").write_text('{"mine": 1}')
    with ChatServer(_answering) as server:
        assert _eval(path, server, notes, tmp_path / "c.sqlite") == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1
        assert f"{notes}: summary.json, report.md not written by wikiorigin eval" in err and "--out" in err
        assert not server.calls  # before any request
        (notes / "summary.json").unlink()
        assert _eval(path, server, notes, tmp_path / "c.sqlite") == 2
        assert f"{notes}: report.md not written" in capsys.readouterr().err
        assert (notes / "report.md").read_text() == "my notes\n" and not server.calls
        # a run of ours is replaced by the next, of another model too
        run = tmp_path / "run"
        assert _eval(path, server, run, tmp_path / "c.sqlite") == 0
        assert (run / "report.md").read_text().rstrip().splitlines()[-1].startswith("<!-- wikiorigin eval:")
        assert _eval(path, server, run, tmp_path / "c.sqlite", model="other") == 0
    assert json.loads((run / "summary.json").read_text())["model"].startswith("other")


@pytest.mark.slow
def test_a_comparison_never_replaces_a_hand_written_one(tmp_path, capsys):
    path = _mcq_parquet(tmp_path / "mcq.parquet", 4)
    with ChatServer(_answering) as server:
        for model in ("a", "b"):
            assert _eval(path, server, tmp_path / model, tmp_path / "c.sqlite", model=model) == 0
    cmp = tmp_path / "cmp"
    cmp.mkdir()
    (cmp / "comparison.md").write_text("hand\n")
    argv = ["eval", "compare", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(cmp)]
    capsys.readouterr()
    assert cli.main(argv) == 2
    assert f"{cmp}: comparison.md not written by wikiorigin eval" in capsys.readouterr().err
    assert (cmp / "comparison.md").read_text() == "hand\n"
    (cmp / "comparison.md").unlink()
    assert cli.main(argv) == 0 and cli.main(argv) == 0  # our own comparison is replaced


@pytest.mark.slow
def test_a_run_of_another_kind_leaves_no_plot_of_the_one_before(tmp_path, data_dir, capsys):
    """An mcq run's accuracy plots are removed when a judge run replaces it in the directory:
    the directory holds one run's files, never another's plots beside them; a plot of
    someone else's there is kept."""
    from tests.evaluators.test_judge import _server_answer

    path = _mcq_parquet(tmp_path / "mcq.parquet", 4)
    run = tmp_path / "run"
    with ChatServer(_answering) as server:
        assert _eval(path, server, run, tmp_path / "c.sqlite") == 0
    assert (run / "accuracy_by_type.png").exists()
    (run / "mine.png").write_bytes(b"not ours")
    care_file = data_dir.parent / "care-Japanese-test.json"
    with ChatServer(_server_answer) as server:
        argv = ["eval", "judge", "--questions", str(care_file), "--model", "a", "--endpoint", server.url]
        argv += ["--judge-model", "j", "--base-url", server.url, "--cache", str(tmp_path / "c.sqlite")]
        assert cli.main([*argv, "--out", str(run)]) == 0
    pngs = sorted(p.name for p in run.glob("*.png"))
    assert "accuracy_by_type.png" not in pngs and "accuracy_by_region.png" not in pngs
    assert "mine.png" in pngs and any(p.startswith("rating_by") for p in pngs)


def test_a_plot_of_someones_under_a_plots_name_is_never_replaced(tmp_path, capsys):
    """A PNG named as a run's plot (or a comparison's) that no run drew is refused before any
    request; the plots a run drew carry a mark in their metadata and are replaced."""
    path = _mcq_parquet(tmp_path / "mcq.parquet", 4)
    run = tmp_path / "run"
    run.mkdir()
    (run / "accuracy_by_region.png").write_bytes(b"my own plot")
    with ChatServer(_answering) as server:
        assert _eval(path, server, run, tmp_path / "c.sqlite") == 2
        assert not server.calls
        assert f"{run}: accuracy_by_region.png not written by wikiorigin eval" in capsys.readouterr().err
        (run / "accuracy_by_region.png").unlink()
        assert _eval(path, server, run, tmp_path / "c.sqlite") == 0
        assert _eval(path, server, run, tmp_path / "c.sqlite", model="other") == 0  # ours: replaced
        assert _eval(path, server, tmp_path / "b", tmp_path / "c.sqlite", model="b") == 0
    cmp = tmp_path / "cmp"
    cmp.mkdir()
    (cmp / "models.png").write_bytes(b"mine")
    argv = ["eval", "compare", str(run), str(tmp_path / "b"), "--out", str(cmp)]
    capsys.readouterr()
    assert cli.main(argv) == 2 and (cmp / "models.png").read_bytes() == b"mine"
    assert f"{cmp}: models.png not written by wikiorigin eval" in capsys.readouterr().err
