"""The question builders' prompts, written for wikiorigin: the MCQ builder's, in English
naming the language the question is written in, for every build but those whose labels ask for
a culture's own prompts (``"prompts": name``, found by name through
:mod:`wikiorigin.presets`: ``yokai-ja``, YokaiEval's Japanese prompts, for Japanese questions);
and the free-form builder's, from :mod:`wikiorigin.builders.freeform_prompts` (instructions in
the item's language). Each prompt's first line names its task, so logs and test servers can
tell them apart; :func:`prompt_sha1` and :func:`freeform_sha1` change when any text changes
(each row and the request cache key carry them).

The judge prompts are not here: CARE's rating judge (used by the preference builder and the
judge evaluator) is in :mod:`wikiorigin.care`, beside its rubrics and rating parser."""

from __future__ import annotations

import hashlib

from ..labels import WIKIDATA
from ..languages import language_name
from ..presets import PromptSet, by_prompts
from ..schemas import FREEFORM_CRITERIA as CRITERIA

__all__ = [
    "MCQ_PROMPTS_ANY",
    "MCQ_TYPE_ONLY",
    "MCQ_PAPER_STEPS",
    "mcq_prompts_used",
    "own_prompts",
    "mcq_prompt",
    "label_prompt",
    "label_schema",
    "label_step_prompt",
    "region_step_schema",
    "prompt_sha1",
    "FREEFORM_PROMPTS",
    "CRITERIA",
    "freeform_sha1",
]

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
"""The MCQ builder's prompts for every language (unless the labels ask for a culture's own
prompts in the questions' language), by step: English instructions naming the target ``{language}`` (its English
name) and the ``{subject}``; ``generate`` shows five example questions of our own on subjects
of several cultures (a custom, a dish, a craft, a legend, a recent tradition)."""

# The label step when the region comes from Wikidata (the labels file says "regions":
# "wikidata"): the model gives the type only.
MCQ_TYPE_ONLY = {
    "any": (
        "task: label\n"
        "Classify the question (in {language}). type is one of these classes:\n{types}\n"
        'Answer with JSON only, the class name as written: {{"type": ...}}'
    ),
}
"""The label step's prompt when the region comes from Wikidata (type only), with the
any-language prompts (``any``; a culture's own prompts carry theirs)."""


# The paper's own ways of two steps, used where a build asks for them (as the ``yokaieval``
# build preset does): a checker that must choose an option (no way out), and labels in two calls, the
# type from the question alone and the region(s) from the article alone.
MCQ_PAPER_STEPS = {
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
``label_steps=2``, ``checker_abstains=False``), with the any-language prompts (``any``; a
culture's own prompts carry theirs): ``check`` without the answer "null", ``label-type`` (from the
question alone) and ``label-region`` (from the article alone, one or more classes)."""


def mcq_prompts_used(
    own: PromptSet | None, region_source: str = "model", label_steps: int = 1, abstain: bool = True
) -> dict:
    """The MCQ prompts a build sends, by step: a culture's ``own`` or the any-language ones,
    the type-only label with Wikidata regions, and the paper's steps of
    :data:`MCQ_PAPER_STEPS` where asked."""
    prompts = dict(own.steps if own else MCQ_PROMPTS_ANY)
    paper = own.paper_steps if own else MCQ_PAPER_STEPS["any"]
    if region_source != "model":
        prompts["label"] = own.type_only if own else MCQ_TYPE_ONLY["any"]
    if label_steps == 2:
        del prompts["label"]
        prompts["label-type"] = paper["label-type"]
        if region_source == "model":
            prompts["label-region"] = paper["label-region"]
    if not abstain:
        prompts["check"] = paper["check"]
    return prompts


def own_prompts(language: str, labels=None) -> PromptSet | None:
    """The culture's own prompts that questions in ``language`` with ``labels``
    (:class:`~wikiorigin.labels.Labels`) get: those the labels ask for by name (their
    ``prompts``: :func:`wikiorigin.presets.by_prompts`), when written for ``language``; else
    None (the any-language prompts)."""
    found = by_prompts(labels.prompts) if labels is not None and labels.prompts else None
    return found if found is not None and found.language == language else None


def mcq_prompt(
    language: str, step: str, subject: str | None = None, *, own: PromptSet | None = None, paper: bool = False, **fields
) -> str:
    """The system prompt of one ``step``: the culture's ``own`` one when given (filled with
    ``fields``), or the English instructions filled with the English name of ``language``, the
    ``subject`` phrase (default: the article's subject) and ``fields``; ``paper``: the step's
    text of the paper's way (:data:`MCQ_PAPER_STEPS`)."""
    if own is not None:
        text = (own.paper_steps if paper else own.steps)[step]
        return text.format(**fields) if fields else text
    text = (MCQ_PAPER_STEPS["any"] if paper else MCQ_PROMPTS_ANY)[step]
    return text.format(language=language_name(language), subject=subject or "the article's subject", **fields)


def _glossed(labels, own: PromptSet) -> bool:
    """Whether a culture's own prompts gloss the classes of ``labels``: all but its own classes."""
    return labels.name not in own.unglossed


def label_prompt(language: str, labels) -> str:
    """The label step's prompt with the classes of ``labels`` (:class:`~wikiorigin.labels.Labels`):
    with a culture's own prompts the class names as its paper listed them (a gloss of each class
    added for labels other than its own), otherwise one ``- class: description`` line each;
    type only when the region comes from Wikidata."""
    own = own_prompts(language, labels)
    if own:
        types, regions = ", ".join(labels.type_names), ", ".join(labels.region_names)
    else:
        types = "\n".join(f"- {c.name}: {c.description}" for c in labels.types)
        regions = "\n".join(f"- {c.name}: {c.description}" for c in labels.regions)
    if labels.region_source == WIKIDATA:
        text = own.type_only if own else MCQ_TYPE_ONLY["any"]
        text = text.format(types=types) if own else text.format(types=types, language=language_name(language))
    else:
        text = mcq_prompt(language, "label", labels.subject, own=own, types=types, regions=regions)
    if own and _glossed(labels, own):
        text += "\n" + "\n".join(f"{c.name}: {c.description}" for c in labels.types + labels.regions)
    return text


def _classes(labels, classes, own: PromptSet | None) -> str:
    if own:
        text = ", ".join(c.name for c in classes)
        return text + ("\n" + "\n".join(f"{c.name}: {c.description}" for c in classes) if _glossed(labels, own) else "")
    return "\n".join(f"- {c.name}: {c.description}" for c in classes)


def label_step_prompt(language: str, labels, step: str) -> str:
    """The prompt of one of the paper's two label steps (``label-type``: the type from the
    question; ``label-region``: the regions from the article) with the classes of ``labels``."""
    own = own_prompts(language, labels)
    field = "types" if step == "label-type" else "regions"
    classes = _classes(labels, labels.types if step == "label-type" else labels.regions, own)
    return mcq_prompt(language, step, labels.subject, own=own, paper=True, **{field: classes})


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
    language: str,
    region_source: str = "model",
    own: PromptSet | None = None,
    *,
    label_steps: int = 1,
    abstain: bool = True,
) -> str:
    """The hash of the prompts of one build (stored in each row and the cache key): those
    :func:`mcq_prompts_used` gives (a culture's ``own`` prompts when given: YokaiEval's give the
    ``yokai-ja`` builds' hash as it always was), with the language code for the English
    instructions."""
    prompts = mcq_prompts_used(own, region_source, label_steps, abstain)
    blob = "\x00".join(f"{k}={v}" for k, v in sorted(prompts.items()))
    if own is None:
        blob += f"\x00language={language}"
    return hashlib.sha1(blob.encode()).hexdigest()


# WikiOriginQA's prompts (instructions in the item's language) are in freeform_prompts.py.
from .freeform_prompts import FREEFORM_PROMPTS, freeform_sha1  # noqa: E402,F401
