"""The papers' method settings, by name: ``yokaieval``, ``wikioriginqa`` and ``care``.

A preset sets every *method* setting of one builder to what its paper used (sampling, output
limits, reasoning effort, rounds, pairing rule, the article length sent, where the answer goes,
how labels are asked); the models stay the user's choice. ``MCQConfig.from_preset(name,
**overrides)`` (likewise ``FreeformConfig``, ``PreferenceConfig``) makes the configuration
with the preset's settings, the ``overrides`` winning; another builder's preset, or a name no
preset has, is a ``ValueError``. Where a paper states no condition, the preset says what it
does instead: neither YokaiEval nor WikiOriginQA states a cut of the articles, so their presets
send each article whole (``max_article_chars`` 0); CARE gives its sampling for the open models
it ran with vLLM and none for its judge, so the judge samples as the responders do (our
choice). Without a preset the builders' own defaults apply, which follow the papers too except
where a paper's setting only fits the paper's model (WikiOriginQA's reasoning effort: a model
that does not reason refuses it). The preset's name (the configuration's read-only
``preset``) and every setting that ran are recorded in the output's provenance (and so in the
dataset card).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, TypeVar

__all__ = ["Preset", "PRESETS", "preset_for", "configured"]

_SAMPLING = {"temperature": 0.7, "top_p": 1.0}


@dataclass(frozen=True)
class Preset:
    """One paper's settings for ``builder`` (``mcq``, ``freeform`` or ``preference``):
    ``settings`` maps a field of the builder's configuration (``params``, ``rounds``,
    ``reasoning_effort``, ``max_article_chars``, ...) to the paper's value; ``source`` says
    where the values come from."""

    builder: str
    paper: str
    settings: dict = field(default_factory=dict)
    source: str = ""


PRESETS = {
    "yokaieval": Preset(
        "mcq",
        "YokaiEval (Tsutsumi & Jinnai, 2025)",
        {
            "params": {**_SAMPLING, "max_tokens": 200},
            "per_article": 1,
            "keep_unreferenced": False,
            "max_article_chars": 0,
            "answer_positions": "as-generated",
            "labels": "yokaieval",
            "label_steps": 2,
            "checker_abstains": False,
        },
        "every step (generation, check, footnotes, labels) at temperature 0.7, top_p 1.0 and at most "
        "200 output tokens; one question per article; questions without a footnote dropped; the whole "
        "article sent (the paper states no cut); answers where the generator put them (the released set "
        "is not balanced); the type labelled from the question and the regions from the article, in the "
        "paper's classes (labels yokaieval); a checker that must choose an option",
    ),
    "wikioriginqa": Preset(
        "freeform",
        "WikiOriginQA",
        {"reasoning_effort": "low", "rounds": 3, "instructions": "auto", "max_article_chars": 0},
        "GPT-5 with reasoning effort low (so no sampling parameter); instructions in the item's "
        "language; several refinement rounds; the whole article sent (the paper states no cut)",
    ),
    "care": Preset(
        "preference",
        "CARE",
        {
            "answer_params": {**_SAMPLING, "max_tokens": 1024},
            "judge_params": {**_SAMPLING, "max_tokens": 1024},
            "pairs": "best-worst",
        },
        "responses at temperature 0.7, top_p 1.0, at most 1,024 output tokens (CARE's setting for the "
        "open models it ran with vLLM; it gives none for its judge, which we sample the same way); per "
        "question the highest- against the lowest-rated response",
    ),
}
"""The presets by name."""

_CONFIGS = {"mcq": "MCQConfig", "freeform": "FreeformConfig", "preference": "PreferenceConfig"}


def preset_for(name: str | None, builder: str) -> Preset | None:
    """The preset ``name`` for ``builder`` (None for no preset); a ``ValueError`` naming the
    builder it belongs to when it is another builder's, or naming the presets when unknown."""
    if name is None:
        return None
    preset = PRESETS.get(name)
    if preset is None:
        ours = [n for n, p in PRESETS.items() if p.builder == builder]
        raise ValueError(
            f"{_CONFIGS[builder]}.from_preset: no preset {name!r}: the presets are {', '.join(PRESETS)} "
            f"({', '.join(ours)} for the {builder} builder)"
        )
    if preset.builder != builder:
        raise ValueError(
            f"{_CONFIGS[builder]}.from_preset: the preset {name!r} is {preset.paper}'s, for the "
            f"{preset.builder} builder ({_CONFIGS[preset.builder]}.from_preset), not the {builder} builder"
        )
    return preset


C = TypeVar("C")


def configured(cls: type[C], builder: str, name: str, overrides: dict[str, Any]) -> C:
    """``cls(...)`` with the settings of ``builder``'s preset ``name``, the ``overrides`` winning,
    that records the preset's name (its read-only ``preset``): what each configuration's
    ``from_preset`` does."""
    preset = preset_for(name, builder)
    if preset is None:
        raise ValueError(f"{cls.__name__}.from_preset: give the name of a preset ({', '.join(PRESETS)})")
    config = cls(**{**copy.deepcopy(preset.settings), **overrides})
    config._preset = name  # type: ignore[attr-defined]
    return config
