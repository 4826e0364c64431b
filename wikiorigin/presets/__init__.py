"""Cultures' presets, loaded by name: what a culture's dataset adds to the core.

The core (schemas, corpora, builders, evaluators, review) names no culture. What one culture
brings (the list page its corpus starts from, its type and region classes, its own prompts,
the adapters of the rows its authors released, the labels presets of its classes) is a
:class:`Culture` in a module of this package (``wikiorigin.presets.yokaieval``), found by name
through the registry below: :func:`culture` by the culture's name, and the lookups the core
makes by what a file says (:func:`by_prompts`: a labels file's ``prompts``; :func:`by_labels`:
a set's labels name; :func:`list_labels`: the default labels of a list-page corpus of a
language; :func:`released`: the culture whose released rows are in a language). Another
culture is one more module, added with :func:`register` (or to :data:`CULTURES`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["Culture", "PromptSet", "CULTURES", "register", "culture", "cultures"]
__all__ += ["by_prompts", "by_labels", "by_types", "list_labels", "released"]

CULTURES: dict[str, str] = {"yokaieval": "wikiorigin.presets.yokaieval"}
"""The cultures by name: the module whose ``CULTURE`` is each."""


@dataclass(frozen=True)
class PromptSet:
    """A culture's own prompts of the multiple-choice builder, in its ``language``, asked for
    by a labels file's ``"prompts": name``: the steps' prompts (``steps``: generate, check,
    attribute, label), the type-only label prompt (``type_only``: regions from Wikidata), the
    paper's ways of some steps (``paper_steps``: check, label-type, label-region), how the
    attribute request names the answer (``answer_label``) and the labels whose classes the
    prompts list without a gloss (``unglossed``)."""

    name: str
    language: str
    steps: dict[str, str]
    type_only: str
    paper_steps: dict[str, str]
    answer_label: str = "answer"
    unglossed: tuple[str, ...] = ()


@dataclass(frozen=True)
class Culture:
    """One culture's preset: its ``name``, the ``language`` of its list page and prompts, the
    ``list_page`` its corpus starts from, its labels presets (``labels``: the first is the
    default of its list-page corpora), the ``types`` and ``regions`` of its released rows and
    their ``english`` names (plots), its own ``prompts``, the adapter of its released rows'
    region labels (``clean_region``), their ``released_license``, and the words that open the
    instruction line of its released prompts (``instruction_marks``)."""

    name: str
    language: str
    list_page: str | None = None
    labels: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    regions: tuple[str, ...] = ()
    english: dict[str, str] = field(default_factory=dict)
    prompts: PromptSet | None = None
    clean_region: Callable[[object], str] | None = None
    released_license: str | None = None
    instruction_marks: tuple[str, ...] = ()


def register(name: str, module: str) -> None:
    """Make the culture ``name`` known: ``module`` (a dotted name) holds its ``CULTURE``."""
    CULTURES[name] = module


def culture(name: str) -> Culture:
    """The culture ``name``; a ``ValueError`` naming the cultures when there is none."""
    if name not in CULTURES:
        raise ValueError(f"no culture preset {name!r}: the cultures are {', '.join(sorted(CULTURES))}")
    found = importlib.import_module(CULTURES[name]).CULTURE
    if not isinstance(found, Culture):
        raise ValueError(f"{CULTURES[name]}: CULTURE is not a wikiorigin.presets.Culture")
    return found


def cultures() -> list[Culture]:
    """Every known culture, by name."""
    return [culture(name) for name in sorted(CULTURES)]


def by_prompts(name: str | None) -> PromptSet | None:
    """The prompts a labels file asks for by ``name`` (its ``prompts``), or None."""
    return next((c.prompts for c in cultures() if c.prompts and c.prompts.name == name), None)


def by_labels(name: str | None) -> Culture | None:
    """The culture whose labels preset is ``name``, or None."""
    return next((c for c in cultures() if name and name in c.labels), None)


def by_types(types) -> Culture | None:
    """The culture whose classes one of ``types`` (the rows' values) is, or None."""
    values = set(types)
    return next((c for c in cultures() if values & set(c.types)), None)


def list_labels(language: str) -> str | None:
    """The labels of a list-page corpus in ``language`` that names none: the labels of the
    culture whose list page is in that language, or None."""
    return next((c.labels[0] for c in cultures() if c.list_page and c.labels and c.language == language), None)


def released(language: str | None) -> Culture | None:
    """The culture whose released rows (rows without their own ``language``) are in
    ``language``, or None."""
    return next((c for c in cultures() if language and c.clean_region and c.language == language), None)
