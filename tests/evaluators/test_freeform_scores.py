import json
import random

import pytest

from wikiorigin.evaluators.freeform import chrf, chrf_from_stats, chrf_stats, normalize, score_answer

ALPHABET = "abcde fgh あいうえおかきくけこ河童天狗 ABC-'"


def test_chrf_equals_sacrebleu_on_random_strings():
    sacrebleu = pytest.importorskip("sacrebleu", reason="the test extra is not installed")
    metric = sacrebleu.metrics.CHRF()
    rng = random.Random(3)
    for _ in range(2000):
        hyp = "".join(rng.choices(ALPHABET, k=rng.randrange(0, 15)))
        ref = "".join(rng.choices(ALPHABET, k=rng.randrange(1, 15)))
        assert chrf(hyp, ref) == pytest.approx(metric.sentence_score(hyp, [ref]).score, abs=1e-9), (hyp, ref)


def _names(path) -> list[list[str]]:
    """Each item's labels and aliases in every language of a real Wikidata dump sample."""
    items = [json.loads(line.rstrip(",\n")) for line in path.open(encoding="utf-8") if line.startswith("{")]
    return [
        [v["value"] for v in item.get("labels", {}).values()]
        + [a["value"] for aliases in item.get("aliases", {}).values() for a in aliases]
        for item in items
    ]


def test_chrf_equals_sacrebleu_on_names_in_many_scripts(data_dir):
    """Names of one item in ~200 languages (Latin, Cyrillic, Greek, Arabic, Devanagari, Han, kana,
    Hangul, Thai, ...), bare or phrased as a model answers, against each other, normalized as
    :func:`score_answer` compares them."""
    sacrebleu = pytest.importorskip("sacrebleu", reason="the test extra is not installed")
    metric = sacrebleu.metrics.CHRF()
    rng = random.Random(5)
    forms = ["{}", "The answer is {}.", "{}です", "答えは「{}」", "Ответ: {}", "**{}**"]
    groups = _names(data_dir / "wikidata-20151109-five-entities.json")
    assert sum(map(len, groups)) > 500
    for _ in range(3000):
        group = rng.choice(groups)
        hyp, ref = normalize(rng.choice(forms).format(rng.choice(group))), normalize(rng.choice(group))
        assert chrf(hyp, ref) == pytest.approx(metric.sentence_score(hyp, [ref]).score, abs=1e-9), (hyp, ref)


def test_chrf_stats_add_over_a_corpus():
    sacrebleu = pytest.importorskip("sacrebleu", reason="the test extra is not installed")
    pairs = [("河童", "河童の川流れ"), ("tengu", "Tengu"), ("雪女です", "雪女")]
    total = [sum(x) for x in zip(*(chrf_stats(h, r) for h, r in pairs))]
    expected = sacrebleu.metrics.CHRF().corpus_score([h for h, _ in pairs], [[r for _, r in pairs]]).score
    assert chrf_from_stats(total) == pytest.approx(expected, abs=1e-9)


def test_score_answer():
    answers = ["河童", "Kappa", "kawatarō", "ガタロ"]
    exact = score_answer("ＫＡＰＰＡ", answers)  # full width, other case
    assert exact["exact"] and exact["chrf"] == 100.0 and exact["matched"] == "Kappa"
    near = score_answer("カッパ", answers)
    assert not near["exact"] and near["matched"] == "河童"  # ties on edit distance: the first
    assert near["chrf_best"] >= near["chrf"]
    with pytest.raises(ValueError, match="no answers"):
        score_answer("x", [])


@pytest.mark.parametrize(
    "a,b,distance",
    [
        ("kitten", "sitting", 3),
        ("", "abc", 3),
        ("abc", "abc", 0),
        ("中ぶ", "中部", 1),
        ("河童", "かっぱ", 3),
        ("flaw", "lawn", 2),
    ],
)
def test_edit_distance(a, b, distance):
    from wikiorigin.evaluators.freeform import levenshtein

    assert levenshtein(a, b) == levenshtein(b, a) == distance
