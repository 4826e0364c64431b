"""Multiple-choice sets in other languages and scripts: a Greek set from the elwikivoyage
multistream sample (list page -> corpus -> MCQ set -> evaluation) and an English one from the
Simple English excerpt, built through the loopback OpenAI-compatible server and evaluated
with a tiny local model in both modes; labels files and their one-line errors.

It stays at the top of tests/ (not in tests/builders/) because it crosses the stages, dump to
evaluation, and is where the top-level module ``wikiorigin/labels.py`` is tested."""

import json
import re
import warnings
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.openai_server import ChatServer
from wikiorigin.builders.mcq import MCQConfig, build_mcq
from wikiorigin.corpora.articles import article_row
from wikiorigin.dumps.pages import iter_pages
from wikiorigin.errors import WikioriginError
from wikiorigin.labels import load_labels
from wikiorigin.llm import LLMClient, OpenAIBackend, RequestCache
from wikiorigin.schemas import ARTICLES, MCQ

HERE = Path(__file__).parent / "data" / "mcq-languages"
EL_DUMP = "elwikivoyage-pages-articles-multistream-p2566p2583.xml.bz2"
EL_LIST = "Περιοχές της Άπω Ανατολής"
SIMPLE = "simplewiki-pages-meta-history-excerpt-export-0.10.xml"


@pytest.fixture(scope="module")
def el_multistream(tmp_path_factory, data_dir):
    """The real elwikivoyage sample as a multistream dump, with our Greek list page and one
    Greek article with footnotes (tests/data/mcq-languages)."""
    from wikiorigin.testing import page_xml, write_multistream

    d = tmp_path_factory.mktemp("elwikivoyage")
    dump, index = d / "elwikivoyage-multistream.xml.bz2", d / "elwikivoyage-multistream-index.txt.bz2"
    extra = [
        page_xml(990001, EL_LIST, (HERE / "el-list-page.wiki").read_text(encoding="utf-8")),
        page_xml(990002, "Κουρίλες", (HERE / "el-kuril-page.wiki").read_text(encoding="utf-8")),
    ]
    write_multistream(data_dir / EL_DUMP, dump, index, extra_pages=extra)
    return dump, index


@pytest.fixture(scope="module")
def el_articles(el_multistream, tmp_path_factory):
    from wikiorigin.cli import main

    out = tmp_path_factory.mktemp("el-corpus") / "el-articles.parquet"
    assert (
        main(
            [
                "corpus",
                "yokai",
                "--dump",
                str(el_multistream[0]),
                "--index",
                str(el_multistream[1]),
                "--list-page",
                EL_LIST,
                "--out",
                str(out),
            ]
        )
        == 0
    )
    return out


@pytest.fixture(scope="module")
def en_articles(tmp_path_factory, data_dir):
    """The English excerpt's talk page (real text) as an article of simplewiki."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pages = [p for p in iter_pages(data_dir / SIMPLE) if p.title == "Talk:Cristiano Ronaldo"]
    rows = [article_row(p, "simplewiki", "simple.wikipedia.org", {})[0] for p in pages]
    path = tmp_path_factory.mktemp("en") / "en-articles.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=ARTICLES), path)
    return path


def _classes(prompt: str, after: str) -> list[str]:
    lines = prompt.split(after, 1)[1].strip("\n").splitlines()
    taken = []
    for line in lines:
        if not line.startswith("- "):
            break
        taken.append(line[2:].split(":", 1)[0])
    return taken


class Scripted:
    """Answers by task; the questions are made of the article's own words (its script)."""

    def __init__(self):
        self.systems: list[str] = []

    def __call__(self, messages):
        system, user = messages[0]["content"], messages[-1]["content"]
        self.systems.append(system)
        task = system.splitlines()[0].removeprefix("task: ")
        title = user.splitlines()[0]
        if task == "generate":
            words = list(dict.fromkeys(w for w in re.findall(r"\w{4,}", user) if not w.isdigit()))
            choices = words[1:5]
            return json.dumps(
                {"questions": [{"question": f"{title}: {words[0]}?", "choices": choices, "answer": choices[1]}]},
                ensure_ascii=False,
            )
        if task == "check":
            return json.dumps({"answer_index": 1})
        if task == "attribute":
            return json.dumps({"refs": [2, 99]})
        if task == "label":
            types = _classes(system, "type is one of these classes:")
            regions = _classes(system, "comes from, one of:") if "comes from" in system else []
            return json.dumps({"type": types[-1], **({"region": regions[0]} if regions else {})}, ensure_ascii=False)
        raise AssertionError(task)


def _client(server, tmp_path, model="gen"):
    return LLMClient(
        OpenAIBackend(model, base_url=server.url),
        RequestCache(tmp_path / f"{model}.sqlite"),
        concurrency=2,
        backoff=0.01,
    )


def _build_argv(articles, out, *extra):
    """The `build mcq` command line: ``articles`` into ``out`` by the model "gen", then ``extra``."""
    return ["build", "mcq", "--articles", str(articles), "--out", str(out), "--model", "gen", *extra]


def test_greek_set_from_the_multistream_sample(el_articles, tmp_path):
    out = tmp_path / "el" / "test.parquet"
    scripted = Scripted()
    config = MCQConfig(labels=str(HERE / "labels-el.json"), keep_unreferenced=True)
    with ChatServer(answer=scripted) as server:
        report = build_mcq(el_articles, out, _client(server, tmp_path), config=config)
    rows = pq.read_table(out).to_pylist()
    assert pq.read_table(out).schema.remove_metadata() == MCQ
    assert report.articles == 6 and report.kept == 6  # Τύνιδα and the five linked regions
    assert {r["language"] for r in rows} == {"el"}  # from the articles' wiki: no --language given
    for row in rows:
        assert re.search(r"[α-ωΑ-Ω]", row["question"]) and row["choices"][row["answer_index"]] == row["answer"]
        assert row["type"] == "ταξίδι" and row["region"] == "Ρωσική Άπω Ανατολή"  # classes of the file
    kuril = next(r for r in rows if r["title"] == "Κουρίλες")
    assert kuril["ref"] == [2] and kuril["refs_detail"] == ["Οδηγός ταξιδιού στη Σαχαλίνη, κεφάλαιο 4."]
    assert all(r["ref"] == [] for r in rows if r["title"] != "Κουρίλες")  # kept without footnotes
    systems = "\n".join(scripted.systems)
    assert "in Greek" in systems and "this creature" not in systems and "the region the article describes" in systems
    meta = json.loads(pq.read_schema(out).metadata[b"wikiorigin"])
    assert meta["language"] == "el" and meta["labels"] == "el-far-east"
    from wikiorigin.builders.dataset import write_card

    card = write_card(out.parent, "mcq", "Far East (el)", "").read_text()
    assert "language:\n- el\n" in card and f'"labels_sha1": "{meta["labels_sha1"]}"' in card  # which classes


def test_greek_without_footnotes_is_dropped_by_default(el_articles, tmp_path):
    with ChatServer(answer=Scripted()) as server:
        report = build_mcq(
            el_articles,
            tmp_path / "m.parquet",
            _client(server, tmp_path),
            config=MCQConfig(labels=str(HERE / "labels-el.json")),
        )
    assert report.kept == 1 and report.dropped == {"attribute": 5}  # only Κουρίλες has footnotes
    failed = pq.read_table(tmp_path / "m.failed.parquet").to_pylist()
    assert all(f["reason"].startswith("the article has no footnotes") for f in failed)


def test_english_set_and_language_in_the_cache_key(en_articles, tmp_path):
    scripted = Scripted()
    config = MCQConfig(language="en", labels="yokai-ja", keep_unreferenced=True)
    with ChatServer(answer=scripted) as server:
        client = _client(server, tmp_path)
        assert build_mcq(en_articles, tmp_path / "en.parquet", client, config=config).kept == 1
        calls = len(server.calls)
        # the same articles in another language are other requests (the language is in the key)
        build_mcq(
            en_articles,
            tmp_path / "ga.parquet",
            client,
            config=MCQConfig(language="ga", labels="yokai-ja", keep_unreferenced=True),
        )
        assert len(server.calls) == 2 * calls
    row = pq.read_table(tmp_path / "en.parquet").to_pylist()[0]
    assert row["language"] == "en" and row["wiki"] == "simplewiki" and row["region"] == "北海道"
    assert "in English" in scripted.systems[0] and "yokai" in scripted.systems[0]
    assert pq.read_table(tmp_path / "ga.parquet").to_pylist()[0]["language"] == "ga"


def test_origin_labels_need_a_region_column(el_articles, tmp_path):
    with ChatServer(answer=Scripted()) as server:
        with pytest.raises(WikioriginError, match="no region column"):
            build_mcq(el_articles, tmp_path / "m.parquet", _client(server, tmp_path), config=MCQConfig(labels="origin"))
        with pytest.raises(WikioriginError, match="a list-page corpus of elwikivoyage and no labels: give labels="):
            build_mcq(el_articles, tmp_path / "m.parquet", _client(server, tmp_path), config=MCQConfig())
        assert not server.calls


def test_unknown_language_is_one_line(el_articles, tmp_path, capsys):
    from wikiorigin.cli import main

    assert main(_build_argv(el_articles, tmp_path / "m.parquet", "--language", "xx-nowhere", "--dry-run")) == 2
    assert "error: --language xx-nowhere: not a Wikipedia edition" in capsys.readouterr().err


# -- labels files ------------------------------------------------------------------------


def test_presets():
    from wikiorigin.schemas import MCQ_REGIONS, MCQ_TYPES

    yokai = load_labels("yokai-ja")
    assert yokai.type_names == MCQ_TYPES and yokai.region_names == MCQ_REGIONS
    assert {c.letter: c.name for c in yokai.regions if c.letter}["K"] == "不明"
    origin = load_labels("origin")
    assert origin.region_source == "wikidata" and not origin.regions and len(origin.types) >= 5
    greek = load_labels(HERE / "labels-el.json")
    assert greek.types[0].letter == "Α" and greek.region_names[0] == "Ρωσική Άπω Ανατολή"


@pytest.mark.parametrize(
    "data, message",
    [
        (
            {"types": [{"class": "a", "description": "x"}, {"class": "b"}], "regions": "wikidata"},
            r"bad\.json: types\[1\]\.description: expected a one-line description of 'b'",
        ),
        (
            {"types": [{"class": "a", "description": "x"}, {"class": "", "description": "y"}], "regions": "wikidata"},
            r"bad\.json: types\[1\]\.class: expected a non-empty",
        ),
        (
            {
                "types": [{"class": "a", "description": "x"}, {"class": "b", "description": "y"}],
                "regions": [{"class": "r", "description": "z"}, {"class": "r", "description": "w"}],
            },
            r"bad\.json: regions\[1\]\.class: 'r' is given twice",
        ),
        (
            {
                "types": [{"class": "a", "description": "x", "letter": "AB"}, {"class": "b", "description": "y"}],
                "regions": "wikidata",
            },
            r"types\[0\]\.letter: expected one character",
        ),
        ({"types": "a, b", "regions": "wikidata"}, r"bad\.json: types: expected a list of two or more"),
        (
            {"types": [{"class": "a", "description": "x"}, {"class": "b", "description": "y"}], "region": "wikidata"},
            r"bad\.json: unknown field\(s\) region",
        ),
    ],
)
def test_bad_labels_file_is_one_line(tmp_path, data, message):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(WikioriginError, match=message):
        load_labels(path)


def test_bad_labels_on_the_command_line(el_articles, tmp_path, capsys):
    from wikiorigin.cli import main

    bad = tmp_path / "bad.json"
    bad.write_text(
        '{"types": [{"class": "a", "description": "x"}, {"class": "b", "description": 3}], "regions": "wikidata"}',
        encoding="utf-8",
    )
    with ChatServer(answer=Scripted()) as server:
        code = main(_build_argv(el_articles, tmp_path / "m.parquet", "--base-url", server.url, "--labels", str(bad)))
        assert code == 2 and not server.calls
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and f"{bad}: types[1].description" in err
    (tmp_path / "torn.json").write_text('{"types": [', encoding="utf-8")
    torn = _build_argv(el_articles, tmp_path / "m.parquet", "--labels", str(tmp_path / "torn.json"), "--dry-run")
    assert main(torn) == 2
    assert "torn.json: line 1 column 12: not JSON" in capsys.readouterr().err


# -- evaluation in the set's language ------------------------------------------------------


def _set(articles, folder, config):
    """The MCQ set the scripted generator builds from ``articles``: ``folder``/test.parquet."""
    with ChatServer(answer=Scripted()) as server:
        build_mcq(articles, folder / "test.parquet", _client(server, folder), config=config)
    return folder / "test.parquet"


@pytest.fixture(scope="module")
def el_set(el_articles, tmp_path_factory):
    config = MCQConfig(labels=str(HERE / "labels-el.json"), keep_unreferenced=True)
    return _set(el_articles, tmp_path_factory.mktemp("el-set"), config)


@pytest.fixture(scope="module")
def en_set(en_articles, tmp_path_factory):
    config = MCQConfig(language="en", keep_unreferenced=True, labels=str(HERE / "labels-el.json"))
    return _set(en_articles, tmp_path_factory.mktemp("en-set"), config)


def _eval_argv(questions, model_dir, mode, out, *extra):
    """The `eval mcq` command line: ``questions`` by the local model on the CPU in ``mode`` into ``out``."""
    return [
        "eval",
        "mcq",
        "--questions",
        str(questions),
        "--model",
        str(model_dir),
        "--device",
        "cpu",
        "--mode",
        mode,
        "--max-new-tokens",
        "8",
        "--out",
        str(out),
        *extra,
    ]


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["generate", "loglikelihood"])
def test_eval_greek_set_with_a_tiny_model(el_set, tiny_model_dir, tmp_path, mode, capsys):
    from wikiorigin.cli import main
    from wikiorigin.evaluators import mcq
    from wikiorigin.evaluators.signature import text_hash

    out = tmp_path / mode
    assert main(_eval_argv(el_set, tiny_model_dir, mode, out)) == 0
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["n"] == 6 and summary["settings"]["language"] == "el"
    assert set(summary["by_type"]) == {"ταξίδι"} and set(summary["by_region"]) == {"Ρωσική Άπω Ανατολή"}
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "| ταξίδι | 6 |" in report and "| Ρωσική Άπω Ανατολή | 6 |" in report
    if mode == "generate":
        assert summary["settings"]["instruction"] == text_hash(mcq.INSTRUCTIONS["el"])
        assert summary["parser_version"] == mcq.PARSER_VERSION
    else:
        assert summary["settings"]["instruction"] == text_hash("\nΑπάντηση:")
        assert 0.0 <= summary["acc_norm"] <= 1.0


@pytest.mark.parametrize("mode", ["generate", "loglikelihood"])
def test_eval_english_set_with_a_tiny_model(en_set, tiny_model_dir, tmp_path, mode):
    from wikiorigin.cli import main
    from wikiorigin.evaluators.signature import text_hash

    out = tmp_path / mode
    cue = ["--answer-cue", "\\nReply:"] if mode == "loglikelihood" else []
    assert main(_eval_argv(en_set, tiny_model_dir, mode, out, *cue)) == 0
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["n"] == 1 and summary["settings"]["language"] == "en"
    if mode == "loglikelihood":  # a cue of one's own, recorded in the signature
        assert summary["settings"]["instruction"] == text_hash("\nReply:")


def test_loglikelihood_requests_in_another_language(el_set):
    from wikiorigin.evaluators import mcq

    rows = mcq.read_questions(el_set)
    seen = []

    class Recorder:
        name = "recorder"

        def loglikelihood(self, requests, batch_size=None):
            seen.extend(requests)
            return [(-float(len(c)), False) for _, c in requests]

    items = mcq.evaluate_loglikelihood(rows, Recorder(), language="el")
    assert seen[0][0].endswith("\nΑπάντηση:") and seen[0][1] == " " + rows[0]["choices"][0]
    assert all(i["region"] == "Ρωσική Άπω Ανατολή" for i in items)  # kept, not cleaned into Japan's
    mcq.evaluate_loglikelihood(rows[:1], Recorder(), language="th")  # unspaced, a cue of its own: no space
    assert seen[-1][0].endswith("\nคำตอบ:") and not seen[-1][1].startswith(" ")
    mcq.evaluate_loglikelihood(rows[:1], Recorder(), language="bo")  # no table entry: English cue and space
    assert seen[-1][0].endswith("\nAnswer:") and seen[-1][1].startswith(" ")


def test_language_names_and_codes():
    from wikiorigin.languages import language_name, open_language, wiki_language

    assert [language_name(c) for c in ("el", "ko", "ga", "et", "ca")] == [
        "Greek",
        "Korean",
        "Irish",
        "Estonian",
        "Catalan",
    ]
    assert open_language("simple") == "en" and open_language("elwiki") == "el"
    assert wiki_language("elwikivoyage") == "el" and wiki_language("nowhere") is None
    with pytest.raises(WikioriginError, match="not an open Wikipedia"):
        open_language("aawiki")  # closed


def test_eval_with_an_unknown_language_is_one_line(el_set, tmp_path, capsys):
    from wikiorigin.cli import main

    assert (
        main(
            [
                "eval",
                "mcq",
                "--questions",
                str(el_set),
                "--responses",
                str(el_set),
                "--language",
                "xx-nowhere",
                "--out",
                str(tmp_path / "r"),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert err.startswith("wikiorigin: error: --language xx-nowhere: ") and len(err.splitlines()) == 1
    assert "joined" not in err  # said before any file is read
