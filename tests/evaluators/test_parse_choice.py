"""Reading which option an answer names: a table of answer styles (chat markup of many
templates, prefixes, quotes, numerals, hedges, restated questions, paraphrases, several or no
options), positions only for numbered prompts, and the six models' released answers re-scored
against the published accuracies (PUBLISHED.md)."""

import csv
import json
import lzma

import pytest

from wikiorigin.evaluators.answers import match_key, option_labels, parse_choice, read_choice, strip_markup

CHOICES = ["新しい家", "空家", "公園", "神社"]


@pytest.mark.parametrize(
    "response,expected",
    [
        ("\nASSISTANT: - 空家<|endoftext|>", 1),  # calm2
        ("空家<EOD|LLM-jp>", 1),  # llm-jp
        ("<start_of_turn>model\n空家<end_of_turn>", 1),  # gemma
        ("assistant\n\n空家です。", 1),  # llama-3 headers stripped
        ("<|im_start|>assistant\n正解: 空家<|im_end|>", 1),  # qwen, a 正解: prefix
        ("[/INST] 空家</s>", 1),  # mistral / llama-2
        ("### 応答:\n空家\n### 指示:\n次の質問", 1),  # instruction-tuned headings
        ("余計な前置き\nASSISTANT: 神社", 3),  # prompt text before the turn
        ("回答：「空家」です。", 1),
        ("答え: 空家", 1),
        ("『神社』", 3),
        ("**神社**", 3),
        ("The answer is 公園.", 2),
        ("正解は公園だと思いますが、神社かもしれません。", 2),  # hedged, still names one
        ("自信はありませんが、おそらく神社です。", 3),  # hedged
        ("質問\n- 新しい家\n- 空家\n- 公園\n- 神社\n答え: 神社", 3),  # an echoed option list
        ("新しい家と空家のどちらかです。", None),  # several
        ("- 空家\n- 公園", None),  # two lines, two options
        ("わかりません。", None),
        ("", None),
        (None, None),
        ("1", None),
        ("2<EOD|LLM-jp>", None),
        ("B", None),
        ("(b)", None),  # unnumbered prompt: no position
    ],
)
def test_parse_choice(response, expected):
    assert parse_choice(response, CHOICES) == expected


@pytest.mark.parametrize(
    "response,labels,expected",
    [
        ("2", "1234", 1),
        ("２．", "1234", 1),
        ("B", "ABCD", 1),
        ("(b)", "ABCD", 1),
        ("答え: C", "ABCD", 2),
        ("B. 空家", "ABCD", 1),
        ("5", "1234", None),
        ("E", "ABCD", None),
        ("**B**", "ABCD", 1),
        ("2番", "1234", 1),
        ("2番目です。", "1234", 1),
    ],
)
def test_positions_only_when_the_prompt_numbered_the_options(response, labels, expected):
    assert parse_choice(response, CHOICES, labels=labels) == expected
    bare = "空家" not in response
    assert parse_choice(response, CHOICES) == (None if bare else expected)


def test_labels_are_found_in_the_recorded_prompt():
    assert option_labels("問\n1. 新しい家\n2. 空家\n3. 公園\n4. 神社", CHOICES) == list("1234")
    assert option_labels("問\n(A) 新しい家\n(B) 空家\n(C) 公園\n(D) 神社", CHOICES) == list("ABCD")
    assert option_labels("問\n① 新しい家\n② 空家\n③ 公園\n④ 神社", CHOICES) == list("1234")
    assert option_labels("問\nア. 新しい家\nイ. 空家\nウ. 公園\nエ. 神社", CHOICES) == list("アイウエ")
    assert option_labels("問\n1 新しい家\n2 空家\n3 公園\n4 神社", CHOICES) == list("1234")
    assert option_labels("問\n- 新しい家\n- 空家\n- 公園\n- 神社", CHOICES) is None
    assert option_labels("問\n\n  A\n  1) 新しい家  \n(2) 空家\n3：公園\n4\t神社\n", CHOICES) == list("1234")
    assert option_labels("問\nA) 新しい家の\nB) 空家\nC) 公園\nD) 神社", CHOICES) is None  # not the option
    assert option_labels("問\nA) \nB) 空家", ["", "空家"]) is None  # an empty option is not told
    assert parse_choice("イ", CHOICES, labels=list("アイウエ")) == 1
    assert parse_choice("②", CHOICES, labels=list("1234")) == 1


def test_the_best_match_wins_and_ties_abstain():
    numbers = ["三千年ずつ", "五百年ずつ", "千年ずつ", "四百年ずつ"]
    assert parse_choice("3千年ずつ", numbers) == 0  # not 千年ずつ, which it contains
    assert parse_choice("千年ずつ", numbers) == 2
    assert parse_choice("3000年ずつです", numbers) == 0
    assert match_key("二十一") == match_key("21") and match_key("三千") == match_key("3千") == "3000"
    longer = ["百物語の99話目が終わったとき", "百物語の100話目が終わったとき", "最初", "途中"]
    assert parse_choice("100話目が終わったとき", longer) == 1  # a shortened option
    assert parse_choice("百物語の100話目が終わったとき", ["100話目", "百物語の100話目が終わったとき", "a", "b"]) == 1
    assert parse_choice("1、2刻", ["数分", "1、2刻", "1時間", "3、4刻"]) == 1
    assert parse_choice("若侍の方に飛び込んだ", ["若侍の方に飛び込んだ", "侍を助けた", "x", "y"]) == 0
    assert parse_choice("話", ["昔話", "民話", "x", "y"]) is None  # inside two options equally


def test_a_restated_question_and_a_paraphrase():
    question = "元興寺に現れた妖怪は何を捕まえようとしたか。"
    assert (
        parse_choice(
            "元興寺に現れた妖怪は、鬼を捕まえようとしたとされています。",
            ["雷神", "鬼", "妖怪", "幽霊"],
            question=question,
        )
        == 1
    )
    assert (
        parse_choice(
            "青鷺火は、夜間にサギが青白く光る現象として知られています。",
            ["サギが昼間に飛ぶ", "サギが夜間に青白く光る", "サギが地面に埋まる", "サギが水中で泳ぐ"],
        )
        == 1
    )
    # the question and its options echoed back is no answer, even where the question mentions one
    asked = "日本の妖怪である小豆婆は、どのような音を立てるとされていることが多いでしょうか？"
    sounds = ["小豆を洗う音", "風の音", "鐘の音", "水の流れる音"]
    assert parse_choice(asked + "\n" + "\n".join(f"- {c}" for c in sounds), sounds, question=asked) is None
    assert parse_choice("河童または天狗", ["天狗", "河童", "鬼", "雪女"], question="河童と天狗のどちらか") is None
    # a quoted name that contains an option is not that option
    assert (
        parse_choice(
            "「琵琶牧々」は、尺八や三味線、笛などの楽器の姿を持つ。",
            ["尺八", "三味線", "琵琶", "笛"],
            question="琵琶牧々はどんな姿か",
        )
        is None
    )


@pytest.mark.parametrize(
    "response,choices,expected",
    [
        # an answer given, then the model runs on into another turn: the answer is the first
        ("神社<|im_end|>\n<|im_start|>user\n次は？<|im_end|>\n<|im_start|>assistant\n空家", CHOICES, 3),
        ("神社</s>\nASSISTANT: 空家", CHOICES, 3),
        ("神社\n\n### 指示:\n次の質問\n### 応答:\n空家", CHOICES, 3),
        ("の使い\nASSISTANT: - 空家<|endoftext|>", CHOICES, 1),  # the prompt's end repeated first
        # numbers inside longer numbers are not the shorter option
        ("23人です", ["3人", "5人", "7人", "9人"], None),
        ("答えは15人", ["3人", "5人", "7人", "9人"], None),
        ("西暦1800年頃", ["800年", "1000年", "500年", "600年"], None),
        ("およそ二十三人", ["三人", "五人", "七人", "九人"], None),
        ("7人です", ["3人", "5人", "7人", "9人"], 2),
        ("約3,000年", ["三千年", "五百年", "千年", "四百年"], 0),
        # denied options are not named
        ("答えは神社ではない。", CHOICES, None),
        ("神社ではないと思います。おそらく空家でしょう。", CHOICES, 1),
        ("新しい家ではなく、空家です。", CHOICES, 1),
        ("It is not a dog; it is a fox.", ["dog", "fox", "cat", "bird"], 1),
        # Latin words are whole words
        ("The category is bird.", ["dog", "fox", "cat", "bird"], 3),
        ("It was described by dogma as a fox", ["dog", "fox", "cat", "bird"], 1),
        # empty or symbol-only text names no option
        ("。", CHOICES, None),
        ("!!!", CHOICES, None),
    ],
)
def test_cases_from_review(response, choices, expected):
    assert parse_choice(response, choices) == expected


def test_long_responses_stay_fast():
    import time

    started = time.perf_counter()
    for filler in (" " * 20000, "。" * 20000, "あ" * 20000):
        parse_choice("空家" + filler + "x", CHOICES)
    assert time.perf_counter() - started < 2.0


def test_reading_says_how():
    assert read_choice("- 空家", CHOICES).how == "exact"
    assert read_choice("1", CHOICES).how == "none"
    assert read_choice("新しい家か空家", CHOICES).how == "several"
    assert read_choice("", CHOICES).how == "empty"
    assert strip_markup("<|start_header_id|>assistant<|end_header_id|>\n\n空家<|eot_id|>") == "空家"


def _published(data_dir) -> dict[str, float]:
    """The published accuracies (Table 8), as shipped beside the released answers."""
    with open(data_dir.parent / "yokaieval" / "published-accuracy.csv", encoding="utf-8") as f:
        return {row["model"]: float(row["score"]) for row in csv.DictReader(f)}


MODELS = [
    "gpt4o-mini",
    "llama-3.1-swallow-70b-instruct-v0.1",
    "qwen2.5-7b-instruct",
    "mistral-nemo-instruct-2407",
    "calm2-7b-chat",
    "llm-jp-13b-instruct-full-jaster-v1.0",
]


@pytest.mark.parametrize("model", MODELS)
def test_released_answers_rescore_to_the_published_accuracy(data_dir, model):
    """Over the 810 rows of the release (a file with fewer counts the rest as unanswered),
    within one point of the published accuracy, or of it plus the rows the published verdicts
    got wrong: responses that are exactly the correct option, judged wrong or no answer."""
    published = _published(data_dir)[model]
    rows = json.loads(lzma.open(data_dir.parent / "yokaieval" / f"responses-{model}.json.xz").read())
    correct = slips = 0
    for row in rows:
        q = row["question"]
        reading = read_choice(row["response"], q["choices"], question=q["question"])
        ok = reading.index is not None and q["choices"][reading.index] == q["answer"]
        correct += ok
        slips += ok and reading.how == "exact" and row["judge"] is not True
    assert abs(correct / 810 - published) <= 0.01 or abs((correct - slips) / 810 - published) <= 0.01
    assert (correct - slips) / 810 - published <= 0.01  # the rest of the gap is not ours


# -- other scripts: native digits, letters, answer cues, option text --------------------

GREEK = ["νησί", "χερσόνησος", "πόλη", "λίμνη"]


@pytest.mark.parametrize(
    "response, choices, labels, expected",
    [
        ("χερσόνησος", GREEK, None, 1),
        ("Απάντηση: χερσόνησος.", GREEK, None, 1),
        ("ΧΕΡΣΟΝΗΣΟΣ", GREEK, None, 1),  # case-folded, final sigma too
        ("Η σωστή απάντηση είναι «πόλη».", GREEK, None, 2),
        ("νησιά", GREEK, None, None),  # another word, not an option
        ("Β", GREEK, "ΑΒΓΔ", 1),
        ("(Γ)", GREEK, "ΑΒΓΔ", 2),
        ("Ответ: В", ["а", "б", "в", "г"], "АБВГ", 2),
        ("답: 다", ["사과", "배", "포도", "귤"], "가나다라", 2),
        ("포도", ["사과", "배", "포도", "귤"], None, 2),
        ("٣", ["x", "y", "z", "w"], "1234", 2),  # Arabic-Indic digit
        ("الإجابة: ٢", ["x", "y", "z", "w"], "1234", 1),
        ("उत्तर: ४", ["x", "y", "z", "w"], "1234", 3),  # Devanagari digit
        ("３", ["x", "y", "z", "w"], "1234", 2),  # full-width
        ("ج", ["x", "y", "z", "w"], "أبجد", 2),
        ("٣٠٠٠ سنة", ["1000 سنة", "3000 سنة", "500 سنة", "20 سنة"], None, 1),  # native numerals in an option
        ("Vastus: kaks", ["üks", "kaks", "kolm", "neli"], None, 1),
        ("cat", ["category", "cat", "dog", "bird"], None, 1),  # Latin words stay apart
        ("Freagra: an t-earrach", ["an geimhreadh", "an t-earrach", "an samhradh", "an fómhar"], None, 1),
        ("3", ["x", "y", "z", "w"], None, None),  # unlabelled options: a bare number is no position
    ],
)
def test_parse_choice_across_scripts(response, choices, labels, expected):
    assert parse_choice(response, choices, labels=labels) == expected


def test_digits_of_any_script_are_ascii():
    from wikiorigin.evaluators.answers import ascii_digits, match_key

    assert ascii_digits("٠١٢٣ ۴۵ ३४ ๕ ১") == "0123 45 34 5 1"
    assert ascii_digits("三千年、２番、Ⅻ、⑤ and 42") == "三千年、2番、Ⅻ、⑤ and 42"  # digits only (Nd), the rest kept
    assert match_key("٣,٠٠٠") == match_key("3,000") == match_key("三千") == "3000"
    assert match_key("Η  Καμτσάτκα!") == "η καμτσάτκα" and match_key("雪 女") == "雪女"
