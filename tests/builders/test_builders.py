"""The builders as objects (``wo.MCQBuilder``, ``wo.FreeformBuilder``, ``wo.PreferenceBuilder``):
``Builder(config).run(inputs, llm)`` on Greek and English articles with a plain function as the
chat model, one report type, the dropped rows, the provenance and the lock on save; the
language from the articles or asked for; ``build_*`` the same run and saved."""

import dataclasses
import json
import re

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import wikiorigin as wo
from tests.builders.test_freeform import _corpus
from tests.test_mcq_languages import HERE, Scripted, el_articles, el_multistream  # noqa: F401  (fixtures)
from wikiorigin.builders.result import BuildReport, failed_path
from wikiorigin.errors import ParameterError, WikioriginError
from wikiorigin.files import read_provenance
from wikiorigin.schemas import ARTICLES, FAILED, FREEFORM, FREEFORM_CRITERIA as CRITERIA, MCQ

EN_TEXT = (
    "The boggart is a household spirit of English folklore [1]. It lives in the house or the fields "
    "and turns malevolent when it is named. Farmers in Lancashire told of boggarts that soured the milk."
)


@pytest.fixture
def en_articles(tmp_path):
    rows = [
        {
            "wiki": "enwiki",
            "page_id": i,
            "title": title,
            "anchor": None,
            "qid": None,
            "revision_id": 10 + i,
            "revision_timestamp": None,
            "url": f"https://en.wikipedia.org/wiki/{title}",
            "text": EN_TEXT + title,
            "sections": [],
            "references": [
                {"number": n, "group": "", "text": f"Briggs, A Dictionary of Fairies, p. {n}."} for n in (1, 2)
            ],
            "categories": [],
        }
        for i, title in enumerate(["Boggart", "Brownie"])
    ]
    path = tmp_path / "en-articles.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=ARTICLES), path)
    return path


def _llm(tmp_path, scripted, model="gen"):
    return wo.LLMClient(wo.FunctionBackend(scripted, model=model), wo.llm.RequestCache(tmp_path / f"{model}.sqlite"))


@pytest.mark.parametrize("which,language", [("el", "el"), ("en", "en")])
def test_the_mcq_builder_twin(which, language, el_articles, en_articles, tmp_path):  # noqa: F811
    articles = el_articles if which == "el" else en_articles
    config = wo.MCQConfig(labels=str(HERE / "labels-el.json"), keep_unreferenced=True)
    scripted = Scripted()
    result = wo.MCQBuilder(config).run(articles, _llm(tmp_path, scripted))  # the language from the articles
    report = result.report
    assert isinstance(report, BuildReport) and report.builder == "mcq" and report.kept == len(result.rows) > 0
    assert report.articles == (6 if which == "el" else 2) and report.usage["generator"]["calls"] > 0
    assert {r["language"] for r in result.rows} == {language} and result.meta["language"] == language
    assert f"in {'Greek' if which == 'el' else 'English'}" in scripted.systems[0]  # prompts name the language
    out = result.save(tmp_path / "set" / "mcq.parquet")
    assert pq.read_table(out).schema.remove_metadata() == MCQ and pq.read_table(out).num_rows == report.kept
    assert pq.read_table(failed_path(out)).schema.remove_metadata() == FAILED
    meta = read_provenance(out)
    assert (meta["stage"], meta["builder"], meta["language"]) == ("build", "mcq", language)
    assert read_provenance(failed_path(out)) == meta  # one provenance for the set and its dropped rows
    assert not (tmp_path / "set" / "mcq.parquet.lock").exists()


def test_build_mcq_is_the_builder_run_and_saved(en_articles, tmp_path):
    config = wo.MCQConfig(labels=str(HERE / "labels-el.json"), keep_unreferenced=True)
    llm = _llm(tmp_path, Scripted())
    report = wo.build_mcq(en_articles, tmp_path / "a.parquet", llm, config=config)
    result = wo.MCQBuilder(config).run(en_articles, llm)
    assert dataclasses.replace(report, usage={}) == dataclasses.replace(result.report, usage={})
    result.save(tmp_path / "b.parquet")
    assert pq.read_table(tmp_path / "a.parquet").equals(pq.read_table(tmp_path / "b.parquet"))


def test_the_language_is_taken_or_asked_for(en_articles, tmp_path):
    table = pq.read_table(en_articles).to_pylist()
    for row in table:
        row["wiki"] = "nowhere"
    unknown = tmp_path / "unknown.parquet"
    pq.write_table(pa.Table.from_pylist(table, schema=ARTICLES), unknown)
    config = wo.MCQConfig(labels=str(HERE / "labels-el.json"), keep_unreferenced=True)
    llm = _llm(tmp_path, Scripted())
    with pytest.raises(ParameterError, match=r"cannot tell the language of wiki 'nowhere': give language=$"):
        wo.MCQBuilder(config).run(unknown, llm)
    empty = tmp_path / "empty.parquet"
    pq.write_table(pa.Table.from_pylist([], schema=ARTICLES), empty)
    with pytest.raises(ParameterError, match=r"no articles to tell the language of the questions by: give language="):
        wo.MCQBuilder(config).run(empty, llm)  # no Japanese fallback
    result = wo.MCQBuilder(dataclasses.replace(config, language="ga")).run(unknown, llm)
    assert {r["language"] for r in result.rows} == {"ga"}
    assert not llm.usage.failures


def test_save_is_locked_and_checks_its_output(en_articles, tmp_path):
    from wikiorigin.llm.lock import RunLock

    config = wo.MCQConfig(labels=str(HERE / "labels-el.json"), keep_unreferenced=True)
    result = wo.MCQBuilder(config).run(en_articles, _llm(tmp_path, Scripted()))
    with RunLock(tmp_path / "m.parquet"):
        with pytest.raises(WikioriginError, match="m.parquet is being written by another run"):
            result.save(tmp_path / "m.parquet")
    with pytest.raises(WikioriginError, match="the output would overwrite the input"):
        result.save(en_articles)
    with RunLock(tmp_path / "m.parquet") as lock:
        result.save(tmp_path / "m.parquet", lock=lock)
    assert pq.read_table(tmp_path / "m.parquet").num_rows == result.report.kept


def _freeform_scripted(messages):
    """Questions of the article's own words, every check passed."""
    task = messages[0]["content"].splitlines()[0].removeprefix("task: ")
    user = messages[-1]["content"]
    if task in ("freeform-generate", "freeform-refine"):
        return json.dumps({"question": "; ".join(re.findall(r"\w{5,}", user)[1:3]) + "?"}, ensure_ascii=False)
    if task == "freeform-translate":
        return json.dumps({"question_en": f"Which being? ({user[:20]})", "answer_en": "the being"})
    if task == "freeform-score":
        return json.dumps({c: 5 for c in CRITERIA})
    if task == "freeform-giveaway":
        return json.dumps({"gives_away": False, "reason": "fine"})
    if task == "freeform-instructions":
        return json.dumps(
            {
                "generate": "Γράψε μια ερώτηση για «{title}» ({cutoff}).",
                "refine": "Βελτίωσε: {question} «{title}» ({cutoff}).",
            },
            ensure_ascii=False,
        )
    raise AssertionError(task)


@pytest.mark.parametrize(
    "wiki,items",
    [
        (
            "elwiki",
            {
                "Λάμια": ("Q1", "Η Λάμια είναι τέρας της ελληνικής μυθολογίας που τρώει παιδιά."),
                "Καλικάντζαρος": ("Q2", "Οι καλικάντζαροι βγαίνουν από τη γη τα Χριστούγεννα."),
            },
        ),
        ("enwiki", {"Boggart": ("Q3", EN_TEXT), "Brownie": ("Q4", "A brownie is a household spirit of Scotland.")}),
    ],
)
def test_the_freeform_builder_twin(wiki, items, tmp_path):
    articles = _corpus(tmp_path / "articles.parquet", wiki, items)
    result = wo.FreeformBuilder(wo.FreeformConfig(rounds=1)).run(articles, _llm(tmp_path, _freeform_scripted))
    assert result.report.builder == "freeform" and result.report.kept == 2 and result.report.generated == 2
    assert {r["language"] for r in result.rows} == {wiki.removesuffix("wiki")}
    out = result.save(tmp_path / "freeform.parquet")
    assert pq.read_table(out).schema.remove_metadata() == FREEFORM
    meta = read_provenance(out)
    assert meta["builder"] == "freeform" and meta["instructions"][0]["language"] == wiki.removesuffix("wiki")
    assert wo.build_freeform(
        articles, tmp_path / "again.parquet", _llm(tmp_path, _freeform_scripted), wo.FreeformConfig(rounds=1)
    ) == {"articles": 2, "kept": 2}


def test_the_preference_builder_twin(tmp_path, data_dir):
    care = data_dir.parent / "care-Japanese-test.json"
    rows = json.loads(care.read_text(encoding="utf-8"))[:3]
    questions = tmp_path / "care.json"
    questions.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")

    def answer(messages):
        if messages[0]["content"].startswith("task: rate"):
            return "Rating: [[9]]" if "long answer" in messages[-1]["content"] else "Rating: [[2]]"
        return "?"

    responders = {"a": _llm(tmp_path, lambda m: "a long answer", "a"), "b": _llm(tmp_path, lambda m: "no", "b")}
    judge = _llm(tmp_path, answer, "judge")
    with pytest.raises(ParameterError, match=r"care\.json: the questions say no language: give language= "):
        wo.PreferenceBuilder().run(questions, responders, judge)  # CARE's files say none: no Japanese default
    result = wo.PreferenceBuilder(wo.PreferenceConfig(language="ja")).run(questions, responders, judge)
    assert (result.report.questions, result.report.kept, result.report.generated) == (3, 3, 6)
    assert set(result.report.usage) == {"a", "b", "judge"}
    out = result.save(tmp_path / "prefs.parquet")
    assert {r["language"] for r in pq.read_table(out).to_pylist()} == {"ja"}
    assert read_provenance(out)["language"] == "ja"
