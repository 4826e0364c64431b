"""Evaluation of language models on the datasets. A task object holds the questions and the
settings, runs a model and returns a result that saves itself (:class:`MCQTask`,
:class:`FreeformTask`, :class:`JudgeTask`, :class:`LeakageTask`, in
:mod:`~wikiorigin.evaluators.tasks`; :class:`Recorded` answers in place of a model; any object
with the capability a task needs and a ``describe()`` of itself is a model:
:mod:`wikiorigin.protocols`).

Beneath them, the functions they call: a model (`LocalModel` through transformers,
`EndpointModel` through an OpenAI-compatible server) answers multiple-choice questions
(`evaluate_generate`, `evaluate_loglikelihood`), free-form questions (`evaluate_freeform`) or
is judged by another (`judge_answers`); `leakage_check` compares how well a model predicts
articles and their paraphrases. Each ``summarize*`` function turns scored items into a summary
and each ``write_*_results`` writes a run (Parquet, JSON, Markdown, plot); `compare_runs` puts
runs side by side. Names are imported on first use.
"""

from .._lazy import attach as _attach

_EXPORTS = {
    "MCQTask": ".tasks",
    "FreeformTask": ".tasks",
    "JudgeTask": ".tasks",
    "LeakageTask": ".tasks",
    "Recorded": ".recorded",
    "RunResult": ".results",
    "Summary": ".results",
    "LocalModel": ".models",
    "EndpointModel": ".models",
    "read_questions": ".mcq",
    "evaluate_generate": ".mcq",
    "evaluate_loglikelihood": ".mcq",
    "summarize": ".mcq",
    "write_mcq_results": ".mcq",
    "parse_choice": ".mcq",
    "read_freeform": ".freeform",
    "evaluate_freeform": ".freeform",
    "summarize_freeform": ".freeform",
    "write_freeform_results": ".freeform",
    "judge_answers": ".judge",
    "summarize_judged": ".judge",
    "write_judge_results": ".judge",
    "read_texts": ".leakage",
    "paraphrase": ".leakage",
    "leakage_check": ".leakage",
    "write_leakage_results": ".leakage",
    "compare_runs": ".report",
    "read_summary": ".report",
}
__all__ = list(_EXPORTS)
__getattr__, __dir__ = _attach(__name__, _EXPORTS)
