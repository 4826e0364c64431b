"""Inputs of several languages: a corpus mixing wikis of several languages, and a
set whose rows are in several languages, are one-line errors asking for ``--language``, not a
silent pick (the alphabetically first wiki's language, or the Japanese instruction)."""

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.openai_server import ChatServer
from wikiorigin.builders.mcq import MCQConfig, plan_mcq
from wikiorigin.cli import main
from wikiorigin.evaluators.mcq import rows_language
from wikiorigin.llm import LLMClient, OpenAIBackend, RequestCache
from wikiorigin.schemas import ARTICLES
from wikiorigin.testing import mcq_row, write_mcq


def _article(wiki: str, page_id: int) -> dict:
    return {
        "wiki": wiki,
        "page_id": page_id,
        "title": f"T{page_id}",
        "anchor": None,
        "qid": None,
        "revision_id": 1,
        "revision_timestamp": None,
        "url": f"https://example.org/{page_id}",
        "text": "text [1]",
        "sections": [],
        "references": [],
        "categories": [],
    }


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    path = tmp_path_factory.mktemp("mixed") / "articles.parquet"
    rows = [_article("jawiki", 1), _article("elwiki", 2), _article("jawiki", 3)]
    pq.write_table(pa.Table.from_pylist(rows, schema=ARTICLES), path)
    return path


def test_build_on_a_corpus_of_several_languages_asks_for_language(mixed, tmp_path, capsys):
    with ChatServer(answer=lambda messages: "{}") as server:
        args = [
            "build",
            "mcq",
            "--articles",
            str(mixed),
            "--out",
            str(tmp_path / "m.parquet"),
            "--model",
            "gen",
            "--base-url",
            server.url,
            "--cache",
            str(tmp_path / "c.sqlite"),
        ]
        for extra in (["--dry-run"], [], ["--labels", "yokai-ja", "--dry-run"]):
            assert main(args + extra) == 2
            err = capsys.readouterr().err.strip()
            assert len(err.splitlines()) == 1 and str(mixed) in err
            assert "several languages (elwiki: el, jawiki: ja): give --language" in err
        assert not server.calls
        # --language decides: the default labels follow it (yokai-ja for Japanese)
        assert main(args + ["--language", "ja", "--dry-run"]) == 0
        assert not server.calls


def test_same_language_wikis_are_not_mixed(tmp_path):
    path = tmp_path / "en.parquet"
    pq.write_table(pa.Table.from_pylist([_article("enwiki", 1), _article("simplewiki", 2)], schema=ARTICLES), path)
    client = LLMClient(OpenAIBackend("gen", base_url="http://127.0.0.1:9"), RequestCache(tmp_path / "c.sqlite"))
    plan = plan_mcq(path, client, MCQConfig(labels="yokai-ja"))
    assert plan["requests"] == 2


def _questions(path, languages):
    rows = []
    for i, language in enumerate(languages):
        choices = [f"o{i}-{k}" for k in range(4)]
        rows.append(
            mcq_row(
                i,
                f"q{i}?",
                choices,
                0,
                type="t",
                region="r",
                refs_detail=["x"],
                title=f"T{i}",
                wiki="w",
                language=language,
            )
        )
    write_mcq(path, rows)
    return path


def test_eval_of_rows_in_several_languages_asks_for_language(tmp_path, capsys):
    questions = _questions(tmp_path / "q.parquet", ["el", "ja", "el", None])
    assert main(["eval", "mcq", "--responses", str(questions), "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert f"{questions}: rows in several languages (el 2, ja 1, none 1): give --language" in err
    assert not (tmp_path / "r").exists()


def test_rows_language():
    """The rows' own language, or None: the library assumes none (a prompt to write then asks
    for ``language=``; the command line says ``--language``)."""
    from wikiorigin.errors import ParameterError
    from wikiorigin.evaluators.mcq import prompt_language

    assert rows_language([{"question": "a row of no language"}] * 2) is None  # no language column
    assert rows_language([{"language": None}]) is None and rows_language([{"language": "el"}] * 3) == "el"
    with pytest.raises(ParameterError, match=r"^q\.parquet: rows in several languages \(el 1, ko 1\): give language="):
        rows_language([{"language": "el"}, {"language": "ko"}], source="q.parquet")
    assert rows_language([]) is None
    with pytest.raises(ParameterError, match=r"^q\.json: the rows say no language .* give language="):
        prompt_language([{"question": "q"}], source="q.json")
    assert prompt_language([{"question": "q"}], "elwiki") == "el"  # the one given, as an open Wikipedia's
