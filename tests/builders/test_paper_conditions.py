"""Each paper's conditions as options, driven through the real commands against a loopback
server that records every request: the article length sent (``--max-article-chars``), the
answer positions, YokaiEval's two label steps and firm checker, the leak filter by words,
and a provenance that records what was sent."""

import collections
import json

import pyarrow.parquet as pq
import pytest

from tests.builders import test_freeform, test_mcq, test_preference
from tests.builders.test_freeform import _corpus, origin_articles  # noqa: F401 (fixture)
from tests.builders.test_mcq import articles  # noqa: F401 (fixture)
from tests.builders.test_preference import CARE, RATED, questions  # noqa: F401 (fixture)
from tests.commands import build_mcq
from tests.openai_server import ChatServer
from wikiorigin.cli import main
from wikiorigin.files import read_provenance
from wikiorigin.labels import load_labels


def _mcq(articles, out, url, *extra):
    return build_mcq(articles, out, url, *extra)


def _task(call) -> str:
    return call["messages"][0]["content"].splitlines()[0].removeprefix("task: ")


def _by_task(calls) -> dict:
    found = collections.defaultdict(list)
    for call in calls:
        found[_task(call)].append(call)
    return found


def _texts(articles) -> dict:
    return {r["title"]: r["text"] for r in pq.read_table(articles).to_pylist()}


# --- the article length sent ---------------------------------------------------------------------


@pytest.mark.parametrize("given, limit", [(["--max-article-chars", "700"], 700), (["--max-article-chars", "0"], 0)])
def test_mcq_sends_articles_cut_at_max_article_chars_or_whole(given, limit, articles, tmp_path):  # noqa: F811
    text = _texts(articles)["言語"]
    assert len(text) > 2 * 700
    out = tmp_path / "mcq.parquet"
    with ChatServer(answer=test_mcq.scripted) as server:
        assert main(_mcq(articles, out, server.url, *given)) == 0
    sent = [c["messages"][-1]["content"] for c in server.calls if c["messages"][-1]["content"].startswith("言語\n")]
    assert {_task(c) for c in server.calls} == {"generate", "check", "attribute", "label"} and sent
    for user in sent:  # cut at 700, or the whole article
        assert text[:700] in user and (text[700:760] in user) == (limit == 0)
    assert text[-300:] in sent[0] if limit == 0 else text[-300:] not in sent[0]
    assert read_provenance(out)["max_article_chars"] == limit
    assert main(["build", "card", str(tmp_path), "--kind", "mcq", "--title", "t"]) == 0
    assert f'"max_article_chars": {limit}' in (tmp_path / "README.md").read_text(encoding="utf-8")


@pytest.mark.slow
def test_freeform_sends_articles_cut_at_max_article_chars_or_whole(origin_articles, tmp_path):  # noqa: F811
    texts = _texts(origin_articles)
    for given, expect in (("120", lambda t: t[:120]), ("0", lambda t: t)):
        out = tmp_path / f"f{given}.parquet"
        with ChatServer(answer=test_freeform.scripted) as server:
            argv = test_freeform._argv(origin_articles, out, server.url, "--max-article-chars", given, "--rounds", "1")
            assert main(argv) == 0
        writing = [c for c in server.calls if _task(c) in ("freeform-generate", "freeform-refine")]
        assert writing and {c["messages"][-1]["content"] for c in writing} == {expect(t) for t in texts.values()}
        assert read_provenance(out)["max_article_chars"] == int(given)


@pytest.mark.slow
def test_the_presets_send_the_whole_article(articles, tmp_path):  # noqa: F811
    """Neither paper states a cut: their presets send each article whole (and record 0)."""
    text = _texts(articles)["言語"]
    with ChatServer(answer=test_mcq.scripted) as server:
        assert main(_mcq(articles, tmp_path / "m.parquet", server.url, "--preset", "yokaieval")) == 0
    generate = next(c for c in server.calls if _task(c) == "generate" and "言語\n" in c["messages"][-1]["content"])
    assert generate["messages"][-1]["content"] == f"言語\n\n{text}"
    assert read_provenance(tmp_path / "m.parquet")["max_article_chars"] == 0
    long = "ხაჭაპური არის ქართული ცომეული კერძი. " * 300  # 11,400 characters: the default cut is 6,000
    corpus = _corpus(tmp_path / "ka.parquet", "kawiki", {"ხაჭაპური": ("Q1265070", long)})
    with ChatServer(answer=test_freeform.scripted, reasoning=True) as server:
        argv = test_freeform._argv(corpus, tmp_path / "f.parquet", server.url, "--preset", "wikioriginqa")
        assert main(argv) == 0
    sent = {c["messages"][-1]["content"] for c in server.calls if _task(c) == "freeform-generate"}
    assert sent == {long} and read_provenance(tmp_path / "f.parquet")["max_article_chars"] == 0


# --- answer positions, labels and checker under the yokaieval preset ----------------------------


@pytest.mark.slow
def test_answer_positions_balanced_or_as_generated(articles, tmp_path):  # noqa: F811
    """The scripted generator puts the answer second (乙) or third (言語's C): balanced spreads
    them, the yokaieval preset leaves them where the generator put them (the paper's set is not
    balanced)."""
    with ChatServer(answer=test_mcq.scripted) as server:
        assert main(_mcq(articles, tmp_path / "b.parquet", server.url, "--per-article", "3")) == 0
        assert (
            main(_mcq(articles, tmp_path / "g.parquet", server.url, "--per-article", "3", "--preset", "yokaieval")) == 0
        )
        argv = _mcq(
            articles, tmp_path / "o.parquet", server.url, "--per-article", "3", "--answer-positions", "as-generated"
        )
        assert main(argv) == 0
    balanced, generated = (
        pq.read_table(tmp_path / "b.parquet").to_pylist(),
        pq.read_table(tmp_path / "g.parquet").to_pylist(),
    )
    assert sorted(r["answer_index"] for r in balanced) == [0, 1, 2, 3]
    for row in generated + pq.read_table(tmp_path / "o.parquet").to_pylist():  # the generator's order
        assert row["choices"] in (["甲", "乙", "丙", "丁"], ["A", "B", "C", "D"])
        assert row["answer_index"] == row["choices"].index(row["answer"])
    assert sorted(r["answer_index"] for r in generated) == [1, 1, 1, 2]
    assert read_provenance(tmp_path / "b.parquet")["answer_positions"] == "balanced"
    assert read_provenance(tmp_path / "g.parquet")["answer_positions"] == "as-generated"


@pytest.mark.slow
def test_yokaieval_labels_the_type_from_the_question_and_the_region_from_the_article(articles, tmp_path):  # noqa: F811
    out = tmp_path / "mcq.parquet"
    texts = _texts(articles)
    with ChatServer(answer=test_mcq.scripted) as server:
        assert main(_mcq(articles, out, server.url, "--preset", "yokaieval")) == 0
    calls = _by_task(server.calls)
    assert "label" not in calls and calls["label-type"] and calls["label-region"]
    for call in calls["label-type"]:  # the question and its options, no article
        user = call["messages"][-1]["content"]
        assert "\n0. " in user and not any(t[:200] in user for t in texts.values())
        assert call["response_format"]["json_schema"]["schema"]["required"] == ["type"]
    regions = load_labels("yokaieval").region_names
    for call in calls["label-region"]:  # the article, no question
        user = call["messages"][-1]["content"]
        title = user.split("\n", 1)[0]
        assert user == f"{title}\n\n{texts[title]}"
        assert all(r in call["messages"][0]["content"] for r in regions)
    assert len(calls["label-region"]) == len({c["messages"][-1]["content"] for c in calls["label-region"]})
    rows = {r["title"]: r for r in pq.read_table(out).to_pylist()}
    assert rows["個人"]["region"] == "東北, 関東" and rows["アンパサンド"]["region"] == "関東"
    meta = read_provenance(out)
    assert (meta["labels"], meta["label_steps"], meta["checker_abstains"]) == ("yokaieval", 2, False)


@pytest.mark.slow
def test_yokaieval_s_checker_must_choose_an_option(articles, tmp_path):  # noqa: F811
    """By default the checker may answer null (and so drop a question); the paper's could not."""
    with ChatServer(answer=test_mcq.scripted) as server:
        assert main(_mcq(articles, tmp_path / "d.parquet", server.url)) == 0
        first = len(server.calls)
        assert main(_mcq(articles, tmp_path / "p.parquet", server.url, "--preset", "yokaieval")) == 0
    default, paper = (
        [c for c in calls if _task(c) == "check"] for calls in (server.calls[:first], server.calls[first:])
    )
    assert default and all("null" in c["messages"][0]["content"] for c in default)
    assert paper and not any("null" in c["messages"][0]["content"] for c in paper)
    schema = paper[0]["response_format"]["json_schema"]["schema"]["properties"]["answer_index"]
    assert schema["type"] == "integer" and schema["enum"] == [0, 1, 2, 3]
    assert read_provenance(tmp_path / "d.parquet")["checker_abstains"] is True


def test_the_yokaieval_labels_are_the_paper_s_classes():
    labels = load_labels("yokaieval")
    assert [(c.letter, c.name) for c in labels.regions] == list(
        zip(
            "ABCDEFGHIJK",
            ["日本全国", "北海道", "東北", "関東", "中部", "近畿", "中国", "四国", "九州", "沖縄", "不明"],
        )
    )
    assert labels.type_names == load_labels("yokai-ja").type_names and "複数の地域" not in labels.region_names


# --- the leak filter -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, text, leaks",
    [
        ("Ur", "Where is Ur found?", True),
        ("Ur", "What is urban planning?", False),
        ("UK", "Which duke ruled here?", False),
        ("&", "What does A & B stand for?", True),
        ("&", "Which company is AT&T?", False),
        ("Ampersand", "Ampersandとは何か。", True),  # a Latin name touching kana: a boundary
        ("河童", "河童は何を好むか。", True),  # two characters of an unspaced script: a substring
        ("鬼", "鬼門はどの方角か。", False),  # one character inside a word
        ("鬼", "「鬼」とは何か。", True),
        ("ข้าว", "อาหารนี้ทำจากข้าวอะไร", True),  # Thai: no spaces between words
        ("パン", "パンダはどこに住むか。", False),  # katakana inside a longer katakana word
        ("パン", "パンは何から作るか。", True),
        ("カッパ", "カッパドキアの岩窟は何か。", False),
        ("カッパ", "川に住むカッパの好物は？", True),
        ("ラーメン", "豚骨ラーメンの発祥地はどこか。", True),  # after kanji: a word of its own
        ("ベルギー", "ベルギー・ワッフルの起源はどこか。", True),  # the middle dot parts katakana words
        ("スミス", "ジョン・スミスの生まれた町は？", True),
        ("北京", "北京是哪个国家的首都？", True),  # Chinese
        ("京", "南京在哪里？", False),
        ("京", "“京”指的是哪座城市？", True),
        ("Львів", "Яке місто називають Львів?", True),
        ("Ли", "Яка лисиця живе тут?", False),
        ("Tallinn", "Mis on Tallinnas kõige vanem?", True),  # an inflected form of a long name
        ("서울", "서울은 어느 나라의 수도인가?", True),  # a Korean particle after the name
        ("한", "한국의 수도는 어디인가?", False),
        ("Rome", "Which emperor built Jerome's church?", False),  # inside a word: no start boundary
        ("ＵＲ", "Where is Ur?", True),  # NFKC and case folding
    ],
)
def test_a_name_leaks_as_a_word(name, text, leaks):
    from wikiorigin.builders.leaks import leaked_name

    assert leaked_name(name, text) is leaks


ALIASES = {
    "Ur": ("Q5699", "Ur is an ancient city of Sumer.", ["UR"]),  # "ur" inside "urban", "Sumerian"
    "Tiflis": ("Q994", "Tiflis is an old name of Tbilisi.", ["TB"]),  # a real leak: the alias as a word
}


def _leaky(messages):
    task = _task({"messages": messages})
    system = messages[0]["content"]
    if task in ("freeform-generate", "freeform-refine"):
        if "Tiflis" in system:
            return json.dumps({"question": "Which city, once called TB, is the capital?"})
        return json.dumps({"question": "Which Sumerian urban centre was the home of Abraham?"})
    if task == "freeform-translate":
        return json.dumps({"question_en": messages[-1]["content"], "answer_en": "the city"})
    return test_freeform.scripted(messages)


def test_the_leak_filter_matches_names_as_words_and_counts_by_reason(tmp_path, capsys):
    rows = {title: (qid, text) for title, (qid, text, _) in ALIASES.items()}
    path = _corpus(tmp_path / "a.parquet", "enwiki", rows)
    table = pq.read_table(path).to_pylist()
    for row in table:
        row["aliases"] = ALIASES[row["title"]][2]
    import pyarrow as pa

    from wikiorigin.schemas import ORIGIN_ARTICLES

    pq.write_table(pa.Table.from_pylist(table, schema=ORIGIN_ARTICLES), path)
    out = tmp_path / "f.parquet"
    with ChatServer(answer=_leaky) as server:
        assert main(test_freeform._argv(path, out, server.url, "--rounds", "0", "--instructions", "en")) == 0
        scored = {c["messages"][-1]["content"] for c in server.calls if _task(c) == "freeform-score"}
    assert any("Sumerian urban" in s for s in scored)  # "UR" inside words is no leak
    failed = pq.read_table(tmp_path / "f.failed.parquet").to_pylist()
    assert [(f["source"], f["step"], f["reason"]) for f in failed if f["step"] == "leak"] == [
        ("Tiflis", "leak", "the question holds the answer 'TB' (alias)")
    ]
    assert "leak 1 (alias in the question 1)" in capsys.readouterr().out


def test_the_giveaway_prompt_is_sent_without_doubled_braces(origin_articles, tmp_path):  # noqa: F811
    with ChatServer(answer=test_freeform.scripted) as server:
        assert main(test_freeform._argv(origin_articles, tmp_path / "f.parquet", server.url, "--rounds", "1")) == 0
    systems = {_task(c): c["messages"][0]["content"] for c in server.calls}
    assert "freeform-giveaway" in systems
    assert not [task for task, text in systems.items() if "{{" in text or "}}" in text]
    assert '{"gives_away": true or false' in systems["freeform-giveaway"]


# --- the provenance records what was sent --------------------------------------------------------


@pytest.mark.slow
def test_with_a_reasoning_effort_the_provenance_records_no_temperature(articles, origin_articles, tmp_path):  # noqa: F811
    with ChatServer(answer=test_freeform.scripted, reasoning=True) as server:
        argv = test_freeform._argv(origin_articles, tmp_path / "f.parquet", server.url, "--preset", "wikioriginqa")
        assert main(argv) == 0
    meta = read_provenance(tmp_path / "f.parquet")
    assert meta["params"] == meta["check_params"] == {"reasoning_effort": "low"}
    assert main(["build", "card", str(tmp_path), "--kind", "freeform", "--title", "t"]) == 0
    card = (tmp_path / "README.md").read_text(encoding="utf-8")
    assert "reasoning_effort" in card and "temperature" not in card  # the card shows what was sent
    with ChatServer(answer=test_mcq.scripted, reasoning=True) as server:
        argv = _mcq(articles, tmp_path / "m.parquet", server.url, "--reasoning-effort", "low", "--max-tokens", "4000")
        assert main(argv) == 0
        sent = {json.dumps({k: c[k] for k in ("max_completion_tokens", "reasoning_effort")}) for c in server.calls}
    meta = read_provenance(tmp_path / "m.parquet")
    assert meta["params"] == meta["checker_params"] == {"max_completion_tokens": 4000, "reasoning_effort": "low"}
    assert json.dumps(meta["params"]) in sent


def test_preference_provenance_records_what_was_sent(questions, tmp_path):  # noqa: F811
    path, _ = questions
    out = tmp_path / "p.parquet"
    with ChatServer(answer=test_preference.scripted, reasoning=True) as server:
        argv = test_preference._models_argv(path, out, server.url, "--reasoning-effort", "medium", "--preset", "care")
        assert main(argv) == 0
    meta = read_provenance(out)
    sent = {"max_completion_tokens": 1024, "reasoning_effort": "medium"}
    assert meta["answer_params"] == meta["judge_params"] == sent


def test_a_rated_build_records_its_preset(tmp_path):
    out = tmp_path / "p.parquet"
    argv = test_preference._argv(CARE, "--rated", str(RATED), "--out", str(out), "--preset", "care")
    assert main(argv) == 0
    assert read_provenance(out)["preset"] == "care"


def test_a_temperature_of_0_given_wins_over_the_preset(questions, tmp_path):  # noqa: F811
    path, _ = questions
    with ChatServer(answer=test_preference.scripted) as server:
        argv = test_preference._models_argv(
            path, tmp_path / "p.parquet", server.url, "--preset", "care", "--temperature", "0"
        )
        assert main(argv) == 0
    assert server.calls and all(c["temperature"] == 0 for c in server.calls)


@pytest.mark.slow
def test_the_judge_is_sent_care_s_five_bands(questions, tmp_path):  # noqa: F811
    path, _ = questions
    with ChatServer(answer=test_preference.scripted) as server:
        assert main(test_preference._models_argv(path, tmp_path / "p.parquet", server.url)) == 0
    rate = [c["messages"][0]["content"] for c in server.calls if _task(c) == "rate"]
    assert rate
    for system in rate:
        bands = [line.split(":")[0] for line in system.splitlines() if line[:1].isdigit()]
        assert bands == ["1-2", "3-4", "5-6", "7-8", "9-10"]
        assert "did not ask for lowers the grade" in system and "add correct detail" not in system


@pytest.mark.slow
def test_two_label_steps_with_wikidata_regions_ask_the_type_only(tmp_path, data_dir):
    """An origin corpus's region is Wikidata's: the paper's way asks only the type, from the
    question alone, in English instructions that name the language (not the yokai prompts)."""
    import warnings

    import pyarrow as pa

    from tests.builders.test_prompts_labels import JA, TITLES, Scripted
    from wikiorigin.corpora.articles import article_row
    from wikiorigin.dumps.pages import iter_pages
    from wikiorigin.schemas import ORIGIN_ARTICLES

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pages = [p for p in iter_pages(data_dir / JA, namespaces=[0]) if p.title in TITLES]
    rows = [
        {
            **article_row(p, "jawiki", "ja.wikipedia.org", {})[0],
            "origin_wiki": "jawiki",
            "n_wikis": 1,
            "region": "東京都",
        }
        for p in pages
    ]
    path = tmp_path / "origin.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=ORIGIN_ARTICLES), path)

    def answer(messages):
        if _task({"messages": messages}) == "label-type":
            return json.dumps({"type": "customs and beliefs"})
        return Scripted()(messages)

    out = tmp_path / "mcq.parquet"
    with ChatServer(answer=answer) as server:
        assert main(_mcq(path, out, server.url, "--label-steps", "2", "--keep-unreferenced")) == 0
    calls = _by_task(server.calls)
    assert "label" not in calls and "label-region" not in calls and calls["label-type"]
    assert all("in Japanese" in c["messages"][0]["content"] for c in calls["label-type"])
    assert {(r["type"], r["region"]) for r in pq.read_table(out).to_pylist()} == {("customs and beliefs", "東京都")}


def test_two_label_steps_refuse_a_region_class_holding_the_separator(articles, tmp_path, capsys):  # noqa: F811
    """A row labelled in two steps joins its regions by ", ": a class named with one ("Washington,
    D.C.") could not be told apart, so the build stops before any call, naming the class."""
    spec = {
        "name": "us",
        "types": [{"class": t, "description": t} for t in ("place", "person")],
        "regions": [{"class": r, "description": r} for r in ("Texas", "Washington, D.C.")],
    }
    labels = tmp_path / "us.json"
    labels.write_text(json.dumps(spec), encoding="utf-8")
    with ChatServer(answer=test_mcq.scripted) as server:
        argv = _mcq(articles, tmp_path / "m.parquet", server.url, "--labels", str(labels), "--label-steps", "2")
        assert main(argv) == 2
    said = capsys.readouterr().err.strip()
    assert not server.calls and not (tmp_path / "m.parquet").exists()
    assert said.count("\n") == 0 and "'Washington, D.C.'" in said and "--label-steps" in said
