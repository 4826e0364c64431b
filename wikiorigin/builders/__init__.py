"""Dataset builders: a chat model (`wikiorigin.llm`) writes multiple-choice questions
(`build_mcq`, settings in `MCQConfig`), free-form questions (`build_freeform`, `FreeformConfig`)
and preference pairs (`build_preferences`) from an article corpus. Each ``plan_*`` function
counts the requests (and their worst-case cost) without sending any; `write_card` writes the
dataset card. Names are imported on first use.
"""

from .._lazy import attach as _attach

_EXPORTS = {
    "MCQConfig": ".mcq", "MCQReport": ".mcq", "build_mcq": ".mcq", "plan_mcq": ".mcq",
    "FreeformConfig": ".freeform", "build_freeform": ".freeform", "plan_freeform": ".freeform",
    "build_preferences": ".preference", "build_rated_preferences": ".preference", "plan_preferences": ".preference",
    "PRESETS": ".presets", "Preset": ".presets",
    "write_card": ".dataset",
}
__all__ = list(_EXPORTS)
__getattr__, __dir__ = _attach(__name__, _EXPORTS)
