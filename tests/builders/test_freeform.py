import json
import re
import warnings
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.openai_server import ChatServer
from wikiorigin.builders.freeform import FreeformConfig, build_freeform, instructions_path, plan_freeform
from wikiorigin.builders.freeform_prompts import PLACEHOLDERS, bundled_instructions, bundled_languages, placeholders
from wikiorigin.builders.prompts import FREEFORM_PROMPTS
from wikiorigin.corpora.articles import article_row
from wikiorigin.dumps.pages import iter_pages
from wikiorigin.files import read_provenance
from wikiorigin.llm import LLMClient, OpenAIBackend, RequestCache
from wikiorigin.schemas import FAILED, FREEFORM, FREEFORM_CRITERIA as CRITERIA, ORIGIN_ARTICLES

ROOT = Path(__file__).resolve().parents[2]
JA = "jawiki-20230501-pages-articles-multistream_first100k-lines.xml.xz"
ITEMS = {
    "アンパサンド": ("Q11212", "Ampersand", ["&", "and sign"]),
    "地理": ("Q1071", "Geography", []),
    "音楽家": ("Q639669", "Musician", ["music artist"]),
    "個人": ("Q795052", "Individual", []),
}
# Two small corpora of other origin editions: Georgian (bundled instructions) and Icelandic (none).
KA = {
    "ხაჭაპური": ("Q1265070", "ხაჭაპური არის ქართული ცომეული კერძი, რომელიც ყველით ცხვება."),
    "ჩურჩხელა": ("Q1345003", "ჩურჩხელა არის ქართული ტკბილეული ნიგვზისა და ყურძნის ტკბილისგან."),
}
IS = {
    "Hákarl": ("Q1147183", "Hákarl er kæstur hákarl, þjóðlegur íslenskur matur."),
    "Skyr": ("Q1143616", "Skyr er íslensk mjólkurafurð, lík jógúrt."),
}
TITLES = [*ITEMS, *KA, *IS]
# What the scripted generator answers when asked for Icelandic instructions (placeholders kept).
IS_INSTRUCTIONS = {
    "generate": "Þú semur spurningar. Svarið er nákvæmlega „{title}“; ekkert eftir {cutoff}.",
    "refine": "Þú bætir spurningar. Svarið er „{title}“; ekkert eftir {cutoff}.\nSpurningin: {question}",
}


@pytest.fixture(scope="module")
def origin_articles(tmp_path_factory, data_dir):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pages = [p for p in iter_pages(data_dir / JA, namespaces=[0]) if p.title in ITEMS]
    rows = []
    for page in pages:
        qid, english, aliases = ITEMS[page.title]
        row = article_row(page, "jawiki", "ja.wikipedia.org", {}, qid=qid)[0]
        row.update(
            label_en=english.lower(),
            aliases=[page.title, *aliases],
            enwiki_title=english,
            origin_wiki="jawiki",
            n_wikis=3,
        )
        rows.append(row)
    path = tmp_path_factory.mktemp("origin") / "articles.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=ORIGIN_ARTICLES), path)
    return path


def _corpus(path: Path, wiki: str, items: dict) -> Path:
    """A tiny origin corpus of ``wiki``: one article per item, its text a sentence."""
    rows = [
        {
            "wiki": wiki,
            "page_id": i + 1,
            "title": title,
            "qid": qid,
            "revision_id": 100 + i,
            "text": text,
            "origin_wiki": wiki,
            "n_wikis": 2,
            "aliases": [],
        }
        for i, (title, (qid, text)) in enumerate(items.items())
    ]
    pq.write_table(pa.Table.from_pylist(rows, schema=ORIGIN_ARTICLES), path)
    return path


@pytest.fixture
def ka_articles(tmp_path):
    return _corpus(tmp_path / "ka-articles.parquet", "kawiki", KA)


@pytest.fixture
def is_articles(tmp_path):
    return _corpus(tmp_path / "is-articles.parquet", "iswiki", IS)


def _task(call: dict) -> str:
    return call["messages"][0]["content"].splitlines()[0].removeprefix("task: ")


def _asked(server, task: str) -> list[dict]:
    return [c for c in server.calls if "messages" in c and _task(c) == task]


def _argv(articles, out, url, *extra, model="gen"):
    """The `build freeform` command line: ``articles`` into ``out`` by ``model`` at ``url``, cached beside ``out``."""
    return [
        "build",
        "freeform",
        "--articles",
        str(articles),
        "--out",
        str(out),
        "--model",
        model,
        "--base-url",
        url,
        "--cache",
        str(out.with_name("c.sqlite")),
        *extra,
    ]


def _llm(server, cache):
    """The generator "gen" at ``server``, its requests cached in ``cache``."""
    return LLMClient(OpenAIBackend("gen", base_url=server.url), RequestCache(cache))


def scripted(messages):
    """The generator: 個人's question names its answer (a leak), 音楽家's scores 4 on one
    criterion, 地理's gives its answer away; the rest pass every step."""
    task = messages[0]["content"].splitlines()[0].removeprefix("task: ")
    system, user = messages[0]["content"], messages[-1]["content"]
    if task == "freeform-instructions":
        return json.dumps(IS_INSTRUCTIONS, ensure_ascii=False)
    if task in ("freeform-generate", "freeform-refine"):
        title = next(t for t in TITLES if t in system)
        if title == "個人":  # the question names its answer
            return json.dumps({"question": "個人とは何か。"}, ensure_ascii=False)
        if task == "freeform-generate":
            return json.dumps({"question": "草案の問い"}, ensure_ascii=False)
        return json.dumps({"question": f"{len(title)}文字のこの言葉は何か。"}, ensure_ascii=False)
    if task == "freeform-translate":
        return json.dumps({"question_en": f"Which word is this? ({user})", "answer_en": "the answer"})
    if task == "freeform-score":
        low = "3文字" in user  # 音楽家 (3 characters) scores 4 on one criterion
        return json.dumps({c: (4 if low and c == "not_trivial" else 5) for c in CRITERIA})
    if task == "freeform-giveaway":
        if "Answer: 地理" in user:
            return json.dumps({"gives_away": True, "reason": "its length and script leave one word"})
        return json.dumps({"gives_away": False, "reason": "it asks for knowledge of the subject"})
    raise AssertionError(task)


@pytest.fixture(scope="module")
def built(origin_articles, tmp_path_factory):
    """The Japanese corpus built with the defaults but 2 rounds: counts, output, calls made."""
    tmp = tmp_path_factory.mktemp("built")
    with ChatServer(answer=scripted) as server:
        llm = _llm(server, tmp / "c.sqlite")
        counts = build_freeform(origin_articles, tmp / "freeform.parquet", llm, FreeformConfig(rounds=2))
        calls = list(server.calls)
    return {"counts": counts, "out": tmp / "freeform.parquet", "calls": calls}


def test_build_freeform(built):
    refines = [c for c in built["calls"] if _task(c) == "freeform-refine"]
    assert len(refines) == 7  # 2 rounds x 4, less one: 個人 asked the same twice, a cache hit
    assert built["counts"] == {"articles": 4, "leak": 1, "score": 1, "giveaway": 1, "kept": 1}
    table = pq.read_table(built["out"])
    assert table.schema.remove_metadata() == FREEFORM
    rows = {r["title"]: r for r in table.to_pylist()}
    assert set(rows) == {"アンパサンド"}
    amp = rows["アンパサンド"]
    assert amp["answers"] == ["アンパサンド", "Ampersand", "the answer", "ampersand", "&", "and sign"]
    assert amp["question_source"] == "6文字のこの言葉は何か。" and amp["has_enwiki"]
    assert amp["criteria"] == {c: 5 for c in CRITERIA} and amp["language"] == "ja"
    table = pq.read_table(built["out"].with_name("freeform.failed.parquet"))
    assert table.schema.remove_metadata() == FAILED
    failed = {f["source"]: f for f in table.to_pylist()}
    assert failed["音楽家"]["reason"] == "below 5 on not_trivial=4" and failed["音楽家"]["step"] == "score"
    assert (
        failed["個人"]["reason"] == "the question holds the answer '個人' (title)" and failed["個人"]["step"] == "leak"
    )
    assert (failed["個人"]["qid"], failed["個人"]["wiki"], failed["個人"]["model"]) == ("Q795052", "jawiki", "gen")
    made = json.loads(failed["音楽家"]["item"])
    assert made["question_source"] == "3文字のこの言葉は何か。" and made["criteria"]["not_trivial"] == 4


def test_each_question_names_its_source_article(built, origin_articles, ka_articles, tmp_path):
    """Attribution: the card says each row names its source article, so the
    free-form set has ``url``: the corpus's, else made from wiki and title as the corpus makes it."""
    urls = {r["title"]: r["url"] for r in pq.read_table(origin_articles).to_pylist()}
    rows = pq.read_table(built["out"]).to_pylist()
    assert [r["url"] for r in rows] == [urls["アンパサンド"]]
    assert (
        urls["アンパサンド"] == "https://ja.wikipedia.org/wiki/%E3%82%A2%E3%83%B3%E3%83%91%E3%82%B5%E3%83%B3%E3%83%89"
    )
    with ChatServer(answer=scripted) as server:  # a corpus without urls (the column null)
        llm = _llm(server, tmp_path / "c.sqlite")
        build_freeform(ka_articles, tmp_path / "ka.parquet", llm, FreeformConfig(rounds=0))
    from urllib.parse import unquote

    made = sorted(unquote(r["url"]) for r in pq.read_table(tmp_path / "ka.parquet").to_pylist())
    assert made == sorted(f"https://ka.wikipedia.org/wiki/{title}" for title in KA)


def test_the_giveaway_step_drops_a_question_with_its_reason(built):
    failed = {f["source"]: f for f in pq.read_table(built["out"].with_name("freeform.failed.parquet")).to_pylist()}
    assert failed["地理"]["step"] == "giveaway"
    assert failed["地理"]["reason"] == "the question gives its answer away: its length and script leave one word"
    assert json.loads(failed["地理"]["item"])["criteria"] == {c: 5 for c in CRITERIA}  # it passed the scores
    asked = [c for c in built["calls"] if _task(c) == "freeform-giveaway"]
    assert len(asked) == 2  # only what passed the scores: アンパサンド and 地理
    user = next(c["messages"][1]["content"] for c in asked if "Answer: 地理" in c["messages"][1]["content"])
    assert user.startswith("Question (Japanese): 2文字のこの言葉は何か。\nQuestion in English: ")


def test_japanese_instructions_for_a_japanese_corpus(built):
    ja = bundled_instructions("ja")
    for task in ("freeform-generate", "freeform-refine"):
        systems = [c["messages"][0]["content"] for c in built["calls"] if _task(c) == task]
        assert systems and all(ja.generate.split("「")[0] in s or ja.refine.split("「")[0] in s for s in systems)
        assert not any("You write quiz questions" in s or "You improve quiz" in s for s in systems)
    meta = read_provenance(built["out"])
    assert meta["instructions"] == [{"language": "ja", "source": "bundled", "sha1": ja.sha1}]
    assert meta["params"] == {"temperature": 0.7} and meta["rounds"] == 2
    generate = next(c for c in built["calls"] if _task(c) == "freeform-generate")
    assert generate["temperature"] == 0.7
    assert not instructions_path(built["out"]).exists()


def test_refinement_sees_the_article_and_the_question(built, origin_articles):
    texts = {r["title"]: r["text"][:6000] for r in pq.read_table(origin_articles).to_pylist()}
    refines = [c for c in built["calls"] if _task(c) == "freeform-refine"]
    for call in refines:
        system, user = call["messages"][0]["content"], call["messages"][1]["content"]
        title = next(t for t in ITEMS if t in system)
        assert user == texts[title] and len(user) > 100
        assert "問題: " in system and call["temperature"] == 0.7
    first = next(c for c in refines if "アンパサンド" in c["messages"][0]["content"])
    assert "\n問題: 草案の問い\n" in first["messages"][0]["content"]


def test_georgian_instructions_for_a_georgian_corpus(ka_articles, tmp_path):
    out = tmp_path / "ka.parquet"
    with ChatServer(answer=scripted) as server:
        llm = _llm(server, tmp_path / "c.sqlite")
        counts = build_freeform(ka_articles, out, llm, FreeformConfig(rounds=1))
        generate, refine = _asked(server, "freeform-generate"), _asked(server, "freeform-refine")
        assert not _asked(server, "freeform-instructions")
    assert counts == {"articles": 2, "kept": 2}
    assert len(generate) == len(refine) == 2
    for call in generate + refine:
        system = call["messages"][0]["content"]
        assert "შენ " in system and "ვიქტორინის კითხვებს" in system and "You " not in system
    assert all("კითხვა: " in c["messages"][0]["content"] for c in refine)
    assert {c["messages"][1]["content"] for c in refine} == {text for _, text in KA.values()}
    assert {r["language"] for r in pq.read_table(out).to_pylist()} == {"ka"}
    assert read_provenance(out)["instructions"] == [
        {"language": "ka", "source": "bundled", "sha1": bundled_instructions("ka").sha1}
    ]


def test_an_unbundled_language_is_translated_once_and_cached(is_articles, tmp_path):
    cache = tmp_path / "c.sqlite"
    with ChatServer(answer=scripted) as server:
        llm = _llm(server, cache)
        plan = plan_freeform(is_articles, llm, FreeformConfig())
        assert (plan["calls"], plan["requests"]) == (3, 3)  # the translation, then 2 generations
        counts = build_freeform(is_articles, tmp_path / "is.parquet", llm, FreeformConfig(rounds=1))
        translations = _asked(server, "freeform-instructions")
        assert len(translations) == 1
        assert "into Icelandic (is)" in translations[0]["messages"][0]["content"]
        assert "{title}" in translations[0]["messages"][1]["content"]  # the English source, placeholders kept
        systems = [c["messages"][0]["content"] for c in _asked(server, "freeform-generate")]
        assert len(systems) == 2 and all("Þú semur spurningar. Svarið er nákvæmlega „" in s for s in systems)
        assert all("Spurningin: " in c["messages"][0]["content"] for c in _asked(server, "freeform-refine"))
        assert counts["kept"] == 2
        server.calls.clear()
        again = _llm(server, cache)
        assert plan_freeform(is_articles, again, FreeformConfig(rounds=1))["calls"] == 0
        build_freeform(is_articles, tmp_path / "again.parquet", again, FreeformConfig(rounds=1))
        assert server.calls == []  # a re-run: the translation and every step from the cache
    saved = json.loads(instructions_path(tmp_path / "is.parquet").read_text(encoding="utf-8"))
    assert saved["is"]["generate"] == IS_INSTRUCTIONS["generate"] and "gen" in saved["is"]["note"]
    assert instructions_path(tmp_path / "is.parquet").name == "is.instructions.json"
    meta = read_provenance(tmp_path / "is.parquet")
    [used] = meta["instructions"]
    assert used["language"] == "is" and used["source"] == "translated by gen"
    assert used["file"] == "is.instructions.json" and len(used["sha1"]) == 40


def test_a_translation_that_loses_a_placeholder_is_asked_again(is_articles, tmp_path):
    broken = {**IS_INSTRUCTIONS, "refine": IS_INSTRUCTIONS["refine"].replace("{question}", "{spurning}")}
    answers = iter([json.dumps(broken, ensure_ascii=False)])

    def answer(messages):
        if _task({"messages": messages}) == "freeform-instructions" and len(messages) == 2:
            return next(answers)
        return scripted(messages)

    with ChatServer(answer=answer) as server:
        llm = _llm(server, tmp_path / "c.sqlite")
        counts = build_freeform(is_articles, tmp_path / "is.parquet", llm, FreeformConfig(rounds=1))
        assert len(_asked(server, "freeform-instructions")) == 2 and llm.usage.repairs == 1
    assert counts["kept"] == 2


def test_a_failed_translation_drops_the_language_s_articles(is_articles, tmp_path):
    def answer(messages):
        return "not JSON" if _task({"messages": messages}) == "freeform-instructions" else scripted(messages)

    with ChatServer(answer=answer) as server:
        llm = _llm(server, tmp_path / "c.sqlite")
        counts = build_freeform(is_articles, tmp_path / "is.parquet", llm, FreeformConfig(rounds=1))
        assert not _asked(server, "freeform-generate")
    assert counts == {"articles": 2, "instructions": 2, "kept": 0}
    failed = pq.read_table(tmp_path / "is.failed.parquet").to_pylist()
    assert {f["step"] for f in failed} == {"instructions"}
    assert failed[0]["reason"].startswith("no is instructions: the translation failed: invalid JSON after one repair")
    assert not instructions_path(tmp_path / "is.parquet").exists()


def test_instructions_en(ka_articles, tmp_path, capsys):
    from wikiorigin.cli import main

    out = tmp_path / "f.parquet"
    with ChatServer(answer=scripted) as server:
        assert main(_argv(ka_articles, out, server.url, "--rounds", "1", "--instructions", "en")) == 0
        systems = [c["messages"][0]["content"] for c in _asked(server, "freeform-generate")]
        assert not _asked(server, "freeform-instructions")
    assert len(systems) == 2 and all("You write quiz questions" in s and "ვიქტორინის" not in s for s in systems)
    english = bundled_instructions("en")
    assert read_provenance(out)["instructions"] == [{"language": "ka", "source": "en", "sha1": english.sha1}]
    assert "2 questions from 2 articles" in capsys.readouterr().out


def test_rounds_default_to_several(origin_articles, tmp_path, capsys):
    from wikiorigin.cli import main

    assert FreeformConfig().rounds == 3
    assert main(_argv(origin_articles, tmp_path / "f.parquet", "http://127.0.0.1:9/v1", "--dry-run")) == 0
    # 4 generations first; then per question 3 refinements, a translation, a score and a giveaway check
    assert "then at most 24 calls to refine, translate, score and check for giveaways" in capsys.readouterr().out


def test_criterion_3_is_the_paper_s():
    """The answer holds nothing superfluous and does not restate the question; whether the
    question gives its answer away is the giveaway step's, not a criterion."""
    line = next(x for x in FREEFORM_PROMPTS["score"].splitlines() if x.startswith(f"{CRITERIA[2]}:"))
    assert "the answer" in line and "nothing superfluous" in line and "repeats no part of the question" in line
    assert "given away" not in FREEFORM_PROMPTS["score"] and "give" in FREEFORM_PROMPTS["giveaway"]


def test_the_score_prompt_names_every_criterion():
    assert all(f"{c}:" in FREEFORM_PROMPTS["score"] for c in CRITERIA)


def test_every_instruction_file_has_the_same_keys_and_placeholders():
    assert bundled_languages() == ["af", "ca", "en", "et", "ja", "ka", "ps", "sk", "uk"]
    folder = ROOT / "wikiorigin" / "data" / "instructions"
    english = json.loads((folder / "en.json").read_text(encoding="utf-8"))
    scripts = {
        "ja": "[\u3040-\u30ff]",
        "ka": "[\u10d0-\u10ff]",
        "uk": "[\u0400-\u04ff]",
        "ps": "[\u0600-\u06ff]",
        "af": "[a-z]",
        "ca": "[àèéíòóú]",
        "sk": "[áäčďéíľňóôŕšťúýž]",
        "et": "[äõöü]",
    }
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        assert list(data) == list(english), path.name
        assert data["language"] == path.stem and data["name"] and data["note"], path.name
        for step, names in PLACEHOLDERS.items():
            assert placeholders(data[step]) == set(names) == placeholders(english[step]), (path.name, step)
            assert "{{" not in data[step] and "}}" not in data[step]  # the JSON line is the builder's
            if path.stem != "en":
                assert data[step] != english[step] and re.search(scripts[path.stem], data[step]), path.name
        bundled_instructions(path.stem)  # and the loader takes it
    assert '"data/instructions/*"' in (ROOT / "pyproject.toml").read_text()  # shipped with the package


@pytest.mark.slow
def test_cli_build_freeform(origin_articles, tmp_path, capsys):
    from wikiorigin.cli import main

    with ChatServer(answer=scripted) as server:
        assert main(_argv(origin_articles, tmp_path / "f.parquet", server.url)) == 0
    said = "1 questions from 4 articles (dropped: leak 1 (title in the question 1), score 1, giveaway 1)"
    assert said in capsys.readouterr().out
    assert read_provenance(tmp_path / "f.parquet")["rounds"] == 3


def test_freeform_dry_run(origin_articles, tmp_path, capsys):
    from wikiorigin.cli import main

    argv = _argv(origin_articles, tmp_path / "f.parquet", "http://127.0.0.1:9/v1", "--rounds", "2", "--dry-run")
    assert main(argv) == 0
    assert "4 calls to make first (0 cached)" in capsys.readouterr().out


def test_the_wrong_stage_s_file_fails_before_any_call(origin_articles, tmp_path, capsys):
    """A yokai corpus (no origin columns) given to build freeform, a pages file to build mcq, a
    directory as --out: one line each, exit 2, and the server never asked."""
    from wikiorigin.cli import main

    yokai = tmp_path / "yokai.parquet"
    pq.write_table(pq.read_table(origin_articles).drop_columns(["origin_wiki", "n_wikis"]), yokai)
    pages = tmp_path / "pages.parquet"
    pq.write_table(pa.table({"wiki": ["jawiki"], "page_id": [1], "title": ["x"]}), pages)
    with ChatServer(answer=scripted) as server:
        common = ["--model", "gen", "--base-url", server.url, "--cache", str(tmp_path / "c.sqlite")]
        assert main(["build", "freeform", "--articles", str(yokai), "--out", str(tmp_path / "f.parquet"), *common]) == 2
        err = capsys.readouterr().err
        assert "yokai.parquet: not the output of `wikiorigin corpus origin`: no column origin_wiki, n_wikis" in err
        assert main(["build", "mcq", "--articles", str(pages), "--out", str(tmp_path / "m.parquet"), *common]) == 2
        assert (
            "pages.parquet: not the output of `wikiorigin corpus yokai (or corpus origin)`: no column "
            "revision_id, url, text, references" in capsys.readouterr().err
        )
        (tmp_path / "d").mkdir()  # a directory apart from the cache's
        assert (
            main(["build", "freeform", "--articles", str(origin_articles), "--out", str(tmp_path / "d"), *common]) == 2
        )
        assert "a directory; give a file name" in capsys.readouterr().err
        asked = [c for c in server.calls if "messages" in c]
    assert asked == []


@pytest.mark.parametrize(
    "row", ['{"foo": 1}', '{"text": null}', "[1, 2]", "not json", '{"text": 5}', '{"text": "[1]"}']
)
def test_a_dry_run_over_a_damaged_cached_translation_counts_it_as_a_call(tmp_path, capsys, row):
    """A cached translation row that is damaged is no translation: the dry run plans to ask
    for it again (one line, exit 0), never 'unexpected KeyError'."""
    import sqlite3

    from wikiorigin.builders.freeform import _translation
    from wikiorigin.cli import main

    articles = _corpus(tmp_path / "is.parquet", "iswiki", IS)
    with ChatServer() as server:
        assert main(_argv(articles, tmp_path / "f.parquet", server.url, "--dry-run")) == 0
        first = capsys.readouterr().out
        key = LLMClient(OpenAIBackend("gen", base_url=server.url), RequestCache(tmp_path / "c.sqlite")).key(
            _translation("is")
        )
        with sqlite3.connect(tmp_path / "c.sqlite") as db:
            db.execute("INSERT OR REPLACE INTO answers VALUES (?, ?)", (key, row))
        assert main(_argv(articles, tmp_path / "f.parquet", server.url, "--dry-run")) == 0
        assert capsys.readouterr().out == first and not server.calls
