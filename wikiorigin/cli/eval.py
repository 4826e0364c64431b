"""The evaluation stage's commands: ``eval mcq``, ``freeform``, ``judge``, ``leakage`` and
``compare``. Each turns its options into a task (:mod:`wikiorigin.evaluators.tasks`) and a
model, runs it and saves the result (items.parquet, summary.json, report.md, plots), holding
``OUT.lock`` while it runs, then says one line."""

from __future__ import annotations

import functools
import sys

from ..errors import WikioriginError
from .options import (
    flags,
    llm_client,
    llm_options,
    model,
    model_options,
    positive,
    rating_scale,
    sampling,
    speaks_flags,
)
from .outcome import print_usage, requests_outcome

__all__ = ["add_commands"]


_INPUTS = ("questions", "responses", "human_ratings", "articles", "paraphrases", "external", "cache")
"""The options that name files an eval command reads: its results directory is none of them."""


def _locked(func, args) -> int:
    """Run an eval command holding ``OUT.lock`` (two runs never write one results directory),
    its library errors in the command line's words. The results directory is checked first,
    before a file is read, a model loaded or a server called
    (:func:`~wikiorigin.evaluators.results.check_directory`: not a file, writable, none of the
    command's inputs, then its lock free)."""
    from ..evaluators.results import COMPARISON_FILES, RESULT_FILES, check_directory
    from ..llm.lock import RunLock

    files = COMPARISON_FILES if args.evaluator == "compare" else RESULT_FILES
    check_directory(args.out, [getattr(args, name, None) for name in _INPUTS], files)
    with RunLock(args.out) as lock:
        return speaks_flags(func)(args, lock)


def _num(value, spec: str = ".3f") -> str:
    """A figure of the closing line (none: ``–``, a run whose every request failed)."""
    return "–" if value is None or value != value else format(value, spec)


def _saved(kind: str, result, args, lock, line: str) -> int:
    """Save ``result`` into ``--out`` (under the run's ``lock``), say its closing line, and
    return its status from the LLM clients it used (an endpoint model, a judge, a
    paraphraser): 1 when every request failed."""
    result.save(args.out, lock=lock)
    if not result.complete:
        line += f" (complete: false: {result.summary.failed} items unanswered, left out of the figures)"
    print(f"{kind}: {line} -> {args.out}/ (items.parquet, summary.json, report.md)")
    print_usage([(client.backend.model, client) for client in result.clients if client is not None])
    return requests_outcome(
        list(result.clients), f"{args.out}/items.parquet", flags(args), allow_failures=args.allow_failures
    )


def add_commands(sub) -> None:
    """Register ``eval`` and its sub-commands under ``sub``."""
    s = sub.add_parser("eval", help="evaluate models on the datasets")
    evals = s.add_subparsers(dest="evaluator", required=True)

    def command(name, help_text, func):
        e = evals.add_parser(name, help=help_text)
        e.set_defaults(func=functools.partial(_locked, func))
        return e

    _add_mcq(command("mcq", "multiple choice: generation + answer parsing, or log-likelihoods", cmd_eval_mcq))
    _add_freeform(
        command("freeform", "free-form answers: exact match and chrF against the item's names", cmd_eval_freeform)
    )
    _add_judge(command("judge", "1-10 ratings by an LLM judge against CARE reference answers", cmd_eval_judge))
    _add_leakage(
        command("leakage", "perplexity of articles against paraphrases (training-data leakage)", cmd_eval_leakage)
    )
    _add_compare(
        command(
            "compare",
            "runs ranked with paired tests (McNemar, permutation), per-model bars, and a "
            "scatter against external scores",
            cmd_eval_compare,
        )
    )


def _max_length(e) -> None:
    """``--max-length``: the context log-probabilities are scored in (eval mcq, eval leakage)."""
    e.add_argument(
        "--max-length",
        type=positive(int),
        default=None,
        metavar="N",
        help="log-probabilities: the model's context in tokens, texts longer scored in windows (default: a "
        "local model's own; an endpoint's max_model_len in /v1/models less 2, as vLLM lists it)",
    )


# --- mcq ---------------------------------------------------------------------------------------


def _add_mcq(e) -> None:
    e.add_argument(
        "--questions",
        default=None,
        help="mcq.parquet or released YokaiEval rows (JSON/Parquet); with --responses, the rows "
        "the responses are joined to (type, region; questions without a response count "
        "as unanswered)",
    )
    e.add_argument(
        "--responses",
        default=None,
        help="recorded responses to score instead of asking a model: a released responses "
        "file, the released human answers, or rows with a `response`",
    )
    e.add_argument(
        "--mode",
        choices=("generate", "loglikelihood"),
        default="generate",
        help="generate: ask and read the answer; loglikelihood: score each option (a local model, or "
        "--endpoint with echo + logprobs on /v1/completions: vLLM, llama-cpp-python's server)",
    )
    e.add_argument(
        "--language",
        default=None,
        help="the language of the instruction line, answer cue and delimiter: the code of any open "
        "Wikipedia (default: the rows' own language, the released YokaiEval rows' from their wiki: ja; "
        "rows that say none need it; English lines where ours has none)",
    )
    e.add_argument(
        "--instruction",
        default=None,
        help="line after the options (default: ours for --language; '' for none, as released)",
    )
    e.add_argument(
        "--answer-cue",
        default=None,
        help="log-likelihood mode: what follows the options before each option (default: ours for "
        "--language, e.g. '\\n回答：', '\\nAnswer:'; \\n is a new line)",
    )
    e.add_argument("--judge-model", default=None, help="an LLM that reads the answers the parser cannot")
    e.add_argument(
        "--thinking",
        choices=("on", "off", "template-default"),
        default="template-default",
        help="generation with a local model whose chat template can think (Qwen3-style "
        "enable_thinking): switch its reasoning on or off (recorded in the signature); "
        "a thinking model needs a --max-new-tokens budget for its trace (the paper's 128 cuts "
        "it off: a cut response is no answer, counted as truncated). Endpoints: --reasoning-effort",
    )
    _max_length(e)
    model_options(e, required=False)
    llm_options(e)


def _mcq_task(args):
    """The options' multiple-choice task (its rules checked before a file is read or a model
    loaded), and what answers it: a model, or the recorded responses."""
    from ..evaluators.recorded import Recorded
    from ..evaluators.tasks import MCQTask

    if not args.questions and not args.responses:
        raise WikioriginError("give --questions FILE, --responses FILE, or both")
    if args.responses and (args.model or args.endpoint):
        raise WikioriginError(
            "--responses scores recorded answers instead of asking a model: give --responses or --model, not both"
        )
    if args.mode == "loglikelihood" and args.thinking != "template-default":
        raise WikioriginError("--thinking is for generation mode: log-likelihoods use no chat template")
    if args.mode == "generate" and args.thinking != "template-default" and (args.endpoint or not args.model):
        raise WikioriginError(
            "--thinking switches a local model's chat template (--model PATH); for an endpoint "
            "give --reasoning-effort, or set the server's chat template defaults"
        )
    if args.mode == "loglikelihood" and not args.model:
        raise WikioriginError("log-likelihood mode needs a model: --model PATH, or --model NAME --endpoint URL")
    generating = args.mode == "generate"
    cue = None if args.answer_cue is None else args.answer_cue.replace("\\n", "\n")
    settings = dict(
        mode=args.mode,
        language=args.language,
        instruction=args.instruction if generating else None,
        cue=None if generating else cue,
        **(sampling(args) if generating else {}),
    )
    if args.judge_model:
        settings["judge"] = llm_client(args, args.judge_model)
    task = MCQTask.from_file(args.questions or args.responses, **settings)  # settings checked first
    if args.responses:
        return task, Recorded(args.responses)
    if not args.model:
        return task, Recorded()  # the responses the rows carry
    if args.mode == "loglikelihood" or args.instruction is None:
        task.prompt_language()  # the rows say theirs, or --language does: before the model loads
    m = model(args)
    if args.thinking != "template-default":
        m.set_thinking(args.thinking)
    return task, m


def cmd_eval_mcq(args, lock) -> int:
    """`wikiorigin eval mcq`: a multiple-choice set answered by a model (generation or log-likelihood) or recorded answers, scored."""
    from ..evaluators.recorded import join_said

    task, answering = _mcq_task(args)
    result = task.run(answering)
    if result.join is not None:
        print(join_said(args.responses, result.join), file=sys.stderr)
    summary = result.summary
    extra = (
        f", parser read {_num(summary.coverage, '.1%')}"
        if "coverage" in summary
        else f", acc {_num(summary.acc)}, acc_norm {_num(summary.acc_norm)}"
    )
    return _saved("mcq", result, args, lock, f"{summary.n} questions, accuracy {_num(summary.accuracy)}{extra}")


# --- freeform ----------------------------------------------------------------------------------


def _add_freeform(e) -> None:
    e.add_argument("--questions", required=True, help="freeform.parquet")
    e.add_argument("--source-language", action="store_true", help="ask in the item's language")
    model_options(e)
    llm_options(e)
    e.set_defaults(temperature=0.0, max_new_tokens=32)


def cmd_eval_freeform(args, lock) -> int:
    """`wikiorigin eval freeform`: free-form questions answered by a model, scored by exact match and chrF."""
    from ..evaluators.tasks import FreeformTask

    task = FreeformTask.from_file(args.questions, source_language=args.source_language, **sampling(args))
    result = task.run(model(args))
    s = result.summary
    return _saved(
        "freeform",
        result,
        args,
        lock,
        f"{s.n} questions, exact {_num(s.exact)}, chrF {_num(s.chrf, '.1f')}, failed {s.failed}",
    )


# --- judge -------------------------------------------------------------------------------------


def _add_judge(e) -> None:
    e.add_argument("--questions", required=True, help="a CARE test file (or rows with a `response`)")
    e.add_argument("--judge-model", required=True, help="the LLM that rates each answer 1-10")
    e.add_argument(
        "--human-ratings",
        default=None,
        metavar="FILE",
        help="people's ratings of responses (JSON, JSON Lines, CSV or Parquet with question, model, "
        "response, rating): the judge's agreement with them (Pearson, Spearman, Kendall, with "
        "intervals); without --model or recorded responses, the judge rates these responses",
    )
    e.add_argument(
        "--rating-scale",
        type=rating_scale,
        default=None,
        metavar="LOW-HIGH",
        help="the scale of the --human-ratings (default: CARE's 1-10); a rating outside it is an error "
        "naming the file and row, before any request",
    )
    model_options(e, required=False)
    llm_options(e)
    e.set_defaults(temperature=0.7, max_new_tokens=512)


def cmd_eval_judge(args, lock) -> int:
    """`wikiorigin eval judge`: CARE answers rated 1-10 by an LLM judge against the references."""
    from ..evaluators.recorded import Recorded
    from ..evaluators.tasks import JudgeTask

    task = JudgeTask.from_file(
        args.questions,
        judge=llm_client(args, args.judge_model),
        human_ratings=args.human_ratings,
        **({"rating_scale": args.rating_scale} if args.rating_scale else {}),
        **sampling(args),
    )
    if not args.model and not task.human_ratings and not all(r.get("response") for r in task.rows):
        raise WikioriginError(
            f"{args.questions}: no --model given and the rows carry no `response` (nor --human-ratings FILE to rate)"
        )
    result = task.run(model(args) if args.model else Recorded())
    summary = result.summary
    unmatched = (summary.get("agreement") or {}).get("unmatched")
    if unmatched:
        print(
            f"{args.human_ratings}: {unmatched} rated responses not compared (no such question and answer here)",
            file=sys.stderr,
        )
    return _saved(
        "judge",
        result,
        args,
        lock,
        f"{summary.rated} of {summary.n} answers rated, mean {_num(summary.mean, '.2f')}{_agreement_said(summary)}",
    )


def _agreement_said(summary: dict) -> str:
    """The closing line's words on the judge's agreement with people's ratings (none asked: empty)."""
    found = summary.get("agreement")
    if found is None:
        return ""
    if found["pearson"]["r"] is None:
        return f", {found['n']} ratings shared with people's: too few or all alike to correlate"
    return f", Pearson r with people's ratings {found['pearson']['r']:.3f} over {found['n']}"


# --- leakage -----------------------------------------------------------------------------------


def _add_leakage(e) -> None:
    e.add_argument("--articles", required=True, help="articles.parquet (title, text)")
    e.add_argument("--paraphrases", default=None, help="Parquet/JSON with title, paraphrase")
    e.add_argument("--paraphrase-model", default=None, help="an LLM that writes the paraphrases")
    e.add_argument("--max-chars", type=positive(int), default=1500, help="the passage of each article compared")
    chosen = e.add_mutually_exclusive_group()
    chosen.add_argument(
        "--sample",
        type=_sample_size,
        default=20,
        metavar="N",
        help="N articles drawn at random with --seed (default 20, as the YokaiEval paper; "
        "'all': every one), the same for the same N and seed whatever the rows' order; "
        "with --paraphrases, among the articles the file paraphrases",
    )
    chosen.add_argument(
        "--limit",
        type=positive(int),
        default=None,
        help="the first N articles in file order instead of a random sample",
    )
    e.add_argument(
        "--windows",
        choices=("overlap", "disjoint"),
        default="overlap",
        help="texts longer than the model's context: overlapping windows (default; every token "
        "after at least half a context) or lm-evaluation-harness's disjoint ones",
    )
    e.add_argument(
        "--stride",
        type=positive(int),
        default=None,
        help="tokens each overlapping window predicts (default half the model's context)",
    )
    _max_length(e)
    model_options(e)
    llm_options(e)


def _sample_size(text: str):
    """``--sample``: a whole number > 0, or ``all`` (None: every article)."""
    return None if text == "all" else positive(int)(text)


def cmd_eval_leakage(args, lock) -> int:
    """`wikiorigin eval leakage`: perplexity of articles against paraphrases under a local model or an
    endpoint (echo + logprobs on /v1/completions)."""
    from ..evaluators.tasks import LeakageTask

    if not args.paraphrases and not args.paraphrase_model:
        raise WikioriginError("give --paraphrases FILE or --paraphrase-model NAME")
    paraphraser = None if args.paraphrases else llm_client(args, args.paraphrase_model)
    task = LeakageTask.from_file(
        args.articles,
        paraphrases=args.paraphrases,
        paraphraser=paraphraser,
        max_chars=args.max_chars,
        sample=args.sample,
        limit=args.limit,
        seed=args.seed,
        windows=args.windows,
        stride=args.stride,
    )
    result = task.run(model(args))
    s = result.summary
    return _saved(
        "leakage",
        result,
        args,
        lock,
        f"{s.n} articles, mean difference {_num(s.mean_difference, '.4f')} "
        f"NLL/char, p = {_num(s.p_value, '.3g')}, r = {_num(s.rank_biserial)}",
    )


# --- compare -----------------------------------------------------------------------------------


def _add_compare(e) -> None:
    e.add_argument("runs", nargs="+", help="results directories of `wikiorigin eval ...`")
    e.add_argument("--out", required=True, help="directory for comparison.md and the plots")
    e.add_argument("--metric", default="accuracy", help="a key of summary.json (accuracy, chrf, mean, ...)")
    e.add_argument("--external", default=None, help="CSV with columns model,score (e.g. JMT-Bench)")
    e.add_argument("--external-name", default="external score", help="the external column's name")
    e.add_argument(
        "--allow-failures",
        action="store_true",
        help="compare incomplete runs (complete: false) too: each pair on the items both runs "
        "answered, the others left out and counted; without it such a run is refused",
    )


def cmd_eval_compare(args, lock) -> int:
    """`wikiorigin eval compare`: several runs over the same items ranked, every pair tested on the
    questions both answered, with published figures and warnings where settings differ
    (``lock``: ``OUT.lock``, held while it writes). Runs over different items, and incomplete
    runs without ``--allow-failures``, are refused (exit 2)."""
    from ..evaluators.compare import compare
    from ..evaluators.paired import ALPHA

    comparison = compare(
        args.runs,
        metric=args.metric,
        external=args.external,
        external_name=args.external_name,
        allow_failures=args.allow_failures,
    )
    comparison.save(args.out, lock=lock)
    result = comparison.as_dict()
    print(result["ranking"])
    for note in result["notes"]:
        print(f"note: {note}")
    for upper, lower in result["ties"]:
        print(f"cannot tell apart: {upper} and {lower} (Holm-corrected p >= {ALPHA})")
    extra = f", Pearson r {result['pearson']:.3f}" if "pearson" in result else ""
    print(
        f"{len(result['models'])} runs compared{extra}, {len(result['pairs'])} pairs tested"
        + (f" ({len(result['unpaired'])} not paired)" if result["unpaired"] else "")
        + f" -> {args.out}/ (comparison.md, comparison.json, models.png"
        + (", scatter.png)" if extra else ")")
    )
    return 0
