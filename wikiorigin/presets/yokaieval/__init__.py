"""YokaiEval (Tsutsumi & Jinnai, 2025), a culture's preset like any other: the list page its
corpus starts from, its classes (:mod:`.classes`), its own Japanese prompts (:mod:`.prompts`),
the adapters of its released rows (:mod:`.released`) and its labels presets (``yokai-ja``,
the default for its Japanese list-page corpora, and ``yokaieval``, the classes its authors
labelled with). The core finds it by name through :mod:`wikiorigin.presets`; nothing in the
core names it."""

from __future__ import annotations

from .. import Culture, PromptSet
from . import prompts, released
from .classes import ENGLISH, REGIONS, TYPES
from .released import REGION_LETTERS, clean_region

__all__ = ["CULTURE", "LIST_PAGE", "LANGUAGE", "TYPES", "REGIONS", "MCQ_TYPES", "MCQ_REGIONS", "REGION_LETTERS"]
__all__ += ["clean_region"]

LANGUAGE = "ja"
"""The language of its questions, prompts and list page."""

LIST_PAGE = "日本の妖怪一覧"
"""The jawiki list page the YokaiEval corpus starts from."""

MCQ_TYPES = TYPES
"""The types under their name in ``wikiorigin.schemas`` before they moved here."""
MCQ_REGIONS = REGIONS
"""The regions under their name in ``wikiorigin.schemas`` before they moved here."""

CULTURE = Culture(
    name="yokaieval",
    language=LANGUAGE,
    list_page=LIST_PAGE,
    labels=("yokai-ja", "yokaieval"),
    types=tuple(TYPES),
    regions=tuple(REGIONS),
    english=ENGLISH,
    prompts=PromptSet(
        name="yokai-ja",
        language=LANGUAGE,
        steps=prompts.STEPS,
        type_only=prompts.TYPE_ONLY,
        paper_steps=prompts.PAPER_STEPS,
        answer_label=prompts.ANSWER_LABEL,
        unglossed=("yokai-ja", "yokaieval"),
    ),
    clean_region=clean_region,
    released_license="cc-by-nc-sa-4.0",
    instruction_marks=released.INSTRUCTION_MARKS,
)
"""What the core looks up by name (:func:`wikiorigin.presets.culture`)."""
