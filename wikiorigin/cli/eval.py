"""The evaluation stage's commands: ``eval mcq``, ``freeform``, ``judge``, ``leakage`` and
``compare``. Each loads the model under evaluation, calls :mod:`wikiorigin.evaluators` and
writes a results directory (items.parquet, summary.json, report.md, plots), holding
``OUT.lock`` while it runs."""

from __future__ import annotations

import functools
import sys
from pathlib import Path

from ..errors import WikioriginError
from .options import llm_client, llm_options, model, model_options, positive, sampling
from .outcome import requests_outcome

__all__ = ["add_commands"]


def _locked(func, args) -> int:
    """Run an eval command holding ``OUT.lock``: two runs never write one results directory."""
    from ..llm.lock import RunLock

    with RunLock(args.out):
        return func(args)


def _done(kind: str, out, line: str, clients=()) -> int:
    """The closing line of a run, and its status from the LLM clients it used (an endpoint
    model, a judge, a paraphraser): 1 when every request failed."""
    print(f"{kind}: {line} -> {out}/ (items.parquet, summary.json, report.md)")
    return requests_outcome(list(clients), f"{out}/items.parquet")


def _client(m):
    """The LLM client behind an endpoint model (None for a local model)."""
    return getattr(m, "client", None)


def add_commands(sub) -> None:
    """Register ``eval`` and its sub-commands under ``sub``."""
    s = sub.add_parser("eval", help="evaluate models on the datasets")
    evals = s.add_subparsers(dest="evaluator", required=True)

    def command(name, help_text, func):
        e = evals.add_parser(name, help=help_text)
        e.set_defaults(func=functools.partial(_locked, func))
        return e

    _add_mcq(command("mcq", "multiple choice: generation + answer parsing, or log-likelihoods", cmd_eval_mcq))
    _add_freeform(command("freeform", "free-form answers: exact match and chrF against the item's names",
                          cmd_eval_freeform))
    _add_judge(command("judge", "1-10 ratings by an LLM judge against CARE reference answers", cmd_eval_judge))
    _add_leakage(command("leakage", "perplexity of articles against paraphrases (training-data leakage)",
                         cmd_eval_leakage))
    _add_compare(command("compare", "runs ranked with paired tests (McNemar, permutation), per-model bars, and a "
                                    "scatter against external scores", cmd_eval_compare))


# --- mcq ---------------------------------------------------------------------------------------

def _add_mcq(e) -> None:
    e.add_argument("--questions", default=None,
                   help="mcq.parquet or released YokaiEval rows (JSON/Parquet); with --responses, the rows "
                        "the responses are joined to (type, region; questions without a response count "
                        "as unanswered)")
    e.add_argument("--responses", default=None,
                   help="recorded responses to score instead of asking a model: a released responses "
                        "file, the released human answers, or rows with a `response`")
    e.add_argument("--mode", choices=("generate", "loglikelihood"), default="generate",
                   help="generate: ask and read the answer; loglikelihood: score each option (a local model, or "
                        "--endpoint with echo + logprobs on /v1/completions: vLLM, llama-cpp-python's server)")
    e.add_argument("--language", default=None,
                   help="the language of the instruction line, answer cue and delimiter: the code of any open "
                        "Wikipedia (default: the rows' own language, else ja; English lines where ours has none)")
    e.add_argument("--instruction", default=None,
                   help="line after the options (default: ours for --language; '' for none, as released)")
    e.add_argument("--answer-cue", default=None,
                   help="log-likelihood mode: what follows the options before each option (default: ours for "
                        "--language, e.g. '\\n回答：', '\\nAnswer:'; \\n is a new line)")
    e.add_argument("--judge-model", default=None, help="an LLM that reads the answers the parser cannot")
    e.add_argument("--thinking", choices=("on", "off", "template-default"), default="template-default",
                   help="generation with a local model whose chat template can think (Qwen3-style "
                        "enable_thinking): switch its reasoning on or off (recorded in the signature); "
                        "a thinking model needs a --max-new-tokens budget for its trace (the paper's 128 cuts "
                        "it off: a cut response is no answer, counted as truncated). Endpoints: --reasoning-effort")
    model_options(e, required=False)
    llm_options(e)


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


def _mcq_rows(args):
    """The questions, with the recorded responses joined to them (and how they joined, else None)."""
    from ..evaluators import mcq

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
    return rows, join


def cmd_eval_mcq(args) -> int:
    """`wikiorigin eval mcq`: a multiple-choice set answered by a model (generation or log-likelihood) or recorded answers, scored."""
    from ..evaluators import mcq
    from ..evaluators.signature import mcq_settings
    from ..languages import open_language

    try:  # before any file is read
        language = open_language(args.language) if args.language else None
    except WikioriginError as exc:
        raise WikioriginError(f"--{exc}") from None
    rows, join = _mcq_rows(args)
    language = language or mcq.rows_language(rows, source=str(args.questions or args.responses))
    judge = None
    if args.mode == "loglikelihood":
        if not args.model:
            raise WikioriginError("log-likelihood mode needs a model: --model PATH, or --model NAME --endpoint URL")
        if args.thinking != "template-default":
            raise WikioriginError("--thinking is for generation mode: log-likelihoods use no chat template")
        cue = None if args.answer_cue is None else args.answer_cue.replace("\\n", "\n")
        m = model(args)
        items = mcq.evaluate_loglikelihood(rows, m, language=language, cue=cue)
        settings = mcq_settings(m, mode="loglikelihood", language=language, rows=rows, cue=cue)
        if _client(m) is not None:  # an endpoint: how its prompts were cut, or its tokenizer
            settings.update(m.scoring_settings("mcq"))
    else:
        if args.thinking != "template-default" and (args.endpoint or not args.model):
            raise WikioriginError("--thinking switches a local model's chat template (--model PATH); for an endpoint "
                                  "give --reasoning-effort, or set the server's chat template defaults")
        m = model(args) if args.model else None
        if m is not None and args.thinking != "template-default":
            m.set_thinking(args.thinking)
        judge = llm_client(args, args.judge_model) if args.judge_model else None
        instruction = mcq.instruction(language) if args.instruction is None else args.instruction
        recorded = Path(args.responses).stem.removeprefix("responses-") if args.responses else str(args.questions)
        items = mcq.evaluate_generate(rows, m, instruction=instruction, judge=judge, recorded=recorded, **(
            sampling(args) if m else {}))
        settings = mcq_settings(m, language=language, instruction=instruction, judge=judge,
                                recorded=recorded, rows=rows, thinking=getattr(m, "thinking_mode", None),
                                **(sampling(args) if m else {}))
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
                 [_client(m), judge])


# --- freeform ----------------------------------------------------------------------------------

def _add_freeform(e) -> None:
    e.add_argument("--questions", required=True, help="freeform.parquet")
    e.add_argument("--source-language", action="store_true", help="ask in the item's language")
    model_options(e)
    llm_options(e)
    e.set_defaults(temperature=0.0, max_new_tokens=32)


def cmd_eval_freeform(args) -> int:
    """`wikiorigin eval freeform`: free-form questions answered by a model, scored by exact match and chrF."""
    from ..evaluators import freeform

    rows = freeform.read_freeform(args.questions)
    m = model(args)
    items = freeform.evaluate_freeform(rows, m, source_language=args.source_language, **sampling(args))
    summary = freeform.summarize_freeform(items)
    settings = freeform.freeform_settings(m, source_language=args.source_language, rows=rows, **sampling(args))
    freeform.write_freeform_results(args.out, items, summary, {"questions": str(args.questions)}, settings=settings)
    return _done("freeform", args.out, f"{summary['n']} questions, exact {summary['exact']:.3f}, "
                                       f"chrF {summary['chrf']:.1f}, failed {summary['failed']}", [_client(m)])


# --- judge -------------------------------------------------------------------------------------

def _add_judge(e) -> None:
    e.add_argument("--questions", required=True, help="a CARE test file (or rows with a `response`)")
    e.add_argument("--judge-model", required=True, help="the LLM that rates each answer 1-10")
    e.add_argument("--human-ratings", default=None, metavar="FILE",
                   help="people's ratings of responses (JSON, JSON Lines, CSV or Parquet with question, model, "
                        "response, rating): the judge's agreement with them (Pearson, Spearman, Kendall, with "
                        "intervals); without --model or recorded responses, the judge rates these responses")
    model_options(e, required=False)
    llm_options(e)
    e.set_defaults(temperature=0.7, max_new_tokens=512)


def cmd_eval_judge(args) -> int:
    """`wikiorigin eval judge`: CARE answers rated 1-10 by an LLM judge against the references."""
    from ..care import read_rated
    from ..evaluators import judge as judging

    rows = judging.read_care(args.questions)
    rated = read_rated(args.human_ratings) if args.human_ratings else None
    recorded = all(r.get("response") for r in rows)
    rate_rated = rated is not None and not args.model and not recorded  # the judge rates the people's responses
    if not (args.model or recorded or rate_rated):
        raise WikioriginError(f"{args.questions}: no --model given and the rows carry no `response` "
                              "(nor --human-ratings FILE to rate)")
    m = model(args) if args.model else None
    if m is not None:
        responses, name = m.generate([r["question"] for r in rows], **sampling(args)), m.name
    elif recorded:
        responses, name = [r["response"] for r in rows], "recorded"
    judge = llm_client(args, args.judge_model)
    if rate_rated:
        items, alone = judging.judge_rated(rows, rated, judge)
        unmatched = len(alone)
    else:
        items = judging.judge_answers(rows, responses, judge, model=name)
        unmatched = judging.attach_human_ratings(items, rated) if rated is not None else 0
    summary = judging.summarize_judged(items)
    if rated is not None:
        summary["agreement"]["unmatched"] = unmatched
        if unmatched:
            print(f"{args.human_ratings}: {unmatched} rated responses not compared (no such question and answer "
                  "here)", file=sys.stderr)
    settings = judging.judge_settings(m, judge, rows=rows, rated=rated, rated_answers=rate_rated, **sampling(args))
    judging.write_judge_results(args.out, items, summary, {"questions": str(args.questions),
                                                           "judge": args.judge_model}, settings=settings)
    return _done("judge", args.out, f"{summary['rated']} of {summary['n']} answers rated, "
                                    f"mean {summary['mean']:.2f}{_agreement_said(summary)}", [_client(m), judge])


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
    chosen.add_argument("--sample", type=_sample_size, default=20, metavar="N",
                        help="N articles drawn at random with --seed (default 20, as the YokaiEval paper; "
                             "'all': every one), the same for the same N and seed whatever the rows' order; "
                             "with --paraphrases, among the articles the file paraphrases")
    chosen.add_argument("--limit", type=positive(int), default=None,
                        help="the first N articles in file order instead of a random sample")
    e.add_argument("--windows", choices=("overlap", "disjoint"), default="overlap",
                   help="texts longer than the model's context: overlapping windows (default; every token "
                        "after at least half a context) or lm-evaluation-harness's disjoint ones")
    e.add_argument("--stride", type=positive(int), default=None,
                   help="tokens each overlapping window predicts (default half the model's context)")
    model_options(e)
    llm_options(e)


def _sample_size(text: str):
    """``--sample``: a whole number > 0, or ``all`` (None: every article)."""
    return None if text == "all" else positive(int)(text)


def _paraphrases(args, articles: dict, given: dict | None):
    """The paraphrases to compare ``articles`` with: ``given`` (read from a file), or written
    by an LLM (then its client, else None)."""
    from ..evaluators import leakage

    if given is not None:
        return given, None
    if not args.paraphrase_model:
        raise WikioriginError("give --paraphrases FILE or --paraphrase-model NAME")
    passages = {t: leakage.passage(text, args.max_chars) for t, text in articles.items()}
    source = llm_client(args, args.paraphrase_model)
    paraphrases, failed = leakage.paraphrase(passages, source)
    for title, reason in list(failed.items())[:5]:
        print(f"paraphrase failed: {title}: {reason}", file=sys.stderr)
    return paraphrases, source


def cmd_eval_leakage(args) -> int:
    """`wikiorigin eval leakage`: perplexity of articles against paraphrases under a local model or an
    endpoint (echo + logprobs on /v1/completions)."""
    from ..evaluators import leakage

    articles = leakage.read_texts(args.articles, "text")
    given = leakage.read_texts(args.paraphrases, "paraphrase") if args.paraphrases else None
    pool = [t for t in articles if given is None or leakage.passage(given.get(t) or "", args.max_chars).strip()]
    sample = leakage.draw_sample(pool, args.limit or args.sample, seed=None if args.limit else args.seed)
    articles = {t: articles[t] for t in sample.titles}
    paraphrases, source = _paraphrases(args, articles, given)
    m = model(args)
    items, summary = leakage.leakage_check(articles, paraphrases, m, max_chars=args.max_chars,
                                           windows=args.windows, stride=args.stride, sample=sample)
    settings = leakage.leakage_settings(m, max_chars=args.max_chars, articles=articles, paraphrases=paraphrases,
                                        paraphraser=source, windows=args.windows, stride=args.stride,
                                        sample=sample)
    if _client(m) is not None:  # an endpoint: its tokenizer, or the server's special tokens
        settings.update(m.scoring_settings("leakage"))
    leakage.write_leakage_results(args.out, items, summary, {"articles": str(args.articles)}, settings=settings)
    return _done("leakage", args.out, f"{summary['n']} articles, mean difference "
                                      f"{summary['mean_difference']:.4f} NLL/char, p = {summary['p_value']:.3g}, "
                                      f"r = {summary['rank_biserial']:.3f}", [source, _client(m)])


# --- compare -----------------------------------------------------------------------------------

def _add_compare(e) -> None:
    e.add_argument("runs", nargs="+", help="results directories of `wikiorigin eval ...`")
    e.add_argument("--out", required=True, help="directory for comparison.md and the plots")
    e.add_argument("--metric", default="accuracy", help="a key of summary.json (accuracy, chrf, mean, ...)")
    e.add_argument("--external", default=None, help="CSV with columns model,score (e.g. JMT-Bench)")
    e.add_argument("--external-name", default="external score", help="the external column's name")


def cmd_eval_compare(args) -> int:
    """`wikiorigin eval compare`: several runs ranked, every pair tested on the questions both answered, with
    published figures and warnings where settings differ."""
    from ..evaluators.report import compare_runs

    result = compare_runs(args.runs, args.out, metric=args.metric, external=args.external,
                          external_name=args.external_name)
    extra = f", Pearson r {result['pearson']:.3f}" if "pearson" in result else ""
    print(f"{len(result['models'])} runs compared{extra}, {len(result['pairs'])} pairs tested"
          + (f" ({len(result['unpaired'])} not paired)" if result["unpaired"] else "")
          + f" -> {args.out}/ (comparison.md, comparison.json, models.png" + (", scatter.png)" if extra else ")"))
    return 0
