"""``wo.compare`` works on runs in memory (what ``MCQTask(...).run(model)`` returns) and on saved
runs alike: its pairs are those ``eval compare`` reports for the same runs saved, and its
``save`` writes the command's files; the command line is that call on saved runs."""

import json
from pathlib import Path

import pytest

import wikiorigin as wo
from wikiorigin import cli
from wikiorigin.errors import ParameterError, WikioriginError

YOKAIEVAL = Path(__file__).resolve().parents[1] / "data" / "yokaieval"
FIRST40 = YOKAIEVAL / "YokaiEval-first40.json.xz"
MODELS = ("calm2-7b-chat", "gpt4o-mini", "qwen2.5-7b-instruct")


@pytest.fixture(scope="module")
def runs():
    """Three released models' recorded answers joined to the benchmark's first 40 questions."""
    task = wo.MCQTask.from_file(FIRST40)
    return [task.run(wo.Recorded(YOKAIEVAL / f"responses-{m}.json.xz")) for m in MODELS]


def _files(directory: Path) -> dict:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if not p.name.endswith(".lock")}


@pytest.mark.slow
def test_in_memory_pairs_are_the_commands(runs, tmp_path, capsys):
    comparison = wo.compare(runs)
    assert isinstance(comparison, wo.Comparison) and comparison.models == list(MODELS)
    assert len(comparison.pairs) == 3 and comparison.unpaired == []
    pair = comparison.pairs[0]
    assert (pair.a, pair.b, pair.n, pair.test) == ("calm2-7b-chat", "gpt4o-mini", 40, "McNemar exact")
    assert pair.difference == pytest.approx(runs[0].summary.accuracy - runs[1].summary.accuracy)
    assert pair.ci95[0] < pair.difference < pair.ci95[1] and 0 < pair.p_value <= 1
    saved = []
    for model, result in zip(MODELS, runs):
        saved.append(str(result.save(tmp_path / model)))
    assert cli.main(["eval", "compare", *saved, "--out", str(tmp_path / "cli")]) == 0
    out = capsys.readouterr().out
    assert out.startswith(comparison.table) and "3 runs compared, 3 pairs tested" in out
    written = json.loads((tmp_path / "cli" / "comparison.json").read_text(encoding="utf-8"))
    assert [dict(p) for p in comparison.pairs] == written["pairs"]
    assert [dict(e) for e in comparison.ranking] == written["ranking"]
    # saved from memory: the command's files, but for where the runs are (in memory: none)
    comparison.save(tmp_path / "memory")
    mine = json.loads((tmp_path / "memory" / "comparison.json").read_text(encoding="utf-8"))
    assert mine["runs"] == dict.fromkeys(MODELS) and written["runs"] == dict(zip(MODELS, saved))
    assert {**mine, "runs": None} == {**written, "runs": None}
    memory, command = _files(tmp_path / "memory"), _files(tmp_path / "cli")
    assert sorted(memory) == sorted(command) == ["comparison.json", "comparison.md", "models.png"]
    assert memory["comparison.md"] == command["comparison.md"]
    # saved runs given to the library: the command's files, byte for byte
    wo.compare(saved).save(tmp_path / "library")
    assert _files(tmp_path / "library") == command


@pytest.mark.slow
def test_in_memory_and_saved_runs_mix(runs, tmp_path):
    saved = runs[1].save(tmp_path / "gpt")
    mixed = wo.compare([runs[0], saved], external={"calm2-7b-chat": 0.5, "gpt4o-mini": 0.6})
    alone = wo.compare(runs[:2], external={"calm2-7b-chat": 0.5, "gpt4o-mini": 0.6})
    assert mixed.pairs == alone.pairs and mixed.pearson == alone.pearson == pytest.approx(1.0)
    assert "| rank | model | accuracy | external score | difference |" in mixed.table
    mixed.save(tmp_path / "cmp")
    assert (tmp_path / "cmp" / "scatter.png").is_file()


@pytest.mark.slow
def test_what_compare_refuses(runs, tmp_path):
    with pytest.raises(WikioriginError, match=r"calm2-7b-chat \(run 1, in memory\) and calm2-7b-chat \(run 2"):
        wo.compare([runs[0], runs[0]])
    other = wo.MCQTask.from_file(YOKAIEVAL / "responses-calm2-7b-chat.json.xz").run(wo.Recorded())
    with pytest.raises(WikioriginError, match=r"ran on different items \(40 and 810 items, 40 of them the same\)"):
        wo.compare([runs[0], other])
    with pytest.raises(WikioriginError, match="give runs= as a list"):
        wo.compare([])
    with pytest.raises(WikioriginError, match="not a run; give runs="):
        wo.compare([runs[0], 3])
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "comparison.md").write_text("my notes\n")
    with pytest.raises(ParameterError, match="comparison.md not written by wikiorigin eval"):
        wo.compare(runs[:2]).save(tmp_path / "taken")


@pytest.mark.slow
def test_scores_in_memory_are_tested_as_saved(tmp_path):
    """Free-form runs in memory (chrF: a paired permutation test; exact match: McNemar's) give
    the pairs of the same runs saved; an incomplete run is compared only with allow_failures."""
    from wikiorigin.evaluators import freeform, mcq
    from wikiorigin.evaluators.results import RunResult, Summary

    rows = mcq.read_questions(FIRST40)
    questions = [
        {"id": r["id"], "question": f"Which yokai: {r['question']}", "answers": [r["title"]], "origin_wiki": "jawiki"}
        for r in rows
    ]
    said = {
        "good": [r["title"] if i % 4 else r["title"][:-1] for i, r in enumerate(rows)],
        "worse": [r["title"] if i % 3 == 0 else r["choices"][0] for i, r in enumerate(rows)],
    }
    results = []
    for name, answers in said.items():
        model = type("Said", (), {"name": name, "generate": lambda self, prompts, a=answers, **kw: a[: len(prompts)]})
        items = freeform.evaluate_freeform(questions, model())
        summary = Summary(freeform.summarize_freeform(items))
        settings = {"task": "freeform", "model": name}
        results.append(RunResult("freeform", items, summary, settings, writer=freeform.write_freeform_results))
    saved = [str(r.save(tmp_path / r.summary.model)) for r in results]
    for metric in ("chrf", "exact"):
        memory = wo.compare(results, metric=metric, resamples=2000)
        disk = wo.compare(saved, metric=metric, resamples=2000)
        assert memory.pairs == disk.pairs and memory.ranking == disk.ranking and memory.figures == disk.figures
        assert memory.pairs[0].test == ("paired permutation" if metric == "chrf" else "McNemar exact")
    failed = [{**item, "failed": True} if i < 3 else item for i, item in enumerate(results[1].items)]
    incomplete = RunResult("freeform", failed, results[1].summary, results[1].settings).finished(3)
    with pytest.raises(ParameterError, match=r"incomplete run \(complete: false, 3 requests failed\)"):
        wo.compare([results[0], incomplete], metric="chrf")
    allowed = wo.compare([results[0], incomplete], metric="chrf", allow_failures=True, resamples=2000)
    assert allowed.pairs[0].n == 37 and allowed.common == {"n": 37, "of": 40}
