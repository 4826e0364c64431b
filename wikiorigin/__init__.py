"""wikiorigin: culture-specific QA datasets from Wikipedia and Wikidata dumps, and the evaluation
of language models on them.

The stages, each an object or a function that reads and writes files (Parquet between stages):

1. **scan** a wiki's dumps into page creations: `wikiorigin.dumps.scan_to_parquet`;
2. **origins**: which Wikipedia edition wrote about each Wikidata item first:
   ``OriginsRun(OriginsConfig(...)).run(tree, out)`` returning an `OriginsResult`
   (`wikiorigin.origin`; `build_origins` in one call);
3. **corpora**: the articles of one origin, or of a list page: `OriginCorpusRun`,
   `ListCorpusRun` (each with its config) returning a `CorpusResult` (`wikiorigin.corpora`;
   `build_origin_corpus`, `build_list_corpus` in one call);
4. **builders**: multiple-choice, free-form and preference sets written by a chat model:
   `MCQBuilder`, `FreeformBuilder`, `PreferenceBuilder`, each ``Builder(config).run(inputs,
   llm)`` returning a result that saves itself (`wikiorigin.builders`; chat models in
   `wikiorigin.llm`, any function as one with `FunctionBackend`);
5. **evaluators**: a task holds the questions and its settings, runs a model (`LocalModel`,
   `EndpointModel`, or `Recorded` answers) and returns a result that saves itself: `MCQTask`,
   `FreeformTask`, `JudgeTask`, `LeakageTask` (`wikiorigin.evaluators`); the functions beneath
   them (`evaluate_generate`, ...) stay importable; `compare` puts runs side by side, in
   memory or saved, and returns a `Comparison` (its pairs tested, its ranking, ``save``).

Every result carries a ``signature`` of what ran and saves itself (``save``).

The extension points are `typing.Protocol` s (`wikiorigin.protocols`), one per capability: a
model that generates (`GeneratingModel`), scores log-likelihoods (`LoglikelihoodModel`), gives
token log-probabilities (`TokenLogprobsModel`) or judges (`Judge`), each saying what it is with
``describe()`` (its signature is that description, nothing probed); `ChatBackend` for the chat
models the builders use. Every run that writes (a builder's ``run(..., out=)``, a result's
``save``) holds `guarded_run`: one run per output, outputs checked against inputs and cache,
what a killed run left swept. The library prints nothing: it logs to the ``wikiorigin`` logger
(`wikiorigin.log`) and raises `WikioriginError` (`ParameterError` names the parameter to give).

Every name below, and every sub-package (``wo.evaluators``, ``wo.dumps``, ...), is imported on
first use, so ``import wikiorigin`` loads nothing heavy. From the repository's root (the
example runs in ``tests/test_api_docs.py``)::

    import wikiorigin as wo

    # the origin of each Wikidata item in the bundled dump tree
    result = wo.OriginsRun(wo.OriginsConfig()).run("tests/data/tree", "work/origins.parquet")
    print(result.origins.items, "items;", result.origins.tied, "tied")

    # a released YokaiEval responses file (.json or .json.xz), scored without a model
    task = wo.MCQTask.from_file("tests/data/yokaieval/responses-gpt4o-mini.json.xz")
    result = task.run(wo.Recorded())  # the responses its rows carry
    print(result.summary.accuracy)

The command line (``wikiorigin --help``) runs the same objects.
"""

__version__ = "0.1.0"

from ._lazy import attach as _attach

_EXPORTS = {
    "scan_to_parquet": ".dumps.scan",
    "build_origins": ".origin",
    "reduce_origins": ".origin",
    "join_editions": ".origin",
    "OriginsConfig": ".origin",
    "OriginsRun": ".origin",
    "OriginsResult": ".origin",
    "OriginCorpusConfig": ".corpora.origin",
    "OriginCorpusRun": ".corpora.origin",
    "ListCorpusConfig": ".corpora.list_run",
    "ListCorpusRun": ".corpora.list_run",
    "CorpusResult": ".corpora.result",
    "build_origin_corpus": ".corpora.origin",
    "build_list_corpus": ".corpora.yokai",
    "MCQBuilder": ".builders.mcq",
    "FreeformBuilder": ".builders.freeform",
    "PreferenceBuilder": ".builders.preference",
    "PreferenceConfig": ".builders.preference",
    "MCQConfig": ".builders.mcq",
    "build_mcq": ".builders.mcq",
    "FreeformConfig": ".builders.freeform",
    "build_freeform": ".builders.freeform",
    "build_preferences": ".builders.preference",
    "build_rated_preferences": ".builders.preference",
    "LLMClient": ".llm",
    "OpenAIBackend": ".llm",
    "TransformersBackend": ".llm",
    "MCQTask": ".evaluators.tasks",
    "FreeformTask": ".evaluators.tasks",
    "JudgeTask": ".evaluators.tasks",
    "LeakageTask": ".evaluators.tasks",
    "Recorded": ".evaluators.recorded",
    "LocalModel": ".evaluators.models",
    "EndpointModel": ".evaluators.models",
    "read_questions": ".evaluators.mcq",
    "evaluate_generate": ".evaluators.mcq",
    "evaluate_loglikelihood": ".evaluators.mcq",
    "read_freeform": ".evaluators.freeform",
    "evaluate_freeform": ".evaluators.freeform",
    "judge_answers": ".evaluators.judge",
    "leakage_check": ".evaluators.leakage",
    "compare": ".evaluators.compare",
    "Comparison": ".evaluators.compare",
    "EvaluatedModel": ".protocols",
    "GeneratingModel": ".protocols",
    "LoglikelihoodModel": ".protocols",
    "TokenLogprobsModel": ".protocols",
    "Judge": ".protocols",
    "guarded_run": ".runs",
    "ChatBackend": ".protocols",
    "FunctionBackend": ".llm",
    "WikioriginError": ".errors",
    "ParameterError": ".errors",
}
__all__ = list(_EXPORTS)
_SUBMODULES = (
    "dumps",
    "origin",
    "corpora",
    "builders",
    "evaluators",
    "llm",
    "schemas",
    "files",
    "languages",
    "wikitext",
    "care",
    "export_lmeval",
    "errors",
    "testing",
    "protocols",
    "presets",
    "runs",
    "log",
)
__getattr__, __dir__ = _attach(__name__, _EXPORTS, _SUBMODULES)
