"""CARE's evaluation: the judge's agreement with people's ratings
(`eval judge --human-ratings`: Pearson, Spearman, Kendall with intervals, checked against
scipy), means by culture × category (CARE's Table 3) and by geographic scope, on CARE's
Japanese test file and the rated sample."""

import csv
import json
import math

import pytest
from scipy import stats as sp

from tests.openai_server import ChatServer
from wikiorigin import care, cli
from wikiorigin.evaluators import judge as judging, stats


@pytest.fixture(autouse=True)
def _fewer_resamples(monkeypatch):
    """Bootstraps of 999 resamples keep the tests quick (the default is 9,999)."""
    monkeypatch.setattr(stats, "RESAMPLES", 999)


@pytest.fixture
def care_files(data_dir):
    return data_dir.parent / "care-Japanese-test.json", data_dir.parent / "care-rated-sample.json"


def _judge_by(ratings: dict):
    """A judge that gives each known answer the rating in ``ratings`` (by its text)."""

    def answer(messages):
        graded = messages[-1]["content"].split("Answer to grade: ")[1]
        return f"Fair. Rating: [[{ratings[graded]}]]" if graded in ratings else "No rating here."

    return answer


@pytest.mark.slow
def test_agreement_with_people_through_the_cli(care_files, tmp_path, capsys):
    questions, rated_file = care_files
    rated = care.read_rated(rated_file)
    # the judge mostly agrees with the people, one step off here and there
    judged = {r["response"]: int(min(10, max(1, r["rating"] + (len(r["response"]) % 3) - 1))) for r in rated}
    with ChatServer(_judge_by(judged)) as server:
        code = cli.main(
            [
                "eval",
                "judge",
                "--questions",
                str(questions),
                "--human-ratings",
                str(rated_file),
                "--judge-model",
                "judge",
                "--base-url",
                server.url,
                "--cache",
                str(tmp_path / "c.sqlite"),
                "--out",
                str(tmp_path / "run"),
            ]
        )
    assert code == 0
    out, err = capsys.readouterr()
    assert "2 rated responses not compared" in err  # the sample's question that CARE's file lacks, twice
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    found = summary["agreement"]
    keys = {care.question_key(r["question"]) for r in care.read_care(questions)}
    pairs = [(judged[r["response"]], r["rating"]) for r in rated if care.question_key(r["question"]) in keys]
    x, y = [p[0] for p in pairs], [p[1] for p in pairs]
    assert (found["n"], found["unmatched"], found["judge_unrated"]) == (14, 2, 0)
    pearson = sp.pearsonr(x, y)
    assert found["pearson"]["r"] == pytest.approx(pearson.statistic)
    z, half = math.atanh(pearson.statistic), 1.959963984540054 / math.sqrt(len(x) - 3)  # Fisher z
    assert found["pearson"]["ci95"] == pytest.approx([math.tanh(z - half), math.tanh(z + half)])
    assert found["spearman"]["r"] == pytest.approx(sp.spearmanr(x, y).statistic)
    assert found["kendall"]["r"] == pytest.approx(sp.kendalltau(x, y).statistic)
    assert found["kendall"]["p_value"] == pytest.approx(sp.kendalltau(x, y).pvalue)
    for name in ("spearman", "kendall"):
        low, high = found[name]["ci95"]
        assert low <= found[name]["r"] <= high and found[name]["interval"] == "bootstrap BCa"
    assert found["by_model"]["models"] == ["alpha", "beta", "gamma"] and found["by_model"]["n"] == 3
    assert summary["settings"]["model"] == "human-rated" and "|human_ratings:" in summary["signature"]
    assert f"Pearson r with people's ratings {pearson.statistic:.3f} over 14" in out
    report = (tmp_path / "run" / "report.md").read_text()
    ci = found["pearson"]["ci95"]
    assert "## Agreement with people's ratings" in report
    assert f"| pearson | {pearson.statistic:.3f} | [{ci[0]:.3f}, {ci[1]:.3f}] |" in report
    assert set(summary["by_model"]) == {"alpha", "beta", "gamma"}


@pytest.mark.slow
def test_human_ratings_of_recorded_answers_from_csv(care_files, tmp_path):
    """Recorded answers (alpha's) rated by the judge, people's ratings read from CSV and joined
    by question and answer."""
    questions, rated_file = care_files
    rated = care.read_rated(rated_file)
    rows = {care.question_key(r["question"]): r for r in care.read_care(questions)}
    alpha = [r for r in rated if r["model"] == "alpha" and care.question_key(r["question"]) in rows]
    recorded = [{**rows[care.question_key(r["question"])], "response": r["response"]} for r in alpha]
    (tmp_path / "answers.json").write_text(json.dumps(recorded, ensure_ascii=False))
    with open(tmp_path / "people.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, ["question", "model", "response", "rating"])
        writer.writeheader()
        writer.writerows({k: r[k] for k in ("question", "model", "response", "rating")} for r in rated)
    judged = {r["response"]: 11 - int(r["rating"]) for r in alpha}  # a judge that disagrees
    with ChatServer(_judge_by(judged)) as server:
        assert (
            cli.main(
                [
                    "eval",
                    "judge",
                    "--questions",
                    str(tmp_path / "answers.json"),
                    "--human-ratings",
                    str(tmp_path / "people.csv"),
                    "--judge-model",
                    "judge",
                    "--base-url",
                    server.url,
                    "--cache",
                    str(tmp_path / "c.sqlite"),
                    "--out",
                    str(tmp_path / "run"),
                ]
            )
            == 0
        )
    found = json.loads((tmp_path / "run" / "summary.json").read_text())["agreement"]
    assert found["n"] == len(alpha) == 5 and found["unmatched"] == len(rated) - 5
    assert found["pearson"]["r"] == pytest.approx(-1.0)
    assert found["spearman"]["ci95"] is None  # five pairs: no bootstrap interval
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["settings"]["model"] == "recorded"


@pytest.mark.slow
def test_table3_and_geographic_scope_on_the_care_file(care_files, tmp_path):
    questions, _ = care_files
    rows = care.read_care(questions)

    def rate(messages):
        if "task: rate" not in messages[0]["content"]:
            return "答えは" + messages[-1]["content"][:8]
        return f"Rating: [[{sum(map(ord, messages[-1]['content'].split(chr(10))[0])) % 10 + 1}]]"

    with ChatServer(rate) as server:
        assert (
            cli.main(
                [
                    "eval",
                    "judge",
                    "--questions",
                    str(questions),
                    "--model",
                    "answerer",
                    "--endpoint",
                    server.url,
                    "--judge-model",
                    "judge",
                    "--base-url",
                    server.url,
                    "--cache",
                    str(tmp_path / "c.sqlite"),
                    "--out",
                    str(tmp_path / "run"),
                ]
            )
            == 0
        )
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert "agreement" not in summary
    ratings = [sum(map(ord, f"Question: {r['question']}")) % 10 + 1 for r in rows]
    table = summary["by_culture_category"]
    assert list(table) == ["Native (Japanese)"] and len(table["Native (Japanese)"]) == 5
    for category, block in table["Native (Japanese)"].items():
        part = [x for x, r in zip(ratings, rows) if r["culture_type"] == category]
        ci = sp.t.interval(0.95, len(part) - 1, loc=sum(part) / len(part), scale=sp.sem(part))
        assert block["rated"] == len(part) == 30 and block["mean"] == pytest.approx(sum(part) / len(part))
        assert block["mean_ci95"] == pytest.approx([max(1, ci[0]), min(10, ci[1])]) and block["small"] is False
    scope = summary["by_scope"]
    assert {k: (v["n"], v["small"]) for k, v in scope.items()} == {
        "Nationwide": (141, False),
        "Continent-wide": (5, True),
        "Sub-nationwide": (4, True),
    }
    assert summary["mean_stderr"] == pytest.approx(sp.sem(ratings))
    report = (tmp_path / "run" / "report.md").read_text()
    assert "## By culture and category (CARE's Table 3" in report and "## By geographic scope" in report
    assert "| Sub-nationwide | 4 | 4 |" in report and " | † |" in report


def test_no_scope_field_derives_no_scope():
    items = judging.summarize_judged(
        [
            {
                "model": "m",
                "question": f"q{i}",
                "category": "Opinion",
                "culture": "X",
                "scope": "",
                "rating": float(i % 10 + 1),
                "unrated": None,
            }
            for i in range(12)
        ]
    )
    assert "by_scope" not in items and items["by_culture_category"]["X"]["Opinion"]["rated"] == 12


@pytest.mark.slow
def test_human_ratings_on_another_scale_need_their_rating_scale(care_files, tmp_path, capsys):
    """People's ratings on 0-100: refused on CARE's 1-10 naming the row and `--rating-scale`
    (the option eval judge has), accepted with `--rating-scale 0-100`."""
    questions, rated_file = care_files
    rated = care.read_rated(rated_file)
    hundred = tmp_path / "people.jsonl"
    hundred.write_text(
        "\n".join(json.dumps({**r, "rating": r["rating"] * 10}, ensure_ascii=False) for r in rated), encoding="utf-8"
    )
    judged = {r["response"]: int(r["rating"]) for r in rated}
    with ChatServer(_judge_by(judged)) as server:
        argv = ["eval", "judge", "--questions", str(questions), "--human-ratings", str(hundred)]
        argv += ["--judge-model", "judge", "--base-url", server.url, "--cache", str(tmp_path / "c.sqlite")]
        assert cli.main([*argv, "--out", str(tmp_path / "refused")]) == 2
        err = capsys.readouterr().err.strip()
        assert f"{hundred}: row 1: rating" in err and "give --rating-scale" in err and len(err.splitlines()) == 1
        assert not server.calls
        assert cli.main([*argv, "--rating-scale", "0-100", "--out", str(tmp_path / "run")]) == 0
    found = json.loads((tmp_path / "run" / "summary.json").read_text())["agreement"]
    assert found["n"] == 14
