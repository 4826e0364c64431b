import json
import lzma

import pytest

from wikiorigin.evaluators.mcq import parse_choice

CHOICES = ["新しい家", "空家", "公園", "神社"]


@pytest.mark.parametrize("response,expected", [
    ("\nASSISTANT: - 空家<|endoftext|>", 1),
    ("空家<EOD|LLM-jp>", 1),
    ("回答：「空家」です。", 1),
    ("答え: 空家", 1),
    ("B", 1), ("(b)", 1), ("2", 1), ("２．空家", 1),  # letters, numbers, full width
    ("『神社』", 3),
    ("正解は公園だと思いますが、神社かもしれません。", 2),  # hedged, still picks one
    ("質問\n- 新しい家\n- 空家\n- 公園\n- 神社\n答え: 神社", 3),  # an echoed option list
    ("新しい家と空家のどちらかです。", None),  # several
    ("わかりません。", None),
    ("", None),
])
def test_parse_choice(response, expected):
    assert parse_choice(response, CHOICES) == expected


def test_an_option_inside_a_longer_option():
    choices = ["百物語の99話目", "百物語の100話目が終わったとき", "最初", "途中"]
    assert parse_choice("100話目が終わったとき", choices) == 1
    assert parse_choice("百物語の100話目が終わったとき", ["100話目", "百物語の100話目が終わったとき", "a", "b"]) == 1


@pytest.mark.parametrize("name,coverage,agreement", [
    ("responses-calm2-7b-chat.json.xz", 0.93, 0.97),
    ("responses-llm-jp-13b-instruct-full-jaster-v1.0.json.xz", 0.98, 0.96),
])
def test_against_the_papers_gpt4o_verdicts(data_dir, name, coverage, agreement):
    """The released answers of two models: how many we read, and how often our correct/wrong
    verdict agrees with GPT-4o's where it gave one."""
    rows = json.loads(lzma.open(data_dir.parent / "yokaieval" / name).read())
    read = agree = judged = 0
    for row in rows:
        q = row["question"]
        index = parse_choice(row["response"], q["choices"])
        read += index is not None
        if row["judge"] is not None:
            judged += 1
            agree += (index is not None and q["choices"][index] == q["answer"]) == row["judge"]
    assert read / len(rows) >= coverage
    assert agree / judged >= agreement
