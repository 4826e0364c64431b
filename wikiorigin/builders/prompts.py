"""The question builders' prompts, written for wikiorigin: the MCQ builder's yokai prompts in
Japanese (following the YokaiEval paper's conditions, not its wording; only for Japanese
questions with labels that ask for them, ``"prompts": "yokai-ja"``, as the ``yokai-ja`` preset
does) and, for everything else (any other language, or Japanese with other labels), in English
naming the language the question is written in; and the free-form
builder's, from :mod:`wikiorigin.builders.freeform_prompts` (instructions in the item's language).
Each prompt's first line names its task, so logs and test servers can tell them apart;
:func:`prompt_sha1` and :func:`freeform_sha1` change when any text changes (each row and the
request cache key carry them).

The judge prompts are not here: CARE's rating judge (used by the preference builder and the
judge evaluator) is in :mod:`wikiorigin.care`, beside its rubrics and rating parser."""

from __future__ import annotations

import hashlib

from ..labels import WIKIDATA, YOKAI_PROMPTS
from ..languages import language_name
from ..schemas import FREEFORM_CRITERIA as CRITERIA, MCQ_REGIONS as REGIONS, MCQ_TYPES as TYPES

__all__ = [
    "MCQ_PROMPTS",
    "MCQ_PROMPTS_ANY",
    "MCQ_TYPE_ONLY",
    "MCQ_PAPER_STEPS",
    "mcq_prompts_used",
    "yokai_prompts",
    "mcq_prompt",
    "label_prompt",
    "label_schema",
    "label_step_prompt",
    "region_step_schema",
    "PAPER_CLASSES",
    "TYPES",
    "REGIONS",
    "prompt_sha1",
    "FREEFORM_PROMPTS",
    "CRITERIA",
    "freeform_sha1",
]

PAPER_CLASSES = ("yokai-ja", "yokaieval")
"""The labels presets whose classes are the paper's: the yokai prompts list them without a gloss."""

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
            "例（形式と難しさの見本です。問題は与えられた記事から作ってください）:\n"
            "例1（行動。記事の脚注[2]の付いた記述で確かめられる）: "
            '{{"question": "河童が特に好むと伝えられることが多い食べ物はどれか。", '
            '"choices": ["ナス", "カボチャ", "キュウリ", "ダイコン"], "answer": "キュウリ"}}\n'
            "例2（形状・見た目。脚注[1]）: "
            '{{"question": "ぬらりひょんの姿として描かれることが多いのはどれか。", '
            '"choices": ["後頭部の大きな老人", "一つ目の童子", "首の長い女", "九本の尾を持つ狐"], '
            '"answer": "後頭部の大きな老人"}}\n'
            "例3（伝承のある地域。脚注[3]）: "
            '{{"question": "一反木綿の伝承が残るとされる地域はどこか。", '
            '"choices": ["青森県", "新潟県", "高知県", "鹿児島県"], "answer": "鹿児島県"}}\n'
            "例4（生まれ・生態。脚注[4]）: "
            '{{"question": "座敷童子が去った家はその後どうなると言われることが多いか。", '
            '"choices": ["家が栄える", "家が衰える", "火事に遭う", "跡継ぎが生まれる"], '
            '"answer": "家が衰える"}}\n'
            "例5（現代における伝承。脚注[1]）: "
            '{{"question": "口裂け女の噂が子どもたちの間で全国に広まったとされる時期はどれか。", '
            '"choices": ["1920年代の初め", "1950年代の半ば", "1970年代の終わり", "1990年代の終わり"], '
            '"answer": "1970年代の終わり"}}\n'
            'JSONだけで答えてください: {{"questions": [{{"question": ..., "choices": [4つ], "answer": ...}}]}}'
        ),
        "check": (
            "task: check\n"
            "次の記事を読み、問題に答えてください。記事から判断できない場合は null としてください。\n"
            'JSONだけで答えてください: {"answer_index": 0から3の数、または null}'
        ),
        "attribute": (
            "task: attribute\n"
            "記事の本文には脚注番号 [1] [2] … が付いています。問題の正解を裏付ける記述に付いた"
            "脚注の番号をすべて挙げてください。裏付ける脚注がなければ空のリストにしてください。\n"
            'JSONだけで答えてください: {"refs": [番号, ...]}'
        ),
        "label": (
            "task: label\n"
            "問題を分類してください。type は次のいずれか: {types}。region は問題の妖怪の伝承地域で、"
            '次のいずれか: {regions}。\nJSONだけで答えてください: {{"type": ..., "region": ...}}'
        ),
    },
}
"""The MCQ builder's Japanese yokai prompts (the paper's conditions, our wording), by step
(``generate``, ``check``, ...): format strings the builder fills with the article and its
settings. ``generate`` shows five example questions of our own (one of each of five of the
paper's types, with four options, the answer and the footnote that backs it). Used only for
Japanese questions whose labels ask for them (:func:`yokai_prompts`)."""

# Every other language: English instructions that name the language the question is written
# in ({language}, its English name) and speak of the article's subject ({subject}: the labels
# file's phrase, or "the article's subject").
MCQ_PROMPTS_ANY = {
    "generate": (
        "task: generate\n"
        "You write multiple-choice quiz questions on what a culture knows of its own things. "
        "Using only the Wikipedia article given, write {n} question(s) about {subject}, in "
        "{language}: the question, its four options and the answer all in {language}. Rules:\n"
        "1. The answer can be checked in the article's text.\n"
        "2. Answering needs knowledge of {subject}, not general knowledge.\n"
        "3. The answer cannot be guessed from the subject's name or from the question's wording.\n"
        "4. Where accounts differ between places or sources, say what is often said or told.\n"
        "5. Wrong options are plausible, of the same kind as the answer, and clearly different from it.\n"
        "6. The answer is one of the four options, written exactly as that option.\n"
        "Examples of the form and the difficulty, on other subjects and in English (yours are on the "
        "article given, in {language}):\n"
        "1 (a custom; backed by the statement with footnote [2]): "
        '{{"question": "What do people taking part in Holi traditionally throw at one another?", '
        '"choices": ["rice grains", "salt", "coloured powder", "paper streamers"], '
        '"answer": "coloured powder"}}\n'
        "2 (a dish; footnote [1]): "
        '{{"question": "Which fish is the Basque stew marmitako made with?", '
        '"choices": ["tuna", "cod", "sardine", "hake"], "answer": "tuna"}}\n'
        "3 (a craft; footnote [3]): "
        '{{"question": "What are traditional matryoshka dolls usually made of?", '
        '"choices": ["porcelain", "tin", "wax", "wood"], "answer": "wood"}}\n'
        "4 (a legend; footnote [1]): "
        '{{"question": "In the legend told in Hamelin, what does the piper first lead out of the town?", '
        '"choices": ["sheep", "rats", "geese", "soldiers"], "answer": "rats"}}\n'
        "5 (a tradition of recent times; footnote [4]): "
        '{{"question": "In which decade was the Eurovision Song Contest first held?", '
        '"choices": ["the 1930s", "the 1950s", "the 1970s", "the 1990s"], "answer": "the 1950s"}}\n'
        'Answer with JSON only: {{"questions": [{{"question": ..., "choices": [4 strings], '
        '"answer": ...}}]}}'
    ),
    "check": (
        "task: check\n"
        "Read the article and answer the question; both are in {language}, and you read them as "
        "a {language} reader would. Options are numbered from 0. If the article does not tell, "
        "answer null.\n"
        'Answer with JSON only: {{"answer_index": a number from 0 to 3, or null}}'
    ),
    "attribute": (
        "task: attribute\n"
        "The article (in {language}) carries footnote markers [1] [2] .... List the numbers of the "
        "footnotes on the statements that back the question's answer; an empty list if none.\n"
        'Answer with JSON only: {{"refs": [numbers]}}'
    ),
    "label": (
        "task: label\n"
        "Classify the question (in {language}). type is one of these classes:\n{types}\n"
        "region is where the knowledge about {subject} comes from, one of:\n{regions}\n"
        'Answer with JSON only, the class names as written: {{"type": ..., "region": ...}}'
    ),
}
"""The MCQ builder's prompts for every language (Japanese too, unless the labels ask for the
yokai prompts), by step: English instructions naming the target ``{language}`` (its English
name) and the ``{subject}``; ``generate`` shows five example questions of our own on subjects
of several cultures (a custom, a dish, a craft, a legend, a recent tradition)."""

# The label step when the region comes from Wikidata (the labels file says "regions":
# "wikidata"): the model gives the type only.
MCQ_TYPE_ONLY = {
    "ja": (
        'task: label\n問題を分類してください。type は次のいずれか: {types}。\nJSONだけで答えてください: {{"type": ...}}'
    ),
    "any": (
        "task: label\n"
        "Classify the question (in {language}). type is one of these classes:\n{types}\n"
        'Answer with JSON only, the class name as written: {{"type": ...}}'
    ),
}
"""The label step's prompt when the region comes from Wikidata (type only), with the yokai
prompts (``ja``) and with the any-language ones (``any``)."""


# The paper's own ways of two steps, used where a build asks for them (the ``yokaieval``
# preset): a checker that must choose an option (no way out), and labels in two calls, the
# type from the question alone and the region(s) from the article alone.
MCQ_PAPER_STEPS = {
    "ja": {
        "check": (
            "task: check\n"
            "次の記事を読み、問題に答えてください。選択肢の中から必ず1つを選んでください。\n"
            'JSONだけで答えてください: {"answer_index": 0から3の数}'
        ),
        "label-type": (
            "task: label-type\n"
            "次の問題が何について問うているかを分類してください。type は次のいずれか: {types}。\n"
            'JSONだけで答えてください: {{"type": ...}}'
        ),
        "label-region": (
            "task: label-region\n"
            "次の記事を読み、この妖怪の伝承がある地域を次から選んでください: {regions}。"
            "いくつもの地域にまたがる場合はそのすべてを挙げてください。\n"
            'JSONだけで答えてください: {{"regions": [...]}}'
        ),
    },
    "any": {
        "check": (
            "task: check\n"
            "Read the article and answer the question; both are in {language}, and you read them as "
            "a {language} reader would. Options are numbered from 0; choose one of them.\n"
            'Answer with JSON only: {{"answer_index": a number from 0 to 3}}'
        ),
        "label-type": (
            "task: label-type\n"
            "What does this question (in {language}) ask about? type is one of these classes:\n{types}\n"
            'Answer with JSON only, the class name as written: {{"type": ...}}'
        ),
        "label-region": (
            "task: label-region\n"
            "Read the article (in {language}). Where does the knowledge about {subject} come from? "
            "Name every class that applies, one or more of:\n{regions}\n"
            'Answer with JSON only, the class names as written: {{"regions": [...]}}'
        ),
    },
}
"""The steps a build may take the paper's way (:class:`~wikiorigin.builders.mcq.MCQConfig`
``label_steps=2``, ``checker_abstains=False``), with the yokai prompts (``ja``) and the
any-language ones (``any``): ``check`` without the answer "null", ``label-type`` (from the
question alone) and ``label-region`` (from the article alone, one or more classes)."""


def mcq_prompts_used(yokai: bool, region_source: str = "model", label_steps: int = 1, abstain: bool = True) -> dict:
    """The MCQ prompts a build sends, by step: the yokai or any-language ones, the type-only
    label with Wikidata regions, and the paper's steps of :data:`MCQ_PAPER_STEPS` where asked."""
    kind = "ja" if yokai else "any"
    prompts = dict(MCQ_PROMPTS["ja"] if yokai else MCQ_PROMPTS_ANY)
    if region_source != "model":
        prompts["label"] = MCQ_TYPE_ONLY[kind]
    if label_steps == 2:
        del prompts["label"]
        prompts["label-type"] = MCQ_PAPER_STEPS[kind]["label-type"]
        if region_source == "model":
            prompts["label-region"] = MCQ_PAPER_STEPS[kind]["label-region"]
    if not abstain:
        prompts["check"] = MCQ_PAPER_STEPS[kind]["check"]
    return prompts


def yokai_prompts(language: str, labels=None) -> bool:
    """Whether questions in ``language`` with ``labels`` (:class:`~wikiorigin.labels.Labels`)
    get the paper's Japanese yokai prompts: Japanese, and labels that ask for them
    (``"prompts": "yokai-ja"``, as the ``yokai-ja`` preset does)."""
    return language == "ja" and labels is not None and labels.prompts == YOKAI_PROMPTS


def mcq_prompt(
    language: str, step: str, subject: str | None = None, *, yokai: bool = False, paper: bool = False, **fields
) -> str:
    """The system prompt of one ``step``: the Japanese yokai one when ``yokai`` (filled with
    ``fields``), or the English instructions filled with the English name of ``language``, the
    ``subject`` phrase (default: the article's subject) and ``fields``; ``paper``: the step's
    text of :data:`MCQ_PAPER_STEPS`."""
    if yokai:
        text = (MCQ_PAPER_STEPS["ja"] if paper else MCQ_PROMPTS["ja"])[step]
        return text.format(**fields) if fields else text
    text = (MCQ_PAPER_STEPS["any"] if paper else MCQ_PROMPTS_ANY)[step]
    return text.format(language=language_name(language), subject=subject or "the article's subject", **fields)


def label_prompt(language: str, labels) -> str:
    """The label step's prompt with the classes of ``labels`` (:class:`~wikiorigin.labels.Labels`):
    with the yokai prompts the class names as the paper listed them (a gloss of each class
    added for any labels but ``yokai-ja``), otherwise one ``- class: description`` line each;
    type only when the region comes from Wikidata."""
    yokai = yokai_prompts(language, labels)
    if yokai:
        types, regions = ", ".join(labels.type_names), ", ".join(labels.region_names)
    else:
        types = "\n".join(f"- {c.name}: {c.description}" for c in labels.types)
        regions = "\n".join(f"- {c.name}: {c.description}" for c in labels.regions)
    if labels.region_source == WIKIDATA:
        text = MCQ_TYPE_ONLY["ja" if yokai else "any"]
        text = text.format(types=types) if yokai else text.format(types=types, language=language_name(language))
    else:
        text = mcq_prompt(language, "label", labels.subject, yokai=yokai, types=types, regions=regions)
    if yokai and labels.name not in PAPER_CLASSES:  # the paper's classes need no gloss; others do
        text += "\n" + "\n".join(f"{c.name}: {c.description}" for c in labels.types + labels.regions)
    return text


def _classes(labels, classes, yokai: bool) -> str:
    if yokai:
        text = ", ".join(c.name for c in classes)
        glossed = labels.name not in PAPER_CLASSES
        return text + ("\n" + "\n".join(f"{c.name}: {c.description}" for c in classes) if glossed else "")
    return "\n".join(f"- {c.name}: {c.description}" for c in classes)


def label_step_prompt(language: str, labels, step: str) -> str:
    """The prompt of one of the paper's two label steps (``label-type``: the type from the
    question; ``label-region``: the regions from the article) with the classes of ``labels``."""
    yokai = yokai_prompts(language, labels)
    field = "types" if step == "label-type" else "regions"
    classes = _classes(labels, labels.types if step == "label-type" else labels.regions, yokai)
    return mcq_prompt(language, step, labels.subject, yokai=yokai, paper=True, **{field: classes})


def region_step_schema(labels) -> dict:
    """The JSON schema of the paper's region step: one or more region classes of ``labels``."""
    names = {"type": "array", "items": {"enum": labels.region_names}, "minItems": 1}
    return {"type": "object", "required": ["regions"], "properties": {"regions": names}}


def label_schema(labels) -> dict:
    """The label step's JSON schema: the classes of ``labels`` as enums (type only when the
    region comes from Wikidata)."""
    if labels.region_source == WIKIDATA:
        return {"type": "object", "required": ["type"], "properties": {"type": {"enum": labels.type_names}}}
    return {
        "type": "object",
        "required": ["type", "region"],
        "properties": {"type": {"enum": labels.type_names}, "region": {"enum": labels.region_names}},
    }


def prompt_sha1(
    language: str, region_source: str = "model", yokai: bool = False, *, label_steps: int = 1, abstain: bool = True
) -> str:
    """The hash of the prompts of one build (stored in each row and the cache key): those
    :func:`mcq_prompts_used` gives (the yokai prompts when ``yokai``: ``prompt_sha1("ja",
    yokai=True)`` is the ``yokai-ja`` builds' hash as it always was), with the language code
    for the English instructions."""
    prompts = mcq_prompts_used(yokai, region_source, label_steps, abstain)
    blob = "\x00".join(f"{k}={v}" for k, v in sorted(prompts.items()))
    if not yokai:
        blob += f"\x00language={language}"
    return hashlib.sha1(blob.encode()).hexdigest()


# WikiOriginQA's prompts (instructions in the item's language) are in freeform_prompts.py.
from .freeform_prompts import FREEFORM_PROMPTS, freeform_sha1  # noqa: E402,F401
