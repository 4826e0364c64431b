"""Faults of the builders, driven through `wikiorigin build ...` against the loopback server of
tests/openai_server.py and real Parquet files (issue 27): an incomplete build says so
(`complete: false`) until the same command completes it; a build with no rows exits 1 saying
why; ratings off their scale are refused; nothing is overwritten that the command did not make
(the files beside an output, a hand-written README.md); empty and repeated articles cost no
call; inputs are named by file name and checksum, never by a local path."""

import hashlib
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.builders.test_mcq import scripted
from tests.builders.test_preference import CARE
from tests.commands import build_mcq
from tests.openai_server import ChatServer
from wikiorigin.cli import main
from wikiorigin.files import read_provenance
from wikiorigin.schemas import ARTICLES

TITLES = ["河童", "天狗", "座敷童子"]


def _article(i: int, title: str, text: str | None = None) -> dict:
    return {
        "wiki": "jawiki",
        "page_id": i,
        "title": title,
        "text": f"{title}は日本の妖怪である[1]。" if text is None else text,
        "revision_id": 5,
        "references": [{"number": 1, "group": "", "text": "柳田国男『妖怪談義』"}],
        "url": f"https://ja.wikipedia.org/wiki/{title}",
    }


def _articles(path, rows=None):
    rows = rows if rows is not None else [_article(i, t) for i, t in enumerate(TITLES)]
    pq.write_table(pa.Table.from_pylist(rows, schema=ARTICLES), path)
    return path


def _mcq(articles, out, url, *extra):
    return build_mcq(articles, out, url, "--retries", "0", "--concurrency", "1", *extra)


def _errors(err: str) -> list[str]:
    assert "Traceback" not in err, err
    return [line for line in err.splitlines() if line.startswith("wikiorigin: error: ")]


def _task(messages) -> str:
    return messages[0]["content"].splitlines()[0].removeprefix("task: ")


# --- 1. an incomplete build is not a complete one ----------------------------------------------


@pytest.mark.slow
def test_an_incomplete_build_says_complete_false_until_the_same_command_completes_it(tmp_path, capsys):
    articles = _articles(tmp_path / "articles.parquet")
    out = tmp_path / "set" / "m.parquet"
    with ChatServer(answer=scripted) as server:
        server.faults = ["500"]  # the first request fails
        argv = _mcq(articles, out, server.url)
        assert main(argv) == 1
        meta = read_provenance(out)
        assert (meta["complete"], meta["failed_requests"], meta["requests"]) == (False, 1, 9)
        assert read_provenance(tmp_path / "set" / "m.failed.parquet")["complete"] is False
        capsys.readouterr()
        calls = len(server.calls)
        assert main(argv) == 0  # the same command: only the failed request and what waited on it
        assert len(server.calls) - calls == 4
        meta = read_provenance(out)
        assert (meta["complete"], meta["failed_requests"], meta["requests"]) == (True, 0, 12)
        assert pq.read_table(out).num_rows == 3
        server.faults = ["500"]
        accepted = tmp_path / "accepted" / "m.parquet"
        assert main(_mcq(articles, accepted, server.url, "--allow-failures")) == 0
    assert main(["build", "card", str(accepted.parent), "--kind", "mcq", "--title", "T"]) == 0
    card = (accepted.parent / "README.md").read_text(encoding="utf-8")
    assert "## Incomplete" in card and "`m.parquet`: 1 of 9 LLM requests failed" in card
    assert '"complete": false' in card


@pytest.mark.slow
def test_the_library_result_and_report_say_whether_complete(tmp_path):
    from wikiorigin.builders.mcq import MCQBuilder
    from wikiorigin.llm import LLMClient, OpenAIBackend, RequestCache

    articles = _articles(tmp_path / "articles.parquet")
    with ChatServer(answer=scripted) as server:
        server.faults = ["500"]
        llm = LLMClient(OpenAIBackend("gen", base_url=server.url), RequestCache(tmp_path / "c.sqlite"), retries=0)
        result = MCQBuilder().run(articles, llm)
        assert not result.complete and result.report.failed_requests == 1 and not result.report.complete
        again = MCQBuilder().run(articles, llm)  # the client's counts go on; the build's are its own
        assert again.complete and again.report.failed_requests == 0 and again.report.requests == 12


# --- a build with no rows exits 1 and says why -------------------------------------------------


def test_a_build_with_no_rows_exits_1_saying_why(tmp_path, capsys):
    def wrong_checker(messages):
        return json.dumps({"answer_index": 0}) if _task(messages) == "check" else scripted(messages)

    articles = _articles(tmp_path / "articles.parquet")
    with ChatServer(answer=wrong_checker) as server:
        assert main(_mcq(articles, tmp_path / "m.parquet", server.url)) == 1
    captured = capsys.readouterr()
    assert "0 questions from 3 articles" in captured.out
    assert _errors(captured.err) == [
        "wikiorigin: error: 0 questions from 3 articles: all 3 dropped at the check step (the checker "
        f"chose 0) (rows and reasons -> {tmp_path / 'm.failed.parquet'})"
    ]


def test_a_preference_build_of_tied_ratings_exits_1_saying_why(tmp_path, capsys):
    questions = json.loads(CARE.read_text(encoding="utf-8"))[:4]
    rated = tmp_path / "rated.json"
    rated.write_text(
        json.dumps(
            [
                {"question": q["question"], "model": m, "response": f"{m} says", "rating": 7}
                for q in questions
                for m in ("alpha", "beta")
            ],
            ensure_ascii=False,
        ),
        encoding="utf-8",
    )
    argv = ["build", "preference", "--language", "ja", "--questions", str(CARE), "--rated", str(rated)]
    assert main([*argv, "--out", str(tmp_path / "p.parquet")]) == 1
    assert _errors(capsys.readouterr().err) == [
        "wikiorigin: error: 0 pairs from 4 questions: all ratings tied in 4 questions "
        f"(rows and reasons -> {tmp_path / 'p.failed.parquet'})"
    ]


# --- 3. ratings on their scale -------------------------------------------------------------------


@pytest.mark.parametrize("rating", [99, -5, 0, 10.5])
def test_a_rating_off_the_scale_is_exit_2_naming_the_file_and_row(rating, tmp_path, capsys):
    question = json.loads(CARE.read_text(encoding="utf-8"))[0]["question"]
    rated = tmp_path / "rated.jsonl"
    rows = [{"question": question, "model": "alpha", "response": "a", "rating": 8}]
    rows.append({"question": question, "model": "beta", "response": "b", "rating": rating})
    rated.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    argv = ["build", "preference", "--language", "ja", "--questions", str(CARE), "--rated", str(rated)]
    assert main([*argv, "--out", str(tmp_path / "p.parquet")]) == 2
    assert _errors(capsys.readouterr().err) == [
        f"wikiorigin: error: {rated}: row 2: rating {rating:g} is outside the rating scale 1-10 "
        "(give --rating-scale for ratings on another scale)"
    ]
    assert not (tmp_path / "p.parquet").exists()
    assert main([*argv, "--out", str(tmp_path / "q.parquet"), "--rating-scale=-10-100"]) == 0
    assert read_provenance(tmp_path / "q.parquet")["rating_scale"] == [-10, 100]
    assert pq.read_table(tmp_path / "q.parquet").num_rows == 1


def test_a_bad_rating_scale_is_exit_2(tmp_path, capsys):
    argv = ["build", "preference", "--questions", str(CARE), "--rated", str(CARE), "--out", str(tmp_path / "p.parquet")]
    with pytest.raises(SystemExit) as stop:
        main([*argv, "--rating-scale", "10-1"])
    assert stop.value.code == 2 and "expected LOW-HIGH" in capsys.readouterr().err


# --- 4. nothing is overwritten that the command did not make -----------------------------------


@pytest.mark.parametrize("name", ["m.failed.parquet", "m.parquet.lock"])
def test_a_file_written_beside_the_output_never_overwrites_an_input(name, tmp_path, capsys):
    articles = _articles(tmp_path / name)
    before = articles.read_bytes()
    with ChatServer(answer=scripted) as server:
        assert main(_mcq(articles, tmp_path / "m.parquet", server.url)) == 2
        assert not server.calls
    assert _errors(capsys.readouterr().err) == [
        f"wikiorigin: error: {tmp_path / 'm.parquet'}: the file written beside it, {name}, would overwrite "
        f"the input {articles}; give another file"
    ]
    assert articles.read_bytes() == before and not (tmp_path / "m.parquet").exists()


def test_a_rated_file_beside_the_output_is_not_overwritten(tmp_path, capsys):
    question = json.loads(CARE.read_text(encoding="utf-8"))[0]["question"]
    rated = tmp_path / "p.failed.parquet"
    rows = [{"question": question, "model": m, "response": m, "rating": r} for m, r in (("a", 9), ("b", 2))]
    pq.write_table(pa.Table.from_pylist(rows), rated)
    before = rated.read_bytes()
    argv = ["build", "preference", "--language", "ja", "--questions", str(CARE), "--rated", str(rated)]
    assert main([*argv, "--out", str(tmp_path / "p.parquet")]) == 2
    assert "p.failed.parquet, would overwrite the input" in capsys.readouterr().err
    assert rated.read_bytes() == before


def _built_set(tmp_path, directory):
    articles = _articles(tmp_path / "articles.parquet")
    with ChatServer(answer=scripted) as server:
        assert main(_mcq(articles, directory / "test.parquet", server.url)) == 0
    return articles


@pytest.mark.slow
def test_build_card_keeps_a_hand_written_readme_unless_forced(tmp_path, capsys):
    directory = tmp_path / "set"
    _built_set(tmp_path, directory)
    readme = directory / "README.md"
    readme.write_text("# My dataset\n\nWritten by hand.\n", encoding="utf-8")
    card = ["build", "card", str(directory), "--kind", "mcq", "--title", "T"]
    capsys.readouterr()
    assert main(card) == 2
    assert _errors(capsys.readouterr().err) == [
        f"wikiorigin: error: {readme}: a README.md not written by wikiorigin (no card marker); it is kept: "
        "move it, or give --force to replace it"
    ]
    assert readme.read_text(encoding="utf-8") == "# My dataset\n\nWritten by hand.\n"
    assert main([*card, "--force"]) == 0
    assert "# T" in readme.read_text(encoding="utf-8")
    assert main([*card[:-1], "Again"]) == 0  # a card of its own is rewritten without --force
    assert "# Again" in readme.read_text(encoding="utf-8")


@pytest.mark.slow
def test_build_card_keeps_hand_written_croissant_metadata_unless_forced(tmp_path, capsys):
    directory = tmp_path / "set"
    _built_set(tmp_path, directory)
    card = ["build", "card", str(directory), "--kind", "mcq", "--title", "T"]
    assert main(card) == 0
    ours = (directory / "croissant.json").read_text(encoding="utf-8")
    assert main([*card[:-1], "Again"]) == 0  # ours: rewritten
    mine = '{"@type": "sc:Dataset", "name": "written by hand"}\n'
    (directory / "croissant.json").write_text(mine, encoding="utf-8")
    (directory / "README.md").unlink()
    capsys.readouterr()
    assert main(card) == 2
    assert "croissant.json: Croissant metadata not written by wikiorigin; it is kept" in capsys.readouterr().err
    assert (directory / "croissant.json").read_text(encoding="utf-8") == mine
    assert not (directory / "README.md").exists()  # nothing written
    assert main([*card, "--force"]) == 0
    assert (directory / "croissant.json").read_text(encoding="utf-8") == ours


# --- 5. empty and repeated articles cost no call -----------------------------------------------


def test_empty_and_repeated_articles_are_failed_rows_before_any_call(tmp_path, capsys):
    rows = [
        _article(0, "河童"),
        _article(1, "天狗", text=""),
        _article(2, "座敷童子", text=" \n\t "),
        _article(3, "河童"),  # the same title and text under another page id
        _article(0, "河童", text="河童は川に住む[1]。"),  # the same page, another text
        _article(4, "天狗"),
    ]
    articles = _articles(tmp_path / "articles.parquet", rows)
    out = tmp_path / "m.parquet"
    with ChatServer(answer=scripted) as server:
        assert main(_mcq(articles, out, server.url)) == 0
        generated = [c for c in server.calls if _task(c["messages"]) == "generate"]
    assert sorted(c["messages"][-1]["content"].splitlines()[0] for c in generated) == ["天狗", "河童"]
    failed = [f for f in pq.read_table(tmp_path / "m.failed.parquet").to_pylist() if f["step"] == "input"]
    assert [(f["page_id"], f["reason"]) for f in failed] == [
        (1, "empty text"),
        (2, "empty text"),
        (3, "a duplicate article: the same title and text as row 0, built once"),
        (0, "a duplicate article: the same page (jawiki 0) as row 0, built once"),
    ]
    table = pq.read_table(out).to_pylist()
    assert sorted(r["title"] for r in table) == ["天狗", "河童"] and len({r["id"] for r in table}) == 2
    assert "2 questions from 6 articles" in capsys.readouterr().out


# --- 8. no local path in the card or the provenance --------------------------------------------


@pytest.mark.slow
def test_inputs_are_named_by_file_name_and_checksum(tmp_path):
    directory = tmp_path / "set"
    articles = _built_set(tmp_path, directory)
    meta = read_provenance(directory / "test.parquet")
    assert meta["articles"] == {"file": "articles.parquet", "sha256": hashlib.sha256(articles.read_bytes()).hexdigest()}
    assert str(tmp_path) not in json.dumps(meta, ensure_ascii=False)
    assert main(["build", "card", str(directory), "--kind", "mcq", "--title", "T"]) == 0
    card = (directory / "README.md").read_text(encoding="utf-8")
    assert str(tmp_path) not in card and hashlib.sha256(articles.read_bytes()).hexdigest() in card


def test_freeform_drops_empty_and_repeated_items_before_any_call(tmp_path, capsys):
    from tests.builders.test_freeform import _argv

    rows = [
        {"wiki": "jawiki", "page_id": i, "title": t, "qid": q, "revision_id": 1, "text": text, "origin_wiki": "jawiki"}
        | {"n_wikis": 1}
        for i, (t, q, text) in enumerate(
            [("河童", "Q1", "河童は川の妖怪。"), ("天狗", "Q2", "  "), ("河童", "Q1", "河童は川の妖怪。")]
        )
    ]
    articles = tmp_path / "origin.parquet"
    pq.write_table(pa.Table.from_pylist(rows), articles)
    with ChatServer(answer=lambda messages: json.dumps({"question": "川に住む妖怪は？"})) as server:
        main(_argv(articles, tmp_path / "f.parquet", server.url, "--rounds", "0", "--retries", "0"))
        generated = [c for c in server.calls if c["messages"][-1]["content"] == "河童は川の妖怪。"]
    failed = pq.read_table(tmp_path / "f.failed.parquet").to_pylist()
    assert [(f["page_id"], f["reason"]) for f in failed if f["step"] == "input"] == [
        (1, "empty text"),
        (2, "a duplicate article: the same item (Q1) as row 0, built once"),
    ]
    assert all(c["messages"][-1]["content"].strip() for c in server.calls)  # nothing sent for the blank text
    assert len(generated) == 1  # the repeated item is generated once (no refinement rounds)


def test_a_file_beside_the_output_that_is_a_directory_is_refused_before_any_call(tmp_path, capsys):
    articles = _articles(tmp_path / "articles.parquet")
    out = tmp_path / "set" / "m.parquet"
    (tmp_path / "set" / "m.failed.parquet").mkdir(parents=True)
    with ChatServer(answer=scripted) as server:
        assert main(_mcq(articles, out, server.url)) == 2
        assert server.calls == []
    (line,) = _errors(capsys.readouterr().err)
    assert "m.failed.parquet beside it is a directory" in line and str(out) in line
    assert not out.exists()


@pytest.mark.slow
def test_build_card_refuses_a_directory_where_it_writes_and_a_set_there_twice(tmp_path, capsys):
    directory = tmp_path / "set"
    _built_set(tmp_path, directory)
    card = ["build", "card", str(directory), "--kind", "mcq", "--title", "T"]
    for name in ("README.md", "croissant.json"):
        (directory / name).mkdir()
        capsys.readouterr()
        assert main([*card, "--force"]) == 2
        assert _errors(capsys.readouterr().err) == [
            f"wikiorigin: error: {directory / name}: a directory, where the card writes a file; move it"
        ]
        assert not (directory / "README.md").is_file() and not (directory / "croissant.json").is_file()
        (directory / name).rmdir()
    (directory / "again.parquet").symlink_to(directory / "test.parquet")  # one set under two names
    assert main(card) == 2
    assert _errors(capsys.readouterr().err) == [
        f"wikiorigin: error: {directory}: again.parquet and test.parquet are one set twice (its rows would be "
        "counted and published twice): remove one"
    ]
    assert main(["build", "card", str(directory / "test.parquet"), "--kind", "mcq", "--title", "T"]) == 2
    assert "test.parquet: not a directory; give the directory" in capsys.readouterr().err
    assert not (directory / "README.md").exists()


@pytest.mark.parametrize("instructions", ["hand-written notes\n", '{"is": {"generate": "mine"}}\n'])
def test_someone_s_instructions_file_beside_a_freeform_set_is_kept(instructions, tmp_path, capsys):
    """OUT.instructions.json is replaced (or removed) by each free-form build: only one a build
    wrote, never someone's file of that name, refused before any call."""
    from tests.builders.test_freeform import IS, _argv as freeform, _corpus, scripted as answer

    articles = _corpus(tmp_path / "is.parquet", "iswiki", IS)
    out = tmp_path / "set" / "f.parquet"
    mine = tmp_path / "set" / "f.instructions.json"
    mine.parent.mkdir()
    mine.write_text(instructions, encoding="utf-8")
    with ChatServer(answer=answer) as server:
        assert main(freeform(articles, out, server.url)) == 2
        assert server.calls == []
    assert _errors(capsys.readouterr().err) == [
        f"wikiorigin: error: {mine}: not instructions a build wrote; a run would replace it: move it"
    ]
    assert mine.read_text(encoding="utf-8") == instructions and not out.exists()
    mine.unlink()
    with ChatServer(answer=answer) as server:
        assert main(freeform(articles, out, server.url)) == 0
        assert main(freeform(articles, out, server.url)) == 0  # its own file is replaced
    assert mine.is_file()
