"""Dataset builders: a chat model (`wikiorigin.llm`) writes multiple-choice questions
(`MCQBuilder`, settings in `MCQConfig`), free-form questions (`FreeformBuilder`,
`FreeformConfig`) and preference pairs (`PreferenceBuilder`, `PreferenceConfig`) from an
article corpus (or CARE's questions). ``Builder(config).run(inputs, llm)`` returns a
`BuildResult` (the rows, the dropped rows with their reasons, one `BuildReport`, the
provenance) whose ``save(out)`` writes the set and ``OUT.failed.parquet`` together under
``OUT.lock``; ``plan`` counts the requests (and their worst-case cost) without sending any.
`build_mcq`, `build_freeform` and `build_preferences` run and save in one call. `write_card`
writes the dataset card. Names are imported on first use.
"""

from .._lazy import attach as _attach

_EXPORTS = {
    "MCQBuilder": ".mcq",
    "FreeformBuilder": ".freeform",
    "PreferenceBuilder": ".preference",
    "PreferenceConfig": ".preference",
    "BuildResult": ".result",
    "BuildReport": ".result",
    "MCQConfig": ".mcq",
    "MCQReport": ".mcq",
    "build_mcq": ".mcq",
    "plan_mcq": ".mcq",
    "FreeformConfig": ".freeform",
    "build_freeform": ".freeform",
    "plan_freeform": ".freeform",
    "build_preferences": ".preference",
    "build_rated_preferences": ".preference",
    "plan_preferences": ".preference",
    "PRESETS": ".presets",
    "Preset": ".presets",
    "write_card": ".dataset",
}
__all__ = list(_EXPORTS)
__getattr__, __dir__ = _attach(__name__, _EXPORTS)
