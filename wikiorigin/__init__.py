"""wikiorigin: culture-specific QA datasets from Wikipedia and Wikidata dumps, and the evaluation
of language models on them.

The stages, each a function that reads and writes files (Parquet between stages):

1. **scan** a wiki's dumps into page creations: `wikiorigin.dumps.scan_to_parquet`;
2. **origins**: which Wikipedia edition wrote about each Wikidata item first:
   `build_origins` (`wikiorigin.origin`);
3. **corpora**: the articles of one origin, or of a list page: `build_origin_corpus`,
   `build_list_corpus` (`wikiorigin.corpora`);
4. **builders**: multiple-choice, free-form and preference sets written by a chat model:
   `build_mcq` with `MCQConfig`, `build_freeform` with `FreeformConfig`, `build_preferences`
   (`wikiorigin.builders`; models in `wikiorigin.llm`);
5. **evaluators**: a local or served model answers them: `LocalModel`, `EndpointModel`,
   `evaluate_generate`, `evaluate_loglikelihood`, `evaluate_freeform`, `judge_answers`,
   `leakage_check` (`wikiorigin.evaluators`).

Every name below, and every sub-package (``wo.evaluators``, ``wo.dumps``, ...), is imported on
first use, so ``import wikiorigin`` loads nothing heavy. From the repository's root (the
example runs in ``tests/test_api_docs.py``)::

    import wikiorigin as wo

    # the origin of each Wikidata item in the bundled dump tree
    report = wo.build_origins("tests/data/tree", "work/origins.parquet")
    print(report.origins.items, "items;", report.origins.tied, "tied")

    # a released YokaiEval responses file (.json or .json.xz), scored without a model
    rows = wo.read_questions("tests/data/yokaieval/responses-gpt4o-mini.json.xz")
    items = wo.evaluate_generate(rows, recorded="gpt-4o-mini")
    print(wo.evaluators.summarize(items)["accuracy"])

The command line (``wikiorigin --help``) calls the same functions.
"""

__version__ = "0.1.0"

from ._lazy import attach as _attach

_EXPORTS = {
    "scan_to_parquet": ".dumps.scan",
    "build_origins": ".origin", "reduce_origins": ".origin", "join_editions": ".origin",
    "build_origin_corpus": ".corpora.origin", "build_list_corpus": ".corpora.yokai",
    "MCQConfig": ".builders.mcq", "build_mcq": ".builders.mcq",
    "FreeformConfig": ".builders.freeform", "build_freeform": ".builders.freeform",
    "build_preferences": ".builders.preference", "build_rated_preferences": ".builders.preference",
    "LLMClient": ".llm", "OpenAIBackend": ".llm", "TransformersBackend": ".llm",
    "LocalModel": ".evaluators.models", "EndpointModel": ".evaluators.models",
    "read_questions": ".evaluators.mcq", "evaluate_generate": ".evaluators.mcq",
    "evaluate_loglikelihood": ".evaluators.mcq",
    "read_freeform": ".evaluators.freeform", "evaluate_freeform": ".evaluators.freeform",
    "judge_answers": ".evaluators.judge", "leakage_check": ".evaluators.leakage",
    "WikioriginError": ".errors",
}
__all__ = list(_EXPORTS)
_SUBMODULES = ("dumps", "origin", "corpora", "builders", "evaluators", "llm", "schemas", "files",
               "languages", "wikitext", "care", "export_lmeval", "errors", "testing")
__getattr__, __dir__ = _attach(__name__, _EXPORTS, _SUBMODULES)
