"""The question builders' prompts, written for wikiorigin: the MCQ builder's in Japanese and
English (following the YokaiEval paper's conditions, not its wording) and the free-form
builder's (WikiOriginQA's steps; English instructions, the question in the item's language).
Each prompt's first line names its task, so logs and test servers can tell them apart;
:func:`prompt_sha1` and :func:`freeform_sha1` change when any text changes (each row and the
request cache key carry them).

The judge prompts are not here: CARE's rating judge (used by the preference builder and the
judge evaluator) is in :mod:`wikiorigin.care`, beside its rubrics and rating parser."""

from __future__ import annotations

import hashlib

from ..schemas import FREEFORM_CRITERIA as CRITERIA, MCQ_REGIONS as REGIONS, MCQ_TYPES as TYPES

__all__ = ["MCQ_PROMPTS", "TYPES", "REGIONS", "prompt_sha1", "FREEFORM_PROMPTS", "CRITERIA", "freeform_sha1"]

MCQ_PROMPTS = {
    "ja": {
        "generate": (
            "task: generate\n"
            "あなたは日本の民俗学に詳しい出題者です。与えられたWikipedia記事だけを根拠に、"
            "その妖怪についての4択問題を{n}問作ってください。条件:\n"
            "1. 記事の本文で確かめられること。\n"
            "2. その妖怪について知らなければ解けないこと（一般常識で解けないこと）。\n"
            "3. 妖怪の名前から答えが推測できないこと。\n"
            "4. 伝承は地域や資料で異なるため、「〜と言われることが多い」「〜と伝えられる」のように書くこと。\n"
            "5. 誤りの選択肢はもっともらしく、正解とはっきり異なること。\n"
            "例: {{\"question\": \"雪女が現れるとよく言われる季節はどれか。\", "
            "\"choices\": [\"冬\", \"夏\", \"春\", \"秋\"], \"answer\": \"冬\"}}\n"
            "JSONだけで答えてください: {{\"questions\": [{{\"question\": ..., \"choices\": [4つ], \"answer\": ...}}]}}"
        ),
        "check": (
            "task: check\n"
            "次の記事を読み、問題に答えてください。記事から判断できない場合は null としてください。\n"
            "JSONだけで答えてください: {\"answer_index\": 0から3の数、または null}"
        ),
        "attribute": (
            "task: attribute\n"
            "記事の本文には脚注番号 [1] [2] … が付いています。問題の正解を裏付ける記述に付いた"
            "脚注の番号をすべて挙げてください。裏付ける脚注がなければ空のリストにしてください。\n"
            "JSONだけで答えてください: {\"refs\": [番号, ...]}"
        ),
        "label": (
            "task: label\n"
            "問題を分類してください。type は次のいずれか: {types}。region は問題の妖怪の伝承地域で、"
            "次のいずれか: {regions}。\nJSONだけで答えてください: {{\"type\": ..., \"region\": ...}}"
        ),
    },
    "en": {
        "generate": (
            "task: generate\n"
            "You write quiz questions on folklore. Using only the Wikipedia article given, write {n} "
            "four-option question(s) about this creature. Rules:\n"
            "1. The answer can be checked in the article's text.\n"
            "2. Answering needs knowledge of this creature, not general knowledge.\n"
            "3. The answer cannot be guessed from the creature's name.\n"
            "4. Folklore varies between places and sources: say what is \"often said\" or \"told\".\n"
            "5. Wrong options are plausible and clearly different from the answer.\n"
            "Example: {{\"question\": \"In which season is the yuki-onna often said to appear?\", "
            "\"choices\": [\"winter\", \"summer\", \"spring\", \"autumn\"], \"answer\": \"winter\"}}\n"
            "Answer with JSON only: {{\"questions\": [{{\"question\": ..., \"choices\": [4], \"answer\": ...}}]}}"
        ),
        "check": (
            "task: check\n"
            "Read the article and answer the question. If the article does not tell, answer null.\n"
            "Answer with JSON only: {\"answer_index\": a number from 0 to 3, or null}"
        ),
        "attribute": (
            "task: attribute\n"
            "The article's text carries footnote markers [1] [2] .... List the numbers of the "
            "footnotes on the statements that back the question's answer; an empty list if none.\n"
            "Answer with JSON only: {\"refs\": [numbers]}"
        ),
        "label": (
            "task: label\n"
            "Classify the question. type is one of: {types}. region is where the creature's lore "
            "comes from, one of: {regions}.\nAnswer with JSON only: {{\"type\": ..., \"region\": ...}}"
        ),
    },
}
"""The MCQ builder's prompts by language (``ja``, ``en``), then by step (``generate``,
``check``, ...): format strings the builder fills with the article and its settings."""


def prompt_sha1(language: str) -> str:
    """The hash of every prompt of one language (stored in each row and the cache key)."""
    blob = "\x00".join(f"{k}={v}" for k, v in sorted(MCQ_PROMPTS[language].items()))
    return hashlib.sha1(blob.encode()).hexdigest()


# WikiOriginQA: instructions in English, the question in the item's language; the criteria
# that "score" names are the free-form schema's (``schemas.FREEFORM_CRITERIA``).
FREEFORM_PROMPTS = {
    "generate": (
        "task: freeform-generate\n"
        "You write quiz questions about a culture's own knowledge. From the Wikipedia article "
        "given, write one question in {language} whose answer is exactly the name of the "
        "article's subject ({title}). The question must not contain that name or an obvious "
        "form of it, must be answerable in a few words, and must make sense on its own.\n"
        "Answer with JSON only: {{\"question\": ...}}"
    ),
    "refine": (
        "task: freeform-refine\n"
        "Improve this quiz question (in {language}) whose answer is {title}: make it unambiguous "
        "(only {title} fits), self-contained, not answerable by yes or no, without the answer's "
        "name, and true for the foreseeable future. Keep it short.\n"
        "Answer with JSON only: {{\"question\": ...}}"
    ),
    "translate": (
        "task: freeform-translate\n"
        "Translate the quiz question into English, and give the English name of its answer "
        "({title}) as an English speaker would write it.\n"
        "Answer with JSON only: {{\"question_en\": ..., \"answer_en\": ...}}"
    ),
    "score": (
        "task: freeform-score\n"
        "Rate the question (with its answer) from 1 (fails) to 5 (fully meets) on each criterion:\n"
        "not_yes_no: it is not a yes/no question;\n"
        "not_sentence_answer: it can be answered by a name or a few words, not only by a sentence;\n"
        "answer_not_in_question: the answer is not given away or restated by the question;\n"
        "knowable_by_cutoff: the answer could be known from sources up to {cutoff};\n"
        "stable_over_time: the answer will not change over time;\n"
        "not_trivial: it is not trivially easy;\n"
        "self_contained: it needs no context beyond itself.\n"
        "Answer with JSON only, an integer for each: {{\"not_yes_no\": ..., \"not_sentence_answer\": ..., "
        "\"answer_not_in_question\": ..., \"knowable_by_cutoff\": ..., \"stable_over_time\": ..., "
        "\"not_trivial\": ..., \"self_contained\": ...}}"
    ),
}
"""The free-form builder's prompts by step (``generate``, ``score``, ...): instructions in
English, the question written in the item's language."""


def freeform_sha1() -> str:
    """The hash of every free-form prompt (stored in each row and the cache key)."""
    blob = "\x00".join(f"{k}={v}" for k, v in sorted(FREEFORM_PROMPTS.items()))
    return hashlib.sha1(blob.encode()).hexdigest()
