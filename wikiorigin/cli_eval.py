"""The ``wikiorigin eval`` sub-commands: mcq, freeform, judge, leakage, compare. Thin: each
parses options, loads the model under evaluation, calls :mod:`wikiorigin.evaluators` and
writes a results directory (items.parquet, summary.json, report.md, plots)."""

from __future__ import annotations

import sys
from pathlib import Path

from .errors import WikioriginError

__all__ = ["add_eval_commands", "requests_outcome"]


def _model(args):
    """The model under evaluation: a local checkpoint, or an OpenAI-compatible endpoint."""
    if getattr(args, "endpoint", None):
        from .evaluators.models import EndpointModel
        from .llm import LLMClient, OpenAIBackend, RequestCache

        backend = OpenAIBackend(args.model, base_url=args.endpoint, timeout=args.timeout)
        return EndpointModel(LLMClient(backend, RequestCache(args.cache), concurrency=args.concurrency,
                                       retries=args.retries, max_wait=args.max_wait))
    from .evaluators.models import LocalModel

    return LocalModel(args.model, device=args.device, dtype=args.dtype, max_batch_size=args.batch_size,
                      chat=not args.no_chat_template, add_bos=_BOS[args.bos])


# --bos: how a log-likelihood context begins (LocalModel's add_bos)
_BOS = {"tokenizer": None, "none": False, "always": True}


def _sampling(args) -> dict:
    return {"temperature": args.temperature, "max_new_tokens": args.max_new_tokens, "seed": args.seed}


def requests_outcome(clients, where: str) -> int:
    """A run's exit status from its LLM clients' requests: 1 when every request failed (the
    first error says why), else 0 after a line that counts the failures; ``where`` says where
    the failed rows and their reasons are."""
    clients = [c for c in clients if c is not None]
    asked = sum(c.usage.requests for c in clients)
    failed = sum(c.usage.failures for c in clients)
    first = next((c.first_error for c in clients if c.first_error), None)
    if asked and failed == asked:
        what = "the only request failed:" if asked == 1 else f"all {asked} requests failed; the first:"
        print(f"wikiorigin: error: {what} {first} (rows and reasons -> {where})", file=sys.stderr)
        return 1
    if failed:
        print(f"wikiorigin: warning: {failed} of {asked} requests failed; the first: {first} "
              f"(rows and reasons -> {where})", file=sys.stderr)
    return 0


def _done(kind: str, out, line: str, clients=()) -> int:
    """The closing line of a run, and its status from the LLM clients it used (an endpoint
    model, a judge, a paraphraser): 1 when every request failed."""
    print(f"{kind}: {line} -> {out}/ (items.parquet, summary.json, report.md)")
    return requests_outcome(list(clients), f"{out}/items.parquet")


def _client(model):
    """The LLM client behind an endpoint model (None for a local model)."""
    return getattr(model, "client", None)


def _report_join(path, join: dict) -> None:
    """Say on stderr how recorded responses joined the questions (what did not is not lost
    silently: it counts as unanswered or is listed)."""
    line = f"{path}: {join['matched']} responses joined the questions"
    if join["missing"]:
        line += f"; {join['missing']} questions have no response (counted as unanswered)"
    if join["duplicates"]:
        line += f"; {join['duplicates']} responses repeat a question already answered (not used)"
    if join["unmatched"]:
        line += (f"; {join['unmatched']} responses match no question, e.g. "
                 f"{join['unmatched_questions'][0][:60]!r}")
    print(line, file=sys.stderr)


def cmd_eval_mcq(args, client_for) -> int:
    from .evaluators import mcq
    from .evaluators.signature import mcq_settings

    if not args.questions and not args.responses:
        raise WikioriginError("give --questions FILE, --responses FILE, or both")
    if args.responses and (args.model or args.endpoint):
        raise WikioriginError("--responses scores recorded answers instead of asking a model: "
                              "give --responses or --model, not both")
    rows = mcq.read_questions(args.questions or args.responses)
    join = None
    if args.responses and args.questions:
        rows, join = mcq.attach_responses(rows, mcq.read_questions(args.responses), source=str(args.responses),
                                          target=str(args.questions))
        _report_join(args.responses, join)
    if args.mode == "loglikelihood":
        if args.endpoint or not args.model:
            raise WikioriginError("log-likelihood mode needs a local model (--model PATH)")
        model = _model(args)
        items = mcq.evaluate_loglikelihood(rows, model, language=args.language)
        settings = mcq_settings(model, mode="loglikelihood", language=args.language, rows=rows)
    else:
        model = _model(args) if args.model else None
        judge = client_for(args, args.judge_model) if args.judge_model else None
        instruction = mcq.INSTRUCTIONS[args.language] if args.instruction is None else args.instruction
        recorded = Path(args.responses).stem.removeprefix("responses-") if args.responses else str(args.questions)
        items = mcq.evaluate_generate(rows, model, instruction=instruction, judge=judge, recorded=recorded, **(
            _sampling(args) if model else {}))
        settings = mcq_settings(model, language=args.language, instruction=instruction, judge=judge,
                                recorded=recorded, rows=rows,
                                **(_sampling(args) if model else {}))
        if join is not None:  # runs with fewer answered questions are not comparable
            settings["responses"] = f"{join['matched']}/{len(rows)}"
    summary = mcq.summarize(items)
    if join is not None:
        summary["join"] = join
    mcq.write_mcq_results(args.out, items, summary, {"questions": str(args.questions or args.responses),
                                                     "responses": str(args.responses), "mode": args.mode},
                          settings=settings)
    extra = (f", parser read {summary['coverage']:.1%}" if "coverage" in summary else
             f", acc {summary['acc']:.3f}, acc_norm {summary['acc_norm']:.3f}")
    return _done("mcq", args.out, f"{summary['n']} questions, accuracy {summary['accuracy']:.3f}{extra}",
                 [_client(model), judge if args.mode == "generate" else None])


def cmd_eval_freeform(args, client_for) -> int:
    from .evaluators import freeform

    rows = freeform.read_freeform(args.questions)
    model = _model(args)
    items = freeform.evaluate_freeform(rows, model, source_language=args.source_language, **_sampling(args))
    summary = freeform.summarize_freeform(items)
    settings = freeform.freeform_settings(model, source_language=args.source_language, rows=rows, **_sampling(args))
    freeform.write_freeform_results(args.out, items, summary, {"questions": str(args.questions)}, settings=settings)
    return _done("freeform", args.out, f"{summary['n']} questions, exact {summary['exact']:.3f}, "
                                       f"chrF {summary['chrf']:.1f}, failed {summary['failed']}", [_client(model)])


def cmd_eval_judge(args, client_for) -> int:
    from .evaluators import judge as judging

    rows = judging.read_care(args.questions)
    if args.model:
        model = _model(args)
        responses, name = model.generate([r["question"] for r in rows], **_sampling(args)), model.name
    elif all(r.get("response") for r in rows):
        responses, name = [r["response"] for r in rows], "recorded"
    else:
        raise WikioriginError(f"{args.questions}: no --model given and the rows carry no `response`")
    judge = client_for(args, args.judge_model)
    items = judging.judge_answers(rows, responses, judge, model=name)
    summary = judging.summarize_judged(items)
    settings = judging.judge_settings(model if args.model else None, judge, rows=rows, **_sampling(args))
    judging.write_judge_results(args.out, items, summary, {"questions": str(args.questions),
                                                           "judge": args.judge_model}, settings=settings)
    return _done("judge", args.out, f"{summary['rated']} of {summary['n']} answers rated, "
                                    f"mean {summary['mean']:.2f}", [_client(model) if args.model else None, judge])


def cmd_eval_leakage(args, client_for) -> int:
    from .evaluators import leakage

    articles = leakage.read_texts(args.articles, "text")
    if args.limit:
        articles = dict(list(articles.items())[:args.limit])
    if args.paraphrases:
        paraphrases = leakage.read_texts(args.paraphrases, "paraphrase")
    elif args.paraphrase_model:
        passages = {t: text[:args.max_chars] for t, text in articles.items()}
        source = client_for(args, args.paraphrase_model)
        paraphrases, failed = leakage.paraphrase(passages, source)
        for title, reason in list(failed.items())[:5]:
            print(f"paraphrase failed: {title}: {reason}", file=sys.stderr)
    else:
        raise WikioriginError("give --paraphrases FILE or --paraphrase-model NAME")
    model = _model(args)
    items, summary = leakage.leakage_check(articles, paraphrases, model, max_chars=args.max_chars,
                                           windows=args.windows, stride=args.stride)
    settings = leakage.leakage_settings(model, max_chars=args.max_chars, articles=articles, paraphrases=paraphrases,
                                        paraphraser=None if args.paraphrases else source,
                                        windows=args.windows, stride=args.stride)
    leakage.write_leakage_results(args.out, items, summary, {"articles": str(args.articles)}, settings=settings)
    return _done("leakage", args.out, f"{summary['n']} articles, mean difference "
                                      f"{summary['mean_difference']:.4f} NLL/char, p = {summary['p_value']:.3g}, "
                                      f"r = {summary['rank_biserial']:.3f}",
                 [None if args.paraphrases else source])


def cmd_eval_compare(args, client_for) -> int:
    from .evaluators.report import compare_runs

    result = compare_runs(args.runs, args.out, metric=args.metric, external=args.external,
                          external_name=args.external_name)
    extra = f", Pearson r {result['pearson']:.3f}" if "pearson" in result else ""
    print(f"{len(result['models'])} runs compared{extra} -> {args.out}/ (comparison.md, models.png"
          + (", scatter.png)" if extra else ")"))
    return 0


def _model_options(e, required: bool = True, endpoint: bool = True) -> None:
    """The options of the model under evaluation; ``endpoint=False`` where only a local model
    can do the job (the leakage check needs every token's log-probability)."""
    e.add_argument("--model", required=required,
                   help="the model under evaluation: a local checkpoint directory"
                        + (", or a name with --endpoint" if endpoint else ""))
    if endpoint:
        e.add_argument("--endpoint", default=None, help="an OpenAI-compatible base URL to evaluate instead")
    e.add_argument("--device", default="auto", help="cuda, mps or cpu (default: the first there)")
    e.add_argument("--dtype", default="auto", help="torch dtype (default: bfloat16 on CUDA, else float32)")
    e.add_argument("--batch-size", type=int, default=32, help="largest batch; halved on out-of-memory")
    e.add_argument("--no-chat-template", action="store_true", help="send raw prompts")
    e.add_argument("--bos", choices=tuple(_BOS), default="tokenizer",
                   help="log-likelihoods: the tokenizer's own special tokens before the context, as "
                        "lm-evaluation-harness (default); none; or always BOS (EOS where there is none)")
    e.add_argument("--temperature", type=float, default=0.1, help="sampling temperature (0: greedy)")
    e.add_argument("--max-new-tokens", type=int, default=128, help="longest answer, in tokens")
    e.add_argument("--seed", type=int, default=0, help="sampling seed")
    e.add_argument("--out", required=True, help="results directory")


def _locked(func, args, client_for) -> int:
    """Run an eval command holding ``OUT.lock``: two runs never write one results directory."""
    from .llm.lock import RunLock

    with RunLock(args.out):
        return func(args, client_for)


def add_eval_commands(sub, llm_options, client_for) -> None:
    s = sub.add_parser("eval", help="evaluate models on the datasets")
    evals = s.add_subparsers(dest="evaluator", required=True)

    def command(name, help_text, func):
        e = evals.add_parser(name, help=help_text)
        e.set_defaults(func=lambda args: _locked(func, args, client_for))
        return e

    e = command("mcq", "multiple choice: generation + answer parsing, or log-likelihoods", cmd_eval_mcq)
    e.add_argument("--questions", default=None,
                   help="mcq.parquet or released YokaiEval rows (JSON/Parquet); with --responses, the rows "
                        "the responses are joined to (type, region; questions without a response count "
                        "as unanswered)")
    e.add_argument("--responses", default=None,
                   help="recorded responses to score instead of asking a model: a released responses "
                        "file, the released human answers, or rows with a `response`")
    e.add_argument("--mode", choices=("generate", "loglikelihood"), default="generate",
                   help="generate: ask and read the answer; loglikelihood: score each option (local model)")
    e.add_argument("--language", choices=("ja", "en"), default="ja",
                   help="the instruction line, answer cue and delimiter")
    e.add_argument("--instruction", default=None,
                   help="line after the options (default: ours for --language; '' for none, as released)")
    e.add_argument("--judge-model", default=None, help="an LLM that reads the answers the parser cannot")
    _model_options(e, required=False)
    llm_options(e)
    e = command("freeform", "free-form answers: exact match and chrF against the item's names", cmd_eval_freeform)
    e.add_argument("--questions", required=True, help="freeform.parquet")
    e.add_argument("--source-language", action="store_true", help="ask in the item's language")
    _model_options(e)
    llm_options(e)
    e.set_defaults(temperature=0.0, max_new_tokens=32)
    e = command("judge", "1-10 ratings by an LLM judge against CARE reference answers", cmd_eval_judge)
    e.add_argument("--questions", required=True, help="a CARE test file (or rows with a `response`)")
    e.add_argument("--judge-model", required=True, help="the LLM that rates each answer 1-10")
    _model_options(e, required=False)
    llm_options(e)
    e.set_defaults(temperature=0.7, max_new_tokens=512)
    e = command("leakage", "perplexity of articles against paraphrases (training-data leakage)", cmd_eval_leakage)
    e.add_argument("--articles", required=True, help="articles.parquet (title, text)")
    e.add_argument("--paraphrases", default=None, help="Parquet/JSON with title, paraphrase")
    e.add_argument("--paraphrase-model", default=None, help="an LLM that writes the paraphrases")
    e.add_argument("--max-chars", type=int, default=1500, help="the passage of each article compared")
    e.add_argument("--limit", type=int, default=None, help="the first N articles only")
    e.add_argument("--windows", choices=("overlap", "disjoint"), default="overlap",
                   help="texts longer than the model's context: overlapping windows (default; every token "
                        "after at least half a context) or lm-evaluation-harness's disjoint ones")
    e.add_argument("--stride", type=int, default=None,
                   help="tokens each overlapping window predicts (default half the model's context)")
    _model_options(e, endpoint=False)
    llm_options(e)
    e = command("compare", "per-model bars, and a scatter against external scores", cmd_eval_compare)
    e.add_argument("runs", nargs="+", help="results directories of `wikiorigin eval ...`")
    e.add_argument("--out", required=True, help="directory for comparison.md and the plots")
    e.add_argument("--metric", default="accuracy", help="a key of summary.json (accuracy, chrf, mean, ...)")
    e.add_argument("--external", default=None, help="CSV with columns model,score (e.g. JMT-Bench)")
    e.add_argument("--external-name", default="external score", help="the external column's name")
