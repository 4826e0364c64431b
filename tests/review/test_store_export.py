"""The decisions database (append-only, latest wins, undo, stale), the export (policies, edits,
schema, provenance; eval mcq, export lm-eval and build card take its file) and the stats
(kappa from statsmodels)."""

from __future__ import annotations

import json
import lzma
import sqlite3

import pyarrow.parquet as pq
import pytest

from tests.conftest import ROOT
from tests.review.conftest import mcq_rows, write
from wikiorigin import cli
from wikiorigin.errors import WikioriginError
from wikiorigin.files import read_provenance
from wikiorigin.review.export import apply_edits, export_reviewed
from wikiorigin.review.items import load_dataset
from wikiorigin.review.stats import format_stats, review_stats
from wikiorigin.review.store import ReviewStore, status
from wikiorigin.schemas import MCQ, REVIEW

YOKAI = str(ROOT / "tests/data/yokaieval/YokaiEval-first40.json.xz")


def _store(tmp_path, dataset):
    return ReviewStore(
        tmp_path / "review.sqlite", dataset.path.name, dataset.kind, list(dataset.by_key), dataset.keyed_by
    )


def test_decisions_are_appended_and_the_latest_counts(mcq_file, tmp_path):
    data = load_dataset(mcq_file)
    store = _store(tmp_path, data)
    q1 = data.items[0]
    store.add(q1.key, q1.sha1, "alice", "accept")
    store.add(q1.key, q1.sha1, "alice", "reject", reason="answer wrong", note="two are right")
    store.add(q1.key, q1.sha1, "bob", "accept", edits={"question": "新しい問い"})
    assert [d.decision for d in store.history()] == ["accept", "reject", "accept"]
    current = store.current()
    assert current[("q1", "alice")].decision == "reject" and current[("q1", "alice")].note == "two are right"
    assert current[("q1", "bob")].edits == {"question": "新しい問い"}
    assert store.con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        store.con.execute("UPDATE decisions SET decision = 'accept'")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        store.con.execute("DELETE FROM decisions")
    with pytest.raises(WikioriginError, match="needs a reason"):
        store.add(q1.key, q1.sha1, "alice", "reject")
    # another connection (a killed server's successor) sees every committed row
    again = ReviewStore(tmp_path / "review.sqlite", data.path.name, data.kind, list(data.by_key))
    assert len(again.history()) == 3


def test_undo_takes_back_the_latest_decision_in_force(mcq_file, tmp_path):
    data = load_dataset(mcq_file)
    store = _store(tmp_path, data)
    a, b = data.items[:2]
    store.add(a.key, a.sha1, "alice", "accept")
    store.add(b.key, b.sha1, "alice", "reject", reason="duplicate")
    store.add(b.key, b.sha1, "bob", "accept")
    assert store.undo("alice").item == b.key
    assert ("q2", "alice") not in store.current() and ("q2", "bob") in store.current()
    assert store.undo("alice").item == a.key
    assert store.undo("alice") is None
    assert [d.decision for d in store.history()].count("undo") == 2  # nothing deleted


def test_the_state_follows_decisions_of_servers_sharing_the_database(mcq_file, tmp_path):
    data = load_dataset(mcq_file)
    mine, theirs = _store(tmp_path, data), _store(tmp_path, data)  # one server per annotator
    a, b = data.items[:2]
    mine.add(a.key, a.sha1, "alice", "accept")
    first = mine.current()
    first.clear()  # a caller's copy: the store's own state is untouched
    assert set(mine.current()) == {("q1", "alice")}
    theirs.add(b.key, b.sha1, "bob", "reject", reason="duplicate")
    assert set(mine.current()) == {("q1", "alice"), ("q2", "bob")}
    theirs.undo("bob")
    assert set(mine.current()) == {("q1", "alice")}
    stats = ReviewStore(tmp_path / "review.sqlite", "?", None, readonly=True)  # whatever it reviews
    assert set(stats.current()) == {("q1", "alice")}
    with pytest.raises(ValueError, match="needs the dataset's kind"):
        ReviewStore(tmp_path / "other.sqlite", "?", None)


def test_the_kept_state_is_the_state_read_whole_after_any_sequence_of_decisions(mcq_file, tmp_path):
    import random

    data = load_dataset(mcq_file)
    mine, theirs = _store(tmp_path, data), _store(tmp_path, data)
    rng = random.Random(7)
    for step in range(200):
        store, who = rng.choice([(mine, "alice"), (theirs, "bob"), (theirs, "carol")])
        item = rng.choice(data.items)
        if rng.random() < 0.2:
            store.undo(who)
        else:
            decision = rng.choice(["accept", "reject", "skip"])
            store.add(
                item.key,
                item.sha1,
                who,
                decision,
                reason="duplicate" if decision == "reject" else None,
                edits={"question": f"問{step}"} if decision == "accept" and rng.random() < 0.3 else None,
            )
        if rng.random() < 0.5:
            assert mine.current() == {(d.item, d.annotator): d for d in mine.effective()}, step


def test_a_decision_on_other_content_is_stale(mcq_file, tmp_path):
    data = load_dataset(mcq_file)
    store = _store(tmp_path, data)
    for item in data.items[:2]:
        store.add(item.key, item.sha1, "alice", "accept")
    rows = mcq_rows()
    rows[0]["choices"][1] = "台所の煤"  # the file changes under the review
    write(rows, mcq_file, MCQ, builder="mcq")
    changed = load_dataset(mcq_file)
    current = store.current()
    assert status(current[("q1", "alice")], changed.items[0].sha1) == "stale"
    assert status(current[("q2", "alice")], changed.items[1].sha1) == "accepted"
    report = export_reviewed(mcq_file, tmp_path / "review.sqlite", tmp_path / "out.parquet")
    assert (report.exported, report.stale) == (1, 1)
    assert pq.read_table(tmp_path / "out.parquet").column("id").to_pylist() == ["q2"]


def test_a_database_of_another_dataset_is_refused(mcq_file, freeform_file, tmp_path, capsys):
    data = load_dataset(mcq_file)
    store = _store(tmp_path, data)
    store.add("q1", data.items[0].sha1, "alice", "accept")
    with pytest.raises(WikioriginError, match=r"review\.sqlite: reviews mcq\.parquet \(mcq\), not a freeform"):
        ReviewStore(tmp_path / "review.sqlite", "freeform.parquet", "freeform", ["f1"])
    with pytest.raises(WikioriginError, match="none of its 1 reviewed items is in other.parquet"):
        ReviewStore(tmp_path / "review.sqlite", "other.parquet", "mcq", ["x1", "x2"])
    assert (
        cli.main(
            [
                "review",
                "export",
                str(freeform_file),
                "--db",
                str(tmp_path / "review.sqlite"),
                "--out",
                str(tmp_path / "o.parquet"),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "review.sqlite: reviews mcq.parquet" in err


def _three_annotators(tmp_path, data):
    store = _store(tmp_path, data)
    votes = {"q1": "aaa", "q2": "aar", "q3": "arr", "q4": "rrr", "q5": "a", "q6": ""}
    for item in data.items:
        for who, vote in zip(("alice", "bob", "carol"), votes[item.key]):
            if vote == "a":
                store.add(item.key, item.sha1, who, "accept")
            else:
                store.add(item.key, item.sha1, who, "reject", reason="not of this culture")
    for who in ("alice", "bob", "carol"):  # all three accept the same edits of q1
        store.add(
            "q1",
            data.items[0].sha1,
            who,
            "accept",
            edits={"question": "垢嘗は何を嘗めるか。", "choices": ["垢", "油", "苔", "水"], "answer_index": 2},
        )
    store.add("q6", data.items[5].sha1, "alice", "skip")
    return store


@pytest.mark.slow
@pytest.mark.parametrize(
    "policy, ids",
    [("all-accept", ["q1", "q5"]), ("majority", ["q1", "q2", "q5"]), ("any-accept", ["q1", "q2", "q3", "q5"])],
)
def test_export_policies_edits_schema_and_provenance(mcq_file, tmp_path, policy, ids):
    data = load_dataset(mcq_file)
    _three_annotators(tmp_path, data)
    out = tmp_path / "reviewed.parquet"
    report = export_reviewed(mcq_file, tmp_path / "review.sqlite", out, policy=policy)
    table = pq.read_table(out)
    assert table.column("id").to_pylist() == ids
    assert table.schema.names == MCQ.names + REVIEW.names
    assert table.schema.field("answer_index").type == MCQ.field("answer_index").type
    first = table.to_pylist()[0]
    assert first["question"] == "垢嘗は何を嘗めるか。" and first["answer"] == "苔" and first["answer_index"] == 2
    assert first["review_edited"] == ["answer", "answer_index", "choices", "question"]
    assert first["review_annotators"] == ["alice", "bob", "carol"] and first["review_accepts"] == 3
    meta = read_provenance(out)
    assert meta["review"]["policy"] == policy and meta["review"]["exported"] == len(ids)
    assert meta["review"]["undecided"] == 1 and meta["source"]["builder"] == "mcq"
    assert (report.exported, report.undecided, report.edited) == (len(ids), 1, 1)


def test_apply_edits_keeps_the_shape_of_released_rows():
    row = {"question": "q", "choices": ["a", "b"], "answer": "a", "ref": "[1]"}
    new, changed = apply_edits("mcq", row, {"answer_index": 1})
    assert new == {"question": "q", "choices": ["a", "b"], "answer": "b", "ref": "[1]"} and changed == ["answer"]


def test_released_yokaieval_json_is_reviewed_and_exported(tmp_path):
    data = load_dataset(YOKAI)
    assert data.kind == "mcq" and len(data.items) == 40 and data.items[3].key == "#" + data.items[3].sha1[:16]
    store = _store(tmp_path, data)
    for item in data.items[:3]:
        store.add(item.key, item.sha1, "alice", "accept")
    export_reviewed(YOKAI, tmp_path / "review.sqlite", tmp_path / "y.parquet")
    rows = pq.read_table(tmp_path / "y.parquet").to_pylist()
    released = json.loads(lzma.open(YOKAI).read())
    assert [r["question"] for r in rows] == [r["question"] for r in released[:3]]
    assert rows[0]["ref"] == released[0]["ref"] and rows[0]["review_decision"] == "accept"
    from wikiorigin.builders.dataset import write_card  # the release's licence carries over

    card = write_card(tmp_path, "mcq", "Reviewed YokaiEval", "").read_text(encoding="utf-8")
    assert "license: cc-by-nc-sa-4.0" in card and "language:\n- ja\n" in card and "no commercial use" in card


@pytest.mark.slow
def test_eval_lmeval_and_card_take_the_reviewed_file(mcq_file, tmp_path, capsys):
    data = load_dataset(mcq_file)
    _three_annotators(tmp_path, data)
    d = tmp_path / "reviewed"
    assert (
        cli.main(
            [
                "review",
                "export",
                str(mcq_file),
                "--db",
                str(tmp_path / "review.sqlite"),
                "--out",
                str(d / "reviewed.parquet"),
                "--policy",
                "majority",
            ]
        )
        == 0
    )
    assert "3 of 6 items accepted (majority; 1 edited)" in capsys.readouterr().out
    rows = pq.read_table(d / "reviewed.parquet").to_pylist()
    responses = [
        {"question": r["question"], "choices": r["choices"], "answer": r["answer"], "response": r["answer"]}
        for r in rows
    ]
    (tmp_path / "responses.json").write_text(json.dumps(responses, ensure_ascii=False), encoding="utf-8")
    assert (
        cli.main(
            [
                "eval",
                "mcq",
                "--questions",
                str(d / "reviewed.parquet"),
                "--responses",
                str(tmp_path / "responses.json"),
                "--out",
                str(tmp_path / "eval"),
            ]
        )
        == 0
    )
    summary = json.loads((tmp_path / "eval" / "summary.json").read_text())
    assert summary["n"] == 3 and summary["accuracy"] == 1.0
    assert cli.main(["export", "lm-eval", str(d / "reviewed.parquet"), "--out", str(tmp_path / "task")]) == 0
    docs = [json.loads(line) for line in (tmp_path / "task" / "wikiorigin_reviewed.jsonl").read_text().splitlines()]
    assert docs[0]["choices"] == ["垢", "油", "苔", "水"] and docs[0]["answer_index"] == 2
    assert cli.main(["build", "card", str(d), "--kind", "mcq", "--title", "Reviewed yokai"]) == 0
    card = (d / "README.md").read_text(encoding="utf-8")
    assert "## Human review" in card and "3 of 6 items accepted by human review (policy majority" in card
    assert "0 left out as annotators accepted different edits" in card


def test_stats_counts_reasons_and_kappa(mcq_file, tmp_path, capsys):
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

    data = load_dataset(mcq_file)
    store = _three_annotators(tmp_path, data)
    stats = review_stats(store)
    assert stats["annotators"]["alice"] == {"accept": 4, "reject": 1, "skip": 1}
    assert stats["reasons"] == {"not of this culture": 6} and stats["edited"] == 3 and stats["conflicts"] == []
    pairs = {tuple(p["annotators"]): p for p in stats["agreement"]["pairs"]}
    # alice & bob: q1 a/a, q2 a/a, q3 a/r, q4 r/r -> observed 3/4, expected 1/2, kappa 1/2
    assert pairs[("alice", "bob")]["items"] == 4 and pairs[("alice", "bob")]["cohen_kappa"] == pytest.approx(0.5)
    ratings = [[0, 0, 0], [0, 0, 1], [0, 1, 1], [1, 1, 1]]
    expected = fleiss_kappa(aggregate_raters(ratings)[0])
    assert stats["agreement"]["fleiss"]["fleiss_kappa"] == pytest.approx(expected)
    assert cli.main(["review", "stats", "--db", str(tmp_path / "review.sqlite")]) == 0
    out = capsys.readouterr().out
    assert "alice & bob: 4 items, observed 75.0%, Cohen's kappa 0.500" in out
    assert "Fleiss' kappa (3 raters, 4 items)" in out and "not of this culture" in out
    assert "undefined" in format_stats(
        {
            **stats,
            "agreement": {
                "items": 1,
                "fleiss": None,
                "pairs": [{"annotators": ["a", "b"], "items": 1, "observed": 1.0, "cohen_kappa": None}],
            },
        }
    )


def test_bad_input_is_one_line_naming_the_file(mcq_file, articles_file, tmp_path, capsys):
    cases = [
        (
            [
                "review",
                "export",
                str(tmp_path / "nope.parquet"),
                "--db",
                "x.sqlite",
                "--out",
                str(tmp_path / "o.parquet"),
            ],
            "nope.parquet: no such file",
        ),
        (
            ["review", "export", str(articles_file), "--db", "x.sqlite", "--out", str(tmp_path / "o.parquet")],
            "articles.parquet: not a dataset to review",
        ),
        (
            [
                "review",
                "export",
                str(mcq_file),
                "--db",
                str(tmp_path / "none.sqlite"),
                "--out",
                str(tmp_path / "o.parquet"),
            ],
            "none.sqlite: no such review database",
        ),
        (["review", "stats", "--db", str(mcq_file)], "mcq.parquet: not a review database"),
    ]
    for argv, message in cases:
        assert cli.main(argv) == 2, argv
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err


def test_decisions_on_rows_that_changed_are_said_not_silently_dropped(tmp_path, capsys):
    """Released rows have no ids: a changed row is a new item, and its old decision no longer
    applies; the export says how many decided items the file no longer has."""
    rows = json.loads(lzma.open(YOKAI).read())[:5]
    path = tmp_path / "rows.json"
    path.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    data = load_dataset(path)
    store = _store(tmp_path, data)
    for item in data.items[:3]:
        store.add(item.key, item.sha1, "alice", "accept")
    store.close()
    rows[0]["question"] += "（改）"
    path.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    assert (
        cli.main(
            [
                "review",
                "export",
                str(path),
                "--db",
                str(tmp_path / "review.sqlite"),
                "--out",
                str(tmp_path / "out.parquet"),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "2 of 5 items accepted" in out and "1 decided items are no longer in" in out
    assert read_provenance(tmp_path / "out.parquet")["review"]["orphaned"] == 1


def _decided(mcq_file, tmp_path):
    data = load_dataset(mcq_file)
    store = _store(tmp_path, data)
    for item in data.items[:3]:
        store.add(item.key, item.sha1, "alice", "accept")
    store.close()
    return tmp_path / "review.sqlite"


def test_export_never_overwrites_what_it_reads(mcq_file, tmp_path, capsys):
    db = _decided(mcq_file, tmp_path)
    before = (mcq_file.read_bytes(), db.read_bytes())
    for out, says in (
        (db, "would overwrite the input"),
        (mcq_file, "would overwrite the input"),
        (tmp_path / "reviewed.json", "ending in .parquet"),
    ):
        assert cli.main(["review", "export", str(mcq_file), "--db", str(db), "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert says in err and len(err.strip().splitlines()) == 1
    assert (mcq_file.read_bytes(), db.read_bytes()) == before
    assert cli.main(["review", "stats", "--db", str(db)]) == 0  # the decisions are all there


def test_databases_it_cannot_trust_are_refused_as_they_are(mcq_file, tmp_path, capsys):
    db = _decided(mcq_file, tmp_path)
    con = sqlite3.connect(db)
    con.execute("DROP TRIGGER decisions_append_only_u")
    con.execute("UPDATE decisions SET edits = '[1, 2]' WHERE seq = 2")
    con.commit()
    con.close()
    assert cli.main(["review", "export", str(mcq_file), "--db", str(db), "--out", str(tmp_path / "o.parquet")]) == 2
    assert "decision 2: its edits are not a JSON object" in capsys.readouterr().err
    newer = tmp_path / "newer.sqlite"
    newer.write_bytes(_decided(mcq_file, tmp_path / "n").read_bytes())
    con = sqlite3.connect(newer)
    con.execute("UPDATE meta SET value = '2' WHERE key = 'schema'")
    con.commit()
    con.close()
    for argv in (
        ["review", "stats", "--db", str(newer)],
        ["review", "export", str(mcq_file), "--db", str(newer), "--out", str(tmp_path / "o.parquet")],
    ):
        assert cli.main(argv) == 2
        assert "review schema '2', not '1'" in capsys.readouterr().err
    other = tmp_path / "other.sqlite"  # another program's database: left untouched
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE meta (name TEXT, size INTEGER)")
    con.commit()
    con.close()
    before = other.read_bytes()
    with pytest.raises(WikioriginError, match=r"not a review database \(it holds the tables meta\)"):
        ReviewStore(other, "mcq.parquet", "mcq")
    assert other.read_bytes() == before


def test_a_ref_edit_keeps_the_form_of_the_row_and_its_texts():
    """Footnote edits. A released row keeps its ref as text; refs_detail follows the
    numbers (the text of each one cited before, None for one the export cannot know)."""
    released = {
        "question": "q",
        "choices": ["a", "b"],
        "answer": "a",
        "ref": "[1], [3]",
        "refs_detail": ["^ one", "^ three"],
    }
    new, changed = apply_edits("mcq", released, {"ref": [3, 4]})
    assert new["ref"] == "[3][4]" and new["refs_detail"] == ["^ three", None]
    assert changed == ["ref", "refs_detail"]
    built = {**released, "ref": [1, 3]}  # mcq.parquet: a list of numbers
    assert apply_edits("mcq", built, {"ref": [1]})[0]["ref"] == [1]
    assert apply_edits("mcq", built, {"ref": [1]})[0]["refs_detail"] == ["^ one"]
    uneven = {**released, "refs_detail": ["^ ?"]}  # one text for two numbers: whose, nobody knows
    assert apply_edits("mcq", uneven, {"ref": [1]})[0]["refs_detail"] == [None]
    assert "refs_detail" not in apply_edits("mcq", {"question": "q", "choices": ["a", "b"]}, {"ref": [2]})[0]


@pytest.mark.parametrize(
    "ref, message",
    [
        ([0], r"ref must be footnote numbers \(whole numbers > 0\), not 0"),
        ([1, -2], "not -2"),
        ([True], "not True"),
        (["2"], "not '2'"),
        ("1", "ref must be a list"),
        ([], "one footnote number or more"),
        ([2, 2], "names a footnote twice"),
    ],
)
def test_a_ref_edit_must_be_footnote_numbers(ref, message):
    from wikiorigin.review.export import check_edits

    with pytest.raises(WikioriginError, match=message):
        check_edits("mcq", {"ref": ref})
    assert check_edits("mcq", {"ref": [3, 1]}) == {"ref": [1, 3]}
    assert check_edits("mcq", {"ref": [3, 1]}, footnotes={1, 2, 3}) == {"ref": [1, 3]}
    with pytest.raises(WikioriginError, match=r"the article has no footnote 7, 9 \(its footnotes: 1, 2\)"):
        check_edits("mcq", {"ref": [1, 7, 9]}, footnotes={1, 2})


def test_released_rows_exported_with_their_edited_refs(tmp_path):
    data = load_dataset(YOKAI)
    store = _store(tmp_path, data)
    first = data.items[0]  # ref "[1]", one text
    store.add(first.key, first.sha1, "alice", "accept", edits={"ref": [1, 2]})
    export_reviewed(YOKAI, tmp_path / "review.sqlite", tmp_path / "y.parquet")
    row = pq.read_table(tmp_path / "y.parquet").to_pylist()[0]
    assert row["ref"] == "[1][2]" and row["refs_detail"] == [first.row["refs_detail"][0], None]
    assert row["review_edited"] == ["ref", "refs_detail"]


def test_stats_count_former_and_retired_reasons(mcq_file, tmp_path, capsys):
    """Old databases keep the reason texts they were written with: a renamed reason counts as
    its new name, one no longer offered still counts under its own."""
    from wikiorigin.review.store import FORMER_REASONS, REASONS

    assert {"not verifiable from the article", "not backed by an expert source", "inappropriate", "duplicate"} <= set(
        REASONS
    ) and len(REASONS) <= 9  # keys 1-9 on the page
    assert set(FORMER_REASONS.values()) <= set(REASONS) and not set(FORMER_REASONS) & set(REASONS)
    data = load_dataset(mcq_file)
    store = _store(tmp_path, data)
    q1, q2, q3, q4 = data.items[:4]
    store.add(q1.key, q1.sha1, "alice", "reject", reason="not backed by the article")  # as an old page wrote it
    store.add(q2.key, q2.sha1, "alice", "reject", reason="not verifiable from the article")
    store.add(q3.key, q3.sha1, "alice", "reject", reason="too easy")  # offered once, no longer
    store.add(q4.key, q4.sha1, "alice", "reject", reason="inappropriate")
    assert review_stats(store)["reasons"] == {"not verifiable from the article": 2, "too easy": 1, "inappropriate": 1}
    assert store.current()[("q1", "alice")].reason == "not backed by the article"  # the record is as written
    assert cli.main(["review", "stats", "--db", str(tmp_path / "review.sqlite")]) == 0
    out = capsys.readouterr().out
    assert "2  not verifiable from the article" in out and "1  too easy" in out


def test_an_export_that_accepts_no_item_exits_1_saying_why(mcq_file, tmp_path, capsys):
    """No item accepted (none decided, all rejected, every decision stale): a reviewed set of
    no rows is a failed run, as a build of no rows is, never exit 0."""
    data = load_dataset(mcq_file)
    store = _store(tmp_path, data)
    store.add(data.items[0].key, data.items[0].sha1, "alice", "reject", note="wrong")
    store.close()
    out = tmp_path / "reviewed.parquet"
    argv = ["review", "export", str(mcq_file), "--db", str(tmp_path / "review.sqlite"), "--out", str(out)]
    assert cli.main(argv) == 1
    err = capsys.readouterr().err
    assert err == (
        "wikiorigin: error: 0 of 6 items accepted (all-accept): 1 rejected, 5 undecided, 0 with conflicting "
        "edits, 0 with a stale decision\n"
    )
    assert pq.read_table(out).num_rows == 0


def test_a_reviewed_set_of_an_incomplete_build_stays_incomplete(tmp_path, capsys):
    """A build accepted incomplete (`--allow-failures`, complete: false) reviewed and exported:
    the reviewed set says complete: false as its build did, and its card says Incomplete."""
    from tests.commands import incomplete_mcq_set

    built = incomplete_mcq_set(tmp_path)
    data = load_dataset(built)
    store = _store(tmp_path, data)
    for item in data.items:
        store.add(item.key, item.sha1, "alice", "accept")
    store.close()
    reviewed = tmp_path / "reviewed" / "mcq.parquet"
    assert (
        cli.main(["review", "export", str(built), "--db", str(tmp_path / "review.sqlite"), "--out", str(reviewed)]) == 0
    )
    meta = read_provenance(reviewed)
    assert (meta["complete"], meta["failed_requests"]) == (False, 1)
    assert cli.main(["build", "card", str(reviewed.parent), "--kind", "mcq", "--title", "T"]) == 0
    assert "## Incomplete" in (reviewed.parent / "README.md").read_text(encoding="utf-8")
