"""The evaluation stage's commands: ``eval mcq``, ``freeform``, ``judge``, ``leakage`` and
``compare``. Each turns its options (:mod:`.eval_options`) into a task
(:mod:`wikiorigin.evaluators.tasks`) and a model, and makes one library call that runs it and
saves the result (:func:`~wikiorigin.evaluators.results.saved_run`: items.parquet,
summary.json, report.md, plots; the directory checked, swept and locked by the library), then
says one line."""

from __future__ import annotations

import sys

from ..errors import WikioriginError
from .eval_options import add_freeform, add_judge, add_leakage, add_mcq
from .options import flags, llm_client, model, sampling, speaks_flags
from .outcome import print_usage, requests_outcome

__all__ = ["add_commands"]


_INPUTS = ("questions", "responses", "human_ratings", "articles", "paraphrases", "external")
"""The options that name files an eval command reads: its results directory is none of them
(nor of ``--cache``)."""


def _evaluated(args, make):
    """``make()`` gives the task and the model; the task run on the model and its result saved
    into ``--out``: the library's one call
    (:func:`~wikiorigin.evaluators.results.saved_run`), which checks the results directory
    before a file is read, a model loaded or a server called, and holds ``OUT.lock`` over the
    whole run. Returns the result, saved."""
    from ..evaluators.results import saved_run

    def run():
        task, answering = make()
        return task.run(answering)

    inputs = {name: getattr(args, name, None) for name in _INPUTS}
    return saved_run(args.out, run, inputs=inputs, cache=getattr(args, "cache", None))


def _num(value, spec: str = ".3f") -> str:
    """A figure of the closing line (none: ``–``, a run whose every request failed)."""
    return "–" if value is None or value != value else format(value, spec)


def _said(kind: str, result, args, line: str) -> int:
    """Say the closing line of a run saved into ``--out``, and return its status from the LLM
    clients it used (an endpoint model, a judge, a paraphraser): 1 when every request failed."""
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
        e.set_defaults(func=speaks_flags(func))
        return e

    add_mcq(command("mcq", "multiple choice: generation + answer parsing, or log-likelihoods", cmd_eval_mcq))
    add_freeform(
        command("freeform", "free-form answers: exact match and chrF against the item's names", cmd_eval_freeform)
    )
    add_judge(command("judge", "1-10 ratings by an LLM judge against CARE reference answers", cmd_eval_judge))
    add_leakage(
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


# --- mcq ---------------------------------------------------------------------------------------


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


def cmd_eval_mcq(args) -> int:
    """`wikiorigin eval mcq`: a multiple-choice set answered by a model (generation or log-likelihood) or recorded answers, scored."""
    from ..evaluators.recorded import join_said

    result = _evaluated(args, lambda: _mcq_task(args))
    if result.join is not None:
        print(join_said(args.responses, result.join), file=sys.stderr)
    summary = result.summary
    extra = (
        f", parser read {_num(summary.coverage, '.1%')}"
        if "coverage" in summary
        else f", acc {_num(summary.acc)}, acc_norm {_num(summary.acc_norm)}"
    )
    return _said("mcq", result, args, f"{summary.n} questions, accuracy {_num(summary.accuracy)}{extra}")


# --- freeform ----------------------------------------------------------------------------------


def cmd_eval_freeform(args) -> int:
    """`wikiorigin eval freeform`: free-form questions answered by a model, scored by exact match and chrF."""
    from ..evaluators.tasks import FreeformTask

    def make():
        task = FreeformTask.from_file(args.questions, source_language=args.source_language, **sampling(args))
        return task, model(args)

    s = (result := _evaluated(args, make)).summary
    return _said(
        "freeform",
        result,
        args,
        f"{s.n} questions, exact {_num(s.exact)}, chrF {_num(s.chrf, '.1f')}, failed {s.failed}",
    )


# --- judge -------------------------------------------------------------------------------------


def cmd_eval_judge(args) -> int:
    """`wikiorigin eval judge`: CARE answers rated 1-10 by an LLM judge against the references."""
    result = _evaluated(args, lambda: _judge_task(args))
    summary = result.summary
    unmatched = (summary.get("agreement") or {}).get("unmatched")
    if unmatched:
        print(
            f"{args.human_ratings}: {unmatched} rated responses not compared (no such question and answer here)",
            file=sys.stderr,
        )
    return _said(
        "judge",
        result,
        args,
        f"{summary.rated} of {summary.n} answers rated, mean {_num(summary.mean, '.2f')}{_agreement_said(summary)}",
    )


def _judge_task(args):
    """The options' judge task, and what it rates: a model's answers, or the recorded ones."""
    from ..evaluators.recorded import Recorded
    from ..evaluators.tasks import JudgeTask

    task = JudgeTask.from_file(
        args.questions,
        judge=llm_client(args, args.judge_model),
        human_ratings=args.human_ratings,
        judge_max_tokens=args.max_tokens,
        **({"rating_scale": args.rating_scale} if args.rating_scale else {}),
        **sampling(args),
    )
    if not args.model and not task.human_ratings and not all(r.get("response") for r in task.rows):
        raise WikioriginError(
            f"{args.questions}: no --model given and the rows carry no `response` (nor --human-ratings FILE to rate)"
        )
    return task, model(args) if args.model else Recorded()


def _agreement_said(summary: dict) -> str:
    """The closing line's words on the judge's agreement with people's ratings (none asked: empty)."""
    found = summary.get("agreement")
    if found is None:
        return ""
    if found["pearson"]["r"] is None:
        return f", {found['n']} ratings shared with people's: too few or all alike to correlate"
    return f", Pearson r with people's ratings {found['pearson']['r']:.3f} over {found['n']}"


# --- leakage -----------------------------------------------------------------------------------


def cmd_eval_leakage(args) -> int:
    """`wikiorigin eval leakage`: perplexity of articles against paraphrases under a local model or an
    endpoint (echo + logprobs on /v1/completions)."""
    s = (result := _evaluated(args, lambda: _leakage_task(args))).summary
    return _said(
        "leakage",
        result,
        args,
        f"{s.n} articles, mean difference {_num(s.mean_difference, '.4f')} "
        f"NLL/char, p = {_num(s.p_value, '.3g')}, r = {_num(s.rank_biserial)}",
    )


def _leakage_task(args):
    """The options' leakage task, and the model whose perplexities it compares."""
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
    return task, model(args)


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


def cmd_eval_compare(args) -> int:
    """`wikiorigin eval compare`: several runs over the same items ranked, every pair tested on the
    questions both answered, with published figures and warnings where settings differ
    (``OUT.lock`` held while it writes, by the library). Runs over different items, and incomplete
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
    comparison.save(args.out)
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
