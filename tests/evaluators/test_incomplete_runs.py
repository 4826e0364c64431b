"""A run whose requests failed is no complete run (issue 27): `eval mcq|freeform|judge` against
a loopback server that dies part-way say `complete: false` in summary.json, the provenance and
report.md, leave the unanswered items out of the figures, and a second run asks only those;
`eval compare` refuses incomplete runs and runs over other items; a results directory that
would replace an input, or is a file, is refused before any request."""

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.evaluators.test_freeform_eval import _answer as _freeform_answer, _parquet as _freeform_parquet
from tests.evaluators.test_judge import _server_answer
from tests.evaluators.test_mcq_eval import _answering, _mcq_parquet
from tests.openai_server import ChatServer
from wikiorigin import cli
from wikiorigin.files import read_provenance
from wikiorigin.testing import mcq_row, write_mcq


def _eval_mcq(path, server, out, cache, *extra):
    argv = ["eval", "mcq", "--questions", str(path), "--model", "m", "--endpoint", server.url]
    argv += ["--retries", "0", "--concurrency", "1", "--cache", str(cache), "--out", str(out), *extra]
    return cli.main(argv)


def _recorded(path, questions):
    """``questions`` (an MCQ file) with each correct option as its recorded response, at ``path``."""
    rows = pq.read_table(questions).to_pylist()
    pq.write_table(pa.Table.from_pylist([{**r, "response": r["choices"][r["answer_index"]]} for r in rows]), path)
    return path


def _summary(run) -> dict:
    return json.loads((run / "summary.json").read_text())


@pytest.mark.slow
def test_a_server_that_dies_part_way_leaves_an_incomplete_run(tmp_path, capsys):
    """8 of 20 requests answered, 12 failed: exit 1, complete: false everywhere, accuracy over
    the 8 answered (not 12 wrong); the same command again asks only the 12 and completes it."""
    path = _mcq_parquet(tmp_path / "mcq.parquet", 20)
    run = tmp_path / "run"
    with ChatServer(_answering) as server:
        server.faults = [None] * 8 + ["500"] * 12
        assert _eval_mcq(path, server, run, tmp_path / "c.sqlite") == 1
        assert "12 of 20 requests failed" in capsys.readouterr().err
        summary = _summary(run)
        assert (summary["complete"], summary["failed"], summary["failed_requests"]) == (False, 12, 12)
        assert summary["n"] == 20 and summary["answered"] == 8
        assert summary["accuracy"] == 6 / 8  # questions 0-5 right, 6-7 wrong; 8-19 unanswered
        assert read_provenance(run / "items.parquet")["complete"] is False
        assert (run / "report.md").read_text().startswith("> **Incomplete run (complete: false):** 12 requests")
        correct = pq.read_table(run / "items.parquet", columns=["correct"]).column(0).to_pylist()
        assert correct[8:] == [None] * 12
        server.faults, before = [], len(server.calls)
        assert _eval_mcq(path, server, run, tmp_path / "c.sqlite") == 0
        assert len(server.calls) - before == 12  # only the failed ones asked again
    summary = _summary(run)
    assert (summary["complete"], summary["failed"], summary["n"], summary["answered"]) == (True, 0, 20, 20)
    assert read_provenance(run / "items.parquet")["complete"] is True
    assert "Incomplete" not in (run / "report.md").read_text()


@pytest.mark.slow
def test_freeform_and_judge_runs_with_failures_are_incomplete(tmp_path, data_dir, capsys):
    path = _freeform_parquet(tmp_path / "ff.parquet")
    with ChatServer(_freeform_answer) as server:
        server.faults = [None] * 3 + ["500"] * 2
        argv = ["eval", "freeform", "--questions", str(path), "--model", "m", "--endpoint", server.url]
        argv += ["--retries", "0", "--concurrency", "1", "--cache", str(tmp_path / "c.sqlite")]
        assert cli.main([*argv, "--out", str(tmp_path / "ff")]) == 1
    summary = _summary(tmp_path / "ff")
    assert (summary["complete"], summary["failed"], summary["answered"], summary["n"]) == (False, 2, 3, 5)
    assert read_provenance(tmp_path / "ff" / "items.parquet")["complete"] is False
    care_file = data_dir.parent / "care-Japanese-test.json"
    with ChatServer(_server_answer) as server:
        server.faults = [None] * 5 + ["500"]  # the answers come first; a judge's request fails
        argv = ["eval", "judge", "--questions", str(care_file), "--model", "a", "--endpoint", server.url]
        argv += ["--judge-model", "j", "--base-url", server.url, "--retries", "0", "--concurrency", "1"]
        assert cli.main([*argv, "--cache", str(tmp_path / "c.sqlite"), "--out", str(tmp_path / "judge")]) == 1
    summary = _summary(tmp_path / "judge")
    assert summary["complete"] is False and summary["failed"] == 1 and summary["failed_requests"] == 1
    assert (tmp_path / "judge" / "report.md").read_text().startswith("> **Incomplete run")
    capsys.readouterr()


def _two_runs(tmp_path, failed_first=4):
    """Two models on the same 12 questions; the first lost ``failed_first`` answers."""
    path = _mcq_parquet(tmp_path / "mcq.parquet", 12)
    with ChatServer(_answering) as server:
        server.faults = [None] * (12 - failed_first) + ["500"] * failed_first
        _eval_mcq(path, server, tmp_path / "a", tmp_path / "c.sqlite")
        argv = ["eval", "mcq", "--questions", str(path), "--model", "other", "--endpoint", server.url]
        assert cli.main([*argv, "--cache", str(tmp_path / "c.sqlite"), "--out", str(tmp_path / "b")]) == 0
    return tmp_path / "a", tmp_path / "b"


@pytest.mark.slow
def test_compare_refuses_an_incomplete_run(tmp_path, capsys):
    a, b = _two_runs(tmp_path)
    capsys.readouterr()
    assert cli.main(["eval", "compare", str(a), str(b), "--out", str(tmp_path / "cmp")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"error: {a}: an incomplete run (complete: false, 4 requests failed)" in err and "--allow-failures" in err
    assert not (tmp_path / "cmp").exists()
    argv = ["eval", "compare", str(a), str(b), "--allow-failures", "--out", str(tmp_path / "cmp")]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert "note: m: incomplete run (4 requests failed): its 4 items without an answer are left out" in out
    (pair,) = json.loads((tmp_path / "cmp" / "comparison.json").read_text())["pairs"]
    assert (pair["n"], pair["only_a"], pair["only_b"]) == (8, 0, 4)  # only the items both answered


def _answered(tmp_path, name, path, faults, *extra):
    """A run of model ``name`` on ``path`` whose server fails where ``faults`` says."""
    with ChatServer(_answering) as server:
        server.faults = faults
        argv = ["eval", "mcq", "--questions", str(path), "--model", name, "--endpoint", server.url, "--retries", "0"]
        argv += ["--concurrency", "1", "--cache", str(tmp_path / "c.sqlite"), "--out", str(tmp_path / name), *extra]
        cli.main([*argv, "--allow-failures"])
    return tmp_path / name


@pytest.mark.slow
def test_compare_with_failures_ranks_on_the_items_every_run_answered(tmp_path, capsys):
    """`m` answered 8 of 12 (all right but 2), `other` all 12 with the same answers: on the 8 both
    answered they are equal, and the ranking, bars and tests say so, over those 8 only."""
    path = _mcq_parquet(tmp_path / "mcq.parquet", 12)
    m = _answered(tmp_path, "m", path, [None] * 8 + ["500"] * 4)
    other = _answered(tmp_path, "other", path, [])
    capsys.readouterr()
    assert cli.main(["eval", "compare", str(m), str(other), "--allow-failures", "--out", str(tmp_path / "cmp")]) == 0
    out = capsys.readouterr().out
    assert "over the 8 items every run answered (4 of the 12 left out)" in out
    found = json.loads((tmp_path / "cmp" / "comparison.json").read_text())
    assert found["common"] == {"n": 8, "of": 12}
    assert [(e["value"], e["n"]) for e in found["ranking"]] == [(0.75, 8), (0.75, 8)]
    assert found["ranking"][1]["ci95"] == found["ranking"][0]["ci95"]
    (pair,) = found["pairs"]
    assert (pair["n"], pair["difference"]) == (8, 0.0)


@pytest.mark.slow
def test_compare_with_failures_refuses_runs_that_share_too_few_answered_items(tmp_path, capsys):
    """`a` answered items 0-5, `b` 6-11: nothing to rank them on together (it ranked b 1.000 over
    a 0.000); three runs sharing 2 answered items are refused too."""
    path = _mcq_parquet(tmp_path / "mcq.parquet", 12)
    a = _answered(tmp_path, "a", path, ["500"] * 6 + [None] * 6)
    b = _answered(tmp_path, "b", path, [None] * 6 + ["500"] * 6)
    c = _answered(tmp_path, "c", path, ["500"] * 4 + [None] * 8)
    capsys.readouterr()
    for runs, said in (((a, b), "no answered item in common"), ((a, b, c), "no answered item in common")):
        argv = ["eval", "compare", *map(str, runs), "--allow-failures", "--out", str(tmp_path / "cmp")]
        assert cli.main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and said in err and "fewer than 6" in err
    assert cli.main(["eval", "compare", str(b), str(c), "--allow-failures", "--out", str(tmp_path / "cmp")]) == 2
    assert "only 2 answered items in common (answered: b 6, c 8, of 12)" in capsys.readouterr().err
    assert not (tmp_path / "cmp").exists()


@pytest.mark.slow
def test_compare_refuses_a_run_given_twice(tmp_path, capsys):
    import shutil

    a, b = _two_runs(tmp_path, failed_first=0)
    shutil.copytree(a, tmp_path / "copy")
    capsys.readouterr()
    for twice, said in (((a, b, a), "the same run"), ((a, tmp_path / "copy"), "the same items.parquet")):
        assert cli.main(["eval", "compare", *map(str, twice), "--out", str(tmp_path / "cmp")]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"{a} and {twice[-1]} are {said}" in err
    assert not (tmp_path / "cmp").exists()


@pytest.mark.slow
def test_compare_refuses_runs_over_other_items(tmp_path, capsys):
    """Colliding ids with other questions, and 40 questions against 12, are never paired or ranked."""
    a = tmp_path / "a.parquet"
    _mcq_parquet(a, 12)
    other = tmp_path / "other.parquet"  # the same ids, other questions
    write_mcq(other, [mcq_row(i, f"別の問{i}：どれか。", [f"x{i}-{k}" for k in range(4)], 0) for i in range(12)])
    bigger = _mcq_parquet(tmp_path / "bigger.parquet", 40)
    runs = []
    for name, questions in (("a", a), ("other", other), ("bigger", bigger)):
        _recorded(tmp_path / f"{name}-r.parquet", questions)
        runs.append(tmp_path / name)
        assert (
            cli.main(["eval", "mcq", "--responses", str(tmp_path / f"{name}-r.parquet"), "--out", str(runs[-1])]) == 0
        )
    capsys.readouterr()
    for other_run, said in ((runs[1], "12 and 12 items, 0 of them the same"), (runs[2], "12 and 40 items, 12 of them")):
        assert cli.main(["eval", "compare", str(runs[0]), str(other_run), "--out", str(tmp_path / "cmp")]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"{runs[0]} and {other_run} ran on different items ({said}" in err
    fingerprints = {_summary(r)["item_set"]["fingerprint"] for r in runs}
    assert len(fingerprints) == 3


@pytest.mark.parametrize("option", ["--responses", "--questions"])
def test_rescoring_into_the_run_itself_is_refused(tmp_path, capsys, option):
    path = _recorded(tmp_path / "r.parquet", _mcq_parquet(tmp_path / "mcq.parquet", 4))
    run = tmp_path / "run"
    assert cli.main(["eval", "mcq", "--responses", str(path), "--out", str(run)]) == 0
    before = {p.name: p.read_bytes() for p in run.iterdir()}
    argv = ["eval", "mcq", option, str(run / "items.parquet"), "--out", str(run)]
    if option == "--questions":
        argv += ["--responses", str(path)]
    capsys.readouterr()
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert (
        f"{run}: the results written there would replace the input {run / 'items.parquet'}; give another --out" in err
    )
    assert {p.name: p.read_bytes() for p in run.iterdir()} == before


def test_an_out_that_is_a_file_is_refused_before_any_request(tmp_path, capsys):
    path = _mcq_parquet(tmp_path / "mcq.parquet", 20)
    out = tmp_path / "taken"
    out.write_text("mine")
    with ChatServer(_answering) as server:
        assert _eval_mcq(path, server, out, tmp_path / "c.sqlite") == 2
        assert server.calls == [] and server.probes == []
    assert f"{out}: a file, not a results directory; give another --out" in capsys.readouterr().err
    assert out.read_text() == "mine"


def test_responses_kept_under_a_results_name_are_never_overwritten(tmp_path, capsys):
    """Responses saved as DIR/items.parquet, scored into DIR: refused, the file kept as it was."""
    folder = tmp_path / "mine"
    folder.mkdir()
    kept = _recorded(folder / "items.parquet", _mcq_parquet(tmp_path / "mcq.parquet", 4))
    before = kept.read_bytes()
    assert cli.main(["eval", "mcq", "--responses", str(kept), "--out", str(folder)]) == 2
    assert "would replace the input" in capsys.readouterr().err
    assert kept.read_bytes() == before and sorted(p.name for p in folder.iterdir()) == ["items.parquet"]


@pytest.mark.slow
def test_an_answer_the_reader_judge_could_not_read_is_no_wrong_answer(tmp_path, capsys):
    """Responses the parser cannot read go to --judge-model; when that judge's requests fail,
    the items are unanswered (left out of the figures), not wrong, and the run is incomplete."""
    path = _mcq_parquet(tmp_path / "mcq.parquet", 4)
    rows = pq.read_table(path).to_pylist()
    said = [r["choices"][r["answer_index"]] for r in rows[:2]] + ["hmm, hard to say", "no idea at all"]
    responses = tmp_path / "responses.parquet"
    pq.write_table(pa.Table.from_pylist([{**r, "response": x} for r, x in zip(rows, said)]), responses)
    run = tmp_path / "run"
    with ChatServer(lambda messages: '{"verdict": true}') as server:
        server.faults = ["500"] * 2
        argv = ["eval", "mcq", "--responses", str(responses), "--judge-model", "j", "--base-url", server.url]
        argv += ["--retries", "0", "--concurrency", "1", "--cache", str(tmp_path / "c.sqlite"), "--out", str(run)]
        assert cli.main(argv) == 1
    assert "all 2 requests failed" in capsys.readouterr().err
    summary = _summary(run)
    assert summary["complete"] is False and summary["answered"] == 2 and summary["accuracy"] == 1.0
    items = pq.read_table(run / "items.parquet", columns=["read_as", "correct"]).to_pylist()
    assert [i["correct"] for i in items] == [True, True, None, None]
    assert [i["read_as"] for i in items][2:] == ["failed", "failed"]


@pytest.mark.slow
def test_an_endpoint_under_evaluation_keeps_the_commands_limits_and_prices(tmp_path, capsys):
    """The endpoint's client is the one the LLM options describe: --prices prices its usage line."""
    path = _mcq_parquet(tmp_path / "mcq.parquet", 3)
    with ChatServer(_answering) as server:
        assert (
            _eval_mcq(path, server, tmp_path / "run", tmp_path / "c.sqlite", "--prices", '{"input": 1e6, "output": 0}')
            == 0
        )
    line = next(x for x in capsys.readouterr().err.splitlines() if x.startswith("m: "))
    assert line.startswith("m: 3 calls, 0 cache hits") and ", $" in line and ", $0.0000" not in line
