"""Comparing runs: per-model bars, a scatter against an external score table, errors."""

import json
import math

import pytest

from wikiorigin import cli
from wikiorigin.errors import WikioriginError
from wikiorigin.evaluators.report import compare_runs, markdown_table


def _run(tmp_path, model, accuracy):
    run = tmp_path / model
    run.mkdir()
    (run / "summary.json").write_text(
        json.dumps({"model": model, "accuracy": accuracy, "item_set": {"fingerprint": "f"}})
    )
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
        "| a | b |",
        "|---|---|",
        "| x | 0.500 |",
        "| y | – |",
    ]


def _settings_run(tmp_path, name, model, value, **changes):
    from wikiorigin.evaluators.signature import signature

    settings = {
        "task": "freeform",
        "model": f"{model}@1234abcd",
        "dtype": "bfloat16",
        "device": "cuda",
        "template": f"chat@{abs(hash(model)) % 10**8:08d}",
        "temperature": 0.0,
        "max_new_tokens": 32,
        "chrf": "c6w0b2",
        "version": "0.1.0",
        **changes,
    }
    run = tmp_path / name
    run.mkdir()
    (run / "summary.json").write_text(
        json.dumps(
            {
                "model": model,
                "chrf": value,
                "settings": settings,
                "signature": signature(settings),
                "item_set": {"fingerprint": "f"},
            }
        )
    )
    return run


def test_compare_warns_when_settings_differ_in_more_than_the_model(tmp_path, caplog, capsys):
    same = [_settings_run(tmp_path, "a", "llama", 41.0), _settings_run(tmp_path, "b", "qwen", 45.5)]
    result = compare_runs(same, tmp_path / "same", metric="chrf")
    assert result["warnings"] == [] and "Not comparable" not in (tmp_path / "same" / "comparison.md").read_text()
    assert not caplog.records
    other = _settings_run(tmp_path, "c", "gemma", 39.0, temperature=0.7, chrf="c6w2b2")
    result = compare_runs([*same, other], tmp_path / "cmp", metric="chrf")
    logged = [r.getMessage() for r in caplog.records if r.name == "wikiorigin" and r.levelname == "WARNING"]
    assert logged == result["warnings"] and len(logged) == 1  # the library logs; it prints nothing
    assert f"{other} differs from {same[0]} in temperature, chrf" in logged[0]
    assert "temperature: 0.7 vs 0.0; chrf: 'c6w2b2' vs 'c6w0b2'" in logged[0]  # this run's value first
    assert capsys.readouterr() == ("", "")
    assert (
        cli.main(["eval", "compare", *map(str, [*same, other]), "--metric", "chrf", "--out", str(tmp_path / "c")]) == 0
    )
    assert f"wikiorigin: warning: {other} differs from {same[0]} in temperature, chrf" in capsys.readouterr().err
    text = (tmp_path / "cmp" / "comparison.md").read_text()
    assert "**Not comparable as they stand:**" in text and "in temperature, chrf" in text
    assert "- gemma: `wikiorigin-eval|task:freeform|model:gemma@1234abcd|" in text  # the signatures


def test_compare_says_when_runs_record_no_settings(tmp_path, caplog):
    runs = [_run(tmp_path, "old", 0.5), _settings_run(tmp_path, "new", "qwen", 0.6)]
    (runs[1] / "summary.json").write_text(
        json.dumps({**json.loads((runs[1] / "summary.json").read_text()), "accuracy": 0.6})
    )
    result = compare_runs(runs, tmp_path / "cmp")
    assert result["warnings"] == [f"{runs[0]}: no settings recorded (older runs?), so comparability is unknown"]
    assert "comparability is unknown" in caplog.text


MODELS = (
    "calm2-7b-chat",
    "llama-3.1-swallow-70b-instruct-v0.1",
    "mistral-nemo-instruct-2407",
    "gpt4o-mini",
    "qwen2.5-7b-instruct",
)


@pytest.fixture(scope="module")
def released_runs(data_dir, tmp_path_factory):
    """Runs of `eval mcq` on five models' released YokaiEval responses."""
    import lzma

    where = tmp_path_factory.mktemp("released")
    for model in MODELS:
        name = f"responses-{model}.json"
        (where / name).write_bytes(lzma.open(data_dir.parent / "yokaieval" / (name + ".xz")).read())
        assert cli.main(["eval", "mcq", "--responses", str(where / name), "--out", str(where / model)]) == 0
    return {model: where / model for model in MODELS}


@pytest.mark.slow
def test_ranking_against_the_published_table(released_runs, data_dir, tmp_path, capsys):
    """Table 8 of YokaiEval from released responses asked alike: ours beside the published
    accuracy, no warning."""
    runs = [released_runs[m] for m in MODELS[:3]]
    summaries = [json.loads((r / "summary.json").read_text()) for r in runs]
    assert [s["settings"]["model"] for s in summaries] == [f"recorded:{m}" for m in MODELS[:3]]
    assert all(s["signature"].startswith("wikiorigin-eval|task:mcq|mode:generate|model:recorded:") for s in summaries)
    assert summaries[0]["signature"] in (runs[0] / "report.md").read_text()
    capsys.readouterr()
    published = data_dir.parent / "yokaieval" / "published-accuracy.csv"
    assert (
        cli.main(
            [
                "eval",
                "compare",
                *map(str, runs),
                "--out",
                str(tmp_path / "cmp"),
                "--external",
                str(published),
                "--external-name",
                "published",
            ]
        )
        == 0
    )
    out, err = capsys.readouterr()
    assert "warning" not in err  # the same questions, the same parser: only the model differs
    lines = [line for line in out.splitlines() if line.startswith("| ") and "rank" not in line]
    assert [line.split(" | ")[1] for line in lines] == [  # the paper's order: 0.615, 0.474, 0.242
        "llama-3.1-swallow-70b-instruct-v0.1",
        "mistral-nemo-instruct-2407",
        "calm2-7b-chat",
    ]
    ours = summaries[0]["accuracy"]
    assert lines[2] == f"| 3 | calm2-7b-chat | {ours:.3f} | 0.242 | {ours - 0.242:.3f} |"
    assert "| rank | model | accuracy | published | difference |" in (tmp_path / "cmp" / "comparison.md").read_text()


def test_released_runs_asked_otherwise_are_refused(released_runs, tmp_path):
    """gpt4o-mini's released responses answer questions worded otherwise (「…回答のみ出力しなさい」)
    and qwen2.5's cover 807 rows: neither is on calm2's items, so neither is ranked beside it."""
    calm2, gpt, qwen = (released_runs[m] for m in ("calm2-7b-chat", "gpt4o-mini", "qwen2.5-7b-instruct"))
    with pytest.raises(WikioriginError, match=f"{calm2} and {gpt} ran on different items \\(810 and 810 items, 0 "):
        compare_runs([calm2, gpt, qwen], tmp_path / "cmp")
    with pytest.raises(WikioriginError, match="\\(810 and 807 items, 807 of them the same\\)"):
        compare_runs([calm2, qwen], tmp_path / "cmp")
    assert not (tmp_path / "cmp").exists()  # refused before anything is written


def test_ranking_table_order_and_missing_figures():
    from wikiorigin.evaluators.report import ranking_table

    header, rows = ranking_table(
        ["a", "b", "c", "d"], [0.5, float("nan"), 0.7, 0.5], "accuracy", {"a": 0.4, "c": 0.75}, "published"
    )
    assert header == ["rank", "model", "accuracy", "published", "difference"]
    assert [r[1] for r in rows] == ["c", "a", "d", "b"]  # best first, ties by name, NaN last
    assert rows[0][4] == pytest.approx(-0.05) and math.isnan(rows[2][3]) and math.isnan(rows[2][4])
    assert ranking_table(["a"], [1.0], "chrf") == (["rank", "model", "chrf"], [[1, "a", 1.0]])


def test_summary_with_nan_is_written_as_null(tmp_path):
    import numpy as np

    from wikiorigin.evaluators.report import write_results
    from wikiorigin.evaluators.results import REPORT_MARK

    summary = {
        "model": "m",
        "mean": float("nan"),
        "by_category": {"Opinion": {"n": 0, "mean": float("nan")}},
        "inf": float("inf"),
        "values": [1.0, float("nan")],
        "np": np.float32("nan"),
        "arr": np.array([0.5, np.nan]),
    }
    settings = {"task": "judge", "model": "m@x", "version": "0.1.0"}
    write_results(tmp_path / "run", [{"x": 1}], summary, "# Report", settings=settings)
    text = (tmp_path / "run" / "summary.json").read_text()
    assert "NaN" not in text and "Infinity" not in text

    def refuse(name):
        raise AssertionError(f"not strict JSON: {name}")

    written = json.loads(text, parse_constant=refuse)
    assert written["mean"] is None and written["by_category"]["Opinion"]["mean"] is None
    assert written["inf"] is None and written["values"] == [1.0, None] and written["np"] is None
    assert written["arr"] == [0.5, None] and written["settings"] == settings
    assert written["signature"] == "wikiorigin-eval|task:judge|model:m@x|version:0.1.0"
    assert (tmp_path / "run" / "report.md").read_text() == (
        "# Report\n\nSignature: `wikiorigin-eval|task:judge|model:m@x|version:0.1.0`\n\n" + REPORT_MARK + "\n"
    )


def test_compare_tells_two_runs_of_one_model_apart(tmp_path, capsys):
    runs = [_settings_run(tmp_path, "a", "llama", 41.0), _settings_run(tmp_path, "b", "llama", 45.5)]
    result = compare_runs(runs, tmp_path / "cmp", metric="chrf")
    assert set(result["models"]) == {"llama (a)", "llama (b)"}
    assert "| 1 | llama (b) |" in (tmp_path / "cmp" / "comparison.md").read_text()


@pytest.mark.slow
def test_responses_covering_fewer_questions_are_explained_not_flagged(released_runs, data_dir, tmp_path, capsys):
    """qwen2.5's 807 released responses joined to the 810 questions of calm2's file: the 3
    questions without a response count as unanswered, as the paper counted them, so the runs
    are compared without a warning and comparison.md says how qwen2.5 was counted."""
    import lzma

    name = "responses-qwen2.5-7b-instruct.json"
    (tmp_path / name).write_bytes(lzma.open(data_dir.parent / "yokaieval" / (name + ".xz")).read())
    calm2 = released_runs["calm2-7b-chat"]
    questions = tmp_path / "calm2.json"
    questions.write_bytes(lzma.open(data_dir.parent / "yokaieval" / "responses-calm2-7b-chat.json.xz").read())
    assert (
        cli.main(
            [
                "eval",
                "mcq",
                "--questions",
                str(questions),
                "--responses",
                str(tmp_path / name),
                "--out",
                str(tmp_path / "qwen"),
            ]
        )
        == 0
    )
    summary = json.loads((tmp_path / "qwen" / "summary.json").read_text())
    assert summary["n"] == 810 and summary["settings"]["responses"] == "807/810"  # in its signature
    capsys.readouterr()
    assert cli.main(["eval", "compare", str(calm2), str(tmp_path / "qwen"), "--out", str(tmp_path / "cmp")]) == 0
    out, err = capsys.readouterr()
    assert "warning" not in err
    note = (
        "qwen2.5-7b-instruct: recorded responses for 807 of the 810 questions; the 3 without one count as "
        "unanswered (wrong), so its figures are over the same 810 questions as the others"
    )
    assert f"note: {note}" in out
    text = (tmp_path / "cmp" / "comparison.md").read_text()
    assert "Not comparable" not in text and note in text
    assert json.loads((tmp_path / "cmp" / "comparison.json").read_text())["warnings"] == []


def test_bars_go_best_first(tmp_path, monkeypatch):
    """models.png and the per-group plots draw the highest bar first, NaN last."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    from wikiorigin.evaluators.report import bar_plot

    drawn = {}
    subplots = plt.subplots

    def keep_axes(*args, **kwargs):
        fig, drawn["ax"] = subplots(*args, **kwargs)
        return fig, drawn["ax"]

    monkeypatch.setattr(plt, "subplots", keep_axes)  # the axes bar_plot draws on, to read back
    bar_plot(tmp_path / "b.png", ["a", "b", "c", "d"], [0.2, float("nan"), 0.9, 0.5], "t", counts=[1, 2, 3, 4])
    ax = drawn["ax"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["c", "d", "a", "b"]
    assert [round(p.get_height(), 2) for p in ax.patches] == [0.9, 0.5, 0.2, 0.0]
    assert (tmp_path / "b.png").stat().st_size > 1000
