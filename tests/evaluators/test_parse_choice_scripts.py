"""Answers in scripts other than Japanese: options with a particle, case ending or clitic
attached (Korean, Estonian, Arabic), denials by language, option labels of other alphabets and
look-alike capitals, and the answers that must stay unread (an option inside an unrelated
word, two options one the prefix of the other)."""

import pytest

from wikiorigin.evaluators.answers import parse_choice, read_choice

KO = ["서울", "부산", "대구", "인천"]
ET = ["Tartu", "Tallinn", "Pärnu", "Narva"]
AR = ["القاهرة", "دمشق", "بغداد", "عمان"]
HE = ["ירושלים", "חיפה", "אילת", "צפת"]


@pytest.mark.parametrize(
    "response, choices, expected",
    [
        ("정답은 서울입니다.", KO, 0),
        ("서울이 정답입니다.", KO, 0),
        ("답: 부산", KO, 1),
        ("제 생각에는 대구가 맞습니다.", KO, 2),
        ("인천에서 열렸습니다.", KO, 3),
        ("Vastus: see asub Tallinnas.", ET, 1),
        ("Õige vastus on Tartust.", ET, 0),
        ("الجواب: بدمشق", AR, 1),
        ("الإجابة هي: وبغداد", AR, 2),
        ("התשובה: בירושלים", HE, 0),
        ("Die Antwort ist Münchens Altstadt.", ["Berlin", "München", "Hamburg", "Köln"], 1),
        ("Думаю, что в Казани.", ["Москва", "Казань", "Самара", "Омск"], 1),  # ь replaced
        ("Родом из Москвы.", ["Москва", "Казань", "Самара", "Омск"], 0),  # а replaced
        ("Στην Αθήνα ζει.", ["Αθήνα", "Πάτρα", "Λάρισα", "Βόλος"], 0),
        ("Ο ήρωας ήρθε από την Πάτρας", ["Αθήνα", "Πάτρα", "Λάρισα", "Βόλος"], 1),
    ],
)
def test_an_option_with_a_particle_ending_or_clitic(response, choices, expected):
    assert parse_choice(response, choices) == expected


@pytest.mark.parametrize(
    "response, choices",
    [
        ("서울대학교 출신입니다.", KO),  # 서울대: not a particle
        ("The category is unknown.", ["dog", "fox", "cat", "bird"]),  # cat inside a longer word
        ("I have no education.", ["dog", "fox", "cat", "bird"]),  # cat inside, not at the start
        ("Vastus: Tartus.", ["Tart", "Tartu", "Pärnu", "Narva"]),  # two options, one the other's prefix
        ("Vastus: Tallinnas.", ["Tallinn", "Tallinna Ülikool", "Tartu", "Narva"]),  # a prefix of another option
        ("Vastus: Tallinnas ja Tartus.", ET),  # two options inflected
        ("Vastus: Narvalased.", ET),  # more than three letters after
        ("배우가 되었습니다.", ["배", "사과", "포도", "귤"]),  # 배 inside 배우
        ("Казанский собор.", ["Москва", "Казань", "Самара", "Омск"]),  # more than three letters after the stem
        ("Из Москвы или Самары.", ["Москва", "Казань", "Самара", "Омск"]),  # two options declined
        ("Мамы нет.", ["Мама", "Папа", "Баба", "Деда"]),  # stems of four letters or more only
        ("Родом из Москвы.", ["Москва", "Москв", "Самара", "Омск"]),  # an option is the other's stem
    ],
)
def test_an_option_inside_another_word_stays_unread(response, choices):
    assert parse_choice(response, choices) is None


def test_the_inflected_reading_says_so():
    assert read_choice("Vastus: see asub Tallinnas.", ET).how == "inflected"
    assert read_choice("정답은 서울입니다.", KO).how == "mentioned"
    assert read_choice("Vastus: Tallinn.", ET).how == "exact"


RU = ["Москва", "Казань", "Самара", "Омск"]
DE = ["Berlin", "München", "Hamburg", "Köln"]
FR = ["Paris", "Lyon", "Marseille", "Nice"]


@pytest.mark.parametrize(
    "response, choices, expected",
    [
        ("Не Москва, а Казань.", RU, 1),
        ("Ответ: не Москва, а Казань", RU, 1),
        ("Nicht Berlin, sondern München.", DE, 1),
        ("Es ist keine Hamburg, sondern Köln.", DE, 3),
        ("Ce n'est pas Paris, c'est Lyon.", FR, 1),
        ("Non pas Nice mais Marseille.", FR, 2),
        ("No es Madrid, sino Sevilla.", ["Madrid", "Sevilla", "Bilbao", "Cádiz"], 1),
        ("Non è Roma, ma Milano.", ["Roma", "Milano", "Torino", "Napoli"], 1),
        ("Não é Lisboa, é o Porto.", ["Lisboa", "Porto", "Braga", "Faro"], 1),
        ("Όχι η Αθήνα αλλά η Πάτρα.", ["Αθήνα", "Πάτρα", "Λάρισα", "Βόλος"], 1),
        ("서울이 아니라 부산입니다.", KO, 1),
        ("서울 말고 대구요.", KO, 2),
        ("不是北京，而是上海。", ["北京", "上海", "广州", "深圳"], 1),
        ("北京不对，答案是上海。", ["北京", "上海", "广州", "深圳"], 1),
        ("It is not the dog; it is the fox.", ["dog", "fox", "cat", "bird"], 1),
        ("The piano dog is it.", ["dog", "fox", "cat", "bird"], 0),  # "no" ends a longer word: no denial
        ("서울 아니면 부산입니다.", KO, None),  # 아니면, "or": both named
    ],
)
def test_denials_by_language(response, choices, expected):
    assert parse_choice(response, choices) == expected


FOUR = ["x", "y", "z", "w"]


@pytest.mark.parametrize(
    "response, labels, expected",
    [
        ("ข", "กขคง", 1),  # Thai labels
        ("คำตอบ: ค", "กขคง", 2),  # the Thai answer cue
        ("ג", "אבגד", 2),  # Hebrew labels
        ("(ד)", "אבגד", 3),
        ("答案是B", "ABCD", 1),  # Chinese declared forms
        ("我选B", "ABCD", 1),
        ("答案是：C。", "ABCD", 2),
        ("我认为答案是D。因为它最合理。", "ABCD", 3),
        ("答案是B", None, None),  # no labels: no position
        ("В", "ABCD", 1),  # a Cyrillic В with Latin labels is B by its shape
        ("Ответ: С", "ABCD", 2),  # Cyrillic С: C
        ("Β", "ABCD", 1),  # Greek Β: B
        ("A", "АБВГ", 0),  # Latin A: А by shape and by place
        ("B", "АБВГ", None),  # Latin B: В by shape, Б by place: no answer
        ("C", "АБВГ", None),  # no Cyrillic label looks like C
        ("Β", "АБВГ", 2),  # Greek Β looks like В (Greek is not read by place)
        ("Г", "ΑΒΓΔ", 2),  # Cyrillic Г is Greek Γ
        ("b", "АБВГ", None),  # small letters differ in shape
        ("В", ["A", "B", "Б", "Г"], None),  # labels of two scripts: no guess
    ],
)
def test_labels_of_other_alphabets_and_lookalikes(response, labels, expected):
    assert parse_choice(response, FOUR, labels=labels) == expected


def test_every_language_takes_one_convention_of_cue_and_delimiter():
    from wikiorigin.evaluators.cues import ANSWER_CUES, UNSPACED, answer_cue, delimiter

    for code in ("yue", "wuu", "th", "lo", "my", "km", "zh-yue", "zh-classical", "ja", "zh"):
        assert delimiter(code) == "" and answer_cue(code) != ANSWER_CUES["en"], code
    for code in ("bo", "dz"):  # no cue of their own: English cue, English space
        assert code in UNSPACED and answer_cue(code) == ANSWER_CUES["en"] and delimiter(code) == " "
    assert (delimiter("el"), delimiter("xx"), delimiter("pt-br")) == (" ", " ", " ")
    assert answer_cue("yue") == answer_cue("zh") and answer_cue("th") == "\nคำตอบ:"
