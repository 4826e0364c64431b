"""Small datasets of each kind for the review tests, with their articles: six yokai questions
(one hostile: markup in its question and options), two free-form questions, two preferences."""

from __future__ import annotations

import pytest

HOSTILE = '<img src=x onerror="document.body.dataset.pwned=1"><script>document.body.dataset.pwned=2</script>'

ARTICLE_TEXT = (
    "垢嘗（あかなめ）は、日本の妖怪の一つ。古い風呂屋や荒れた屋敷に現れ、"
    "風呂桶や風呂場にたまった垢を長い舌で嘗めるとされる[1]。"
    "鳥山石燕の『画図百鬼夜行』に描かれている[2]。"
    "夜に現れるという伝承もある[注 1]。"
    "\n\n== 伝承 ==\n子供の姿で現れるともいわれる[3]。"
)


def _reference(number, text, group=None, url=None):
    return {
        "number": number,
        "name": None,
        "group": group,
        "text": text,
        "template": None,
        "authors": [],
        "title": None,
        "publisher": None,
        "year": None,
        "isbn": None,
        "url": url,
        "pages": None,
    }


def article_rows() -> list[dict]:
    """Two articles as ``corpus yokai`` writes them (one with a hostile reference)."""
    base = {"wiki": "jawiki", "anchor": None, "revision_timestamp": None, "sections": [], "categories": []}
    return [
        {
            **base,
            "page_id": 101,
            "title": "垢嘗",
            "qid": "Q1",
            "revision_id": 5001,
            "url": "https://ja.wikipedia.org/wiki/%E5%9E%A2%E5%98%97",
            "text": ARTICLE_TEXT,
            "references": [
                _reference(1, "村上健司『日本妖怪大事典』角川書店、2005年、4頁。"),
                _reference(2, "鳥山石燕『画図百鬼夜行』1776年。", url="https://example.org/sekien"),
                _reference(3, HOSTILE, url="javascript:alert(1)"),
                _reference(1, "注記: 夜の伝承", group="注"),
            ],
        },
        {
            **base,
            "page_id": 102,
            "title": "小豆洗い",
            "qid": "Q2",
            "revision_id": 5002,
            "url": "https://ja.wikipedia.org/wiki/%E5%B0%8F%E8%B1%86%E6%B4%97%E3%81%84",
            "text": "小豆洗いは川で小豆を洗う音をたてる妖怪[1]。",
            "references": [_reference(1, "柳田國男『妖怪談義』")],
        },
    ]


def mcq_rows() -> list[dict]:
    """Six multiple-choice rows in the ``mcq.parquet`` schema."""
    questions = [
        (
            "垢嘗が嘗めるとされるものは何か。",
            ["風呂場の垢", "台所の油", "墓の苔", "井戸の水"],
            0,
            "妖怪の行う行動",
            [1],
            101,
        ),
        (
            "垢嘗を描いた画集はどれか。",
            ["画図百鬼夜行", "北斎漫画", "鳥獣戯画", "百鬼夜行絵巻"],
            0,
            "妖怪の典拠",
            [2],
            101,
        ),
        ("垢嘗はどんな姿で現れるといわれるか。", ["子供", "老人", "狐", "鳥"], 0, "妖怪の形状・見た目", [3], 101),
        (
            "小豆洗いが立てる音は何の音か。",
            ["小豆を洗う音", "太鼓の音", "鈴の音", "笛の音"],
            0,
            "妖怪の行う行動",
            [1],
            102,
        ),
        (HOSTILE + " この妖怪は何を嘗めるか。", ["垢", "<b>油</b>", "苔", "水"], 0, "妖怪の行う行動", [1], 101),
        ("垢嘗が現れる場所はどこか。", ["古い風呂屋", "山頂", "海辺", "畑"], 0, "妖怪の伝承のある地域", [1], 101),
    ]
    rows = []
    for i, (q, choices, answer, type_, ref, page) in enumerate(questions):
        title = "垢嘗" if page == 101 else "小豆洗い"
        rows.append(
            {
                "id": f"q{i + 1}",
                "question": q,
                "choices": choices,
                "answer": choices[answer],
                "answer_index": answer,
                "type": type_,
                "region": "日本全国",
                "ref": ref,
                "refs_detail": [f"ref {n}" for n in ref],
                "url": None,
                "title": title,
                "qid": f"Q{page - 100}",
                "wiki": "jawiki",
                "page_id": page,
                "language": "ja",
                "generator": "gpt-4o-2024-08-06",
                "checker": "gpt-4o-mini",
                "prompt_sha1": "abc123def456",
                "source_revision_id": 5000 + page - 100,
            }
        )
    return rows


def write(rows, path, schema, **meta):
    import pyarrow as pa

    from wikiorigin.files import provenance, write_table

    write_table(pa.Table.from_pylist(rows, schema=schema), path, schema, provenance(**meta))
    return path


@pytest.fixture
def mcq_file(tmp_path):
    from wikiorigin.schemas import MCQ

    return write(
        mcq_rows(),
        tmp_path / "mcq.parquet",
        MCQ,
        builder="mcq",
        language="ja",
        generator="gpt-4o-2024-08-06",
        prompt_sha1="abc123def456",
    )


@pytest.fixture
def articles_file(tmp_path):
    from wikiorigin.schemas import ARTICLES

    return write(article_rows(), tmp_path / "articles.parquet", ARTICLES, stage="corpus yokai")


@pytest.fixture
def freeform_file(tmp_path):
    from wikiorigin.schemas import FREEFORM

    base = {
        "origin_wiki": "jawiki",
        "n_wikis": 3,
        "has_enwiki": True,
        "criteria": None,
        "language": "ja",
        "generator": "m",
        "prompt_sha1": "p",
        "source_revision_id": 1,
    }
    rows = [
        {
            **base,
            "id": "f1",
            "question": "Which yokai licks the filth of bathtubs?",
            "question_source": "風呂桶の垢を嘗める妖怪は？",
            "answers": ["Akaname", "垢嘗"],
            "qid": "Q1",
            "title": "垢嘗",
        },
        {
            **base,
            "id": "f2",
            "question": "Which yokai washes azuki beans?",
            "question_source": "小豆を洗う妖怪は？",
            "answers": ["Azukiarai", "小豆洗い"],
            "qid": "Q2",
            "title": "小豆洗い",
        },
    ]
    return write(rows, tmp_path / "freeform.parquet", FREEFORM, builder="freeform")


@pytest.fixture
def preferences_file(tmp_path):
    from wikiorigin.schemas import PREFERENCES

    rows = [
        {
            "prompt": "お盆とは？",
            "chosen": "先祖の霊を迎える行事。",
            "rejected": "夏の休日。",
            "score_chosen": 9.0,
            "score_rejected": 3.0,
            "culture": "Japanese",
            "category": "Customs",
            "language": "ja",
            "chosen_model": "a",
            "rejected_model": "b",
        },
        {
            "prompt": "七五三とは？",
            "chosen": "子供の成長を祝う行事。",
            "rejected": "数字の遊び。",
            "score_chosen": 8.5,
            "score_rejected": 2.0,
            "culture": "Japanese",
            "category": "Customs",
            "language": "ja",
            "chosen_model": "a",
            "rejected_model": "c",
        },
    ]
    return write(rows, tmp_path / "preferences.parquet", PREFERENCES, builder="preference")
