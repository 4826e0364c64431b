"""The build stage's commands: ``build mcq``, ``build freeform`` and ``build preference``
(QA datasets written with LLMs), and ``build card`` (a dataset card). Each turns its options
into a builder's configuration (:mod:`wikiorigin.builders`), runs the builder and saves the
set, holding ``OUT.lock`` while it runs, then says one line."""

from __future__ import annotations

from .options import flags, llm_client, llm_options, positive, rating_scale, speaks_flags, temperature
from .outcome import print_usage, requests_outcome

__all__ = ["add_commands"]


def add_commands(sub) -> None:
    """Register ``build`` and its sub-commands under ``sub``."""
    s = sub.add_parser("build", help="build QA datasets with LLMs")
    build = s.add_subparsers(dest="builder", required=True)
    _add_mcq(build)
    _add_freeform(build)
    _add_preference(build)
    _add_card(build)


def _dry_run(b) -> None:
    b.add_argument("--dry-run", action="store_true", help="count the calls and tokens only")


def _method_options(b, preset: str) -> None:
    """``--preset`` (the paper's method settings) and the sampling options of every LLM step;
    an option given wins over the preset, the preset over the builder's defaults."""
    from ..builders.presets import PRESETS

    m = b.add_argument_group(
        "method settings",
        f"Defaults follow the paper; --preset {preset} sets every method setting to the "
        f"paper's ({PRESETS[preset].source}); options given win. With --reasoning-effort no temperature or "
        "top-p is sent, and a reasoning model spends part of --max-tokens thinking: raise it.",
    )
    m.add_argument(
        "--preset",
        choices=tuple(PRESETS),
        default=None,
        help=f"a paper's method settings ({preset} for this builder; the models stay yours)",
    )
    m.add_argument(
        "--temperature",
        type=temperature,
        default=None,
        help="sampling temperature of every step (default: the paper's)",
    )
    m.add_argument("--top-p", type=_unit, default=None, help="nucleus sampling of every step (default: the paper's)")
    m.add_argument(
        "--max-tokens",
        type=positive(int),
        default=None,
        help="output limit of every step, in tokens (default: the paper's)",
    )


def _unit(text: str) -> float:
    """An argparse type: a number in (0, 1]."""
    import argparse

    value = positive(float)(text)
    if value > 1:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1], got {text!r}")
    return value


def _apply_preset(args, builder: str) -> dict:
    """Check ``--preset`` for ``builder`` (a one-line error for another builder's); returns the
    sampling options given (``temperature``, ``top_p``, ``max_tokens``), which win over the
    preset's and the builder's defaults."""
    from ..builders.presets import PRESETS
    from ..errors import WikioriginError

    preset = PRESETS[args.preset] if args.preset else None  # argparse's choices: a name of PRESETS
    if preset is not None and preset.builder != builder:
        raise WikioriginError(
            f"--preset: the preset {args.preset!r} is {preset.paper}'s, for `build {preset.builder}`, "
            f"not `build {builder}`"
        )
    return {k: getattr(args, k) for k in ("temperature", "top_p", "max_tokens") if getattr(args, k) is not None}


def _config(cls, args, **options):
    """``cls.from_preset(--preset, ...)`` (or ``cls(...)`` without one) with the ``options``
    given on the command line (those not None) winning over the preset."""
    given = {k: v for k, v in options.items() if v is not None}
    return cls.from_preset(args.preset, **given) if args.preset else cls(**given)


def _params(defaults: dict, given: dict) -> dict:
    """A builder's sampling: its paper's ``defaults`` with the options ``given`` over them."""
    return {**defaults, **given}


def _max_article_chars(b, default: int) -> None:
    b.add_argument(
        "--max-article-chars",
        type=positive(int, zero=True),
        default=None,
        help=f"characters of each article sent to the steps that read it (default {default:,}; 0: the "
        "whole article, as the paper's preset sends it: the paper states no cut)",
    )


def _failed_rows(out) -> str:
    """Where a build writes the rows it dropped, with their reasons."""
    from ..builders.result import failed_path

    return str(failed_path(out))


def _built(builder, args, *inputs, **clients):
    """``builder`` run on ``inputs`` into ``--out``: the library's one call, which checks the
    output, clears what a killed run left, holds ``OUT.lock`` over the whole build and saves the
    set; returns the build's result."""
    return builder.run(*inputs, out=args.out, **clients)


def _ended(result, status: int, out) -> int:
    """The exit status of a build whose requests ended with ``status``
    (:func:`~wikiorigin.cli.outcome.requests_outcome`): a build that made no rows is a failed
    run (1), its one line saying why (:meth:`~wikiorigin.builders.result.BuildResult.why_empty`),
    unless the failed requests said it already."""
    import sys

    why = result.why_empty()
    if status or why is None:
        return status
    print(f"wikiorigin: error: {why} (rows and reasons -> {_failed_rows(out)})", file=sys.stderr)
    return 1


def _print_plan(plan: dict, later: str) -> int:
    print(
        f"{plan['calls']} calls to make first ({plan['requests'] - plan['calls']} cached), "
        f"~{plan['input_tokens']:,} input tokens; then at most {plan['later_calls_at_most']} "
        f"calls to {later}"
    )
    return 0


# --- mcq ---------------------------------------------------------------------------------------


def _add_mcq(build) -> None:
    b = build.add_parser("mcq", help="YokaiEval-style 4-option questions from articles")
    b.add_argument("--articles", required=True, help="articles.parquet")
    b.add_argument(
        "--out", required=True, help="mcq.parquet (dropped rows: OUT.failed.parquet; OUT.lock while it runs)"
    )
    b.add_argument("--model", required=True, help="the generator model")
    b.add_argument(
        "--checker-model",
        default=None,
        help="the model that answers each question with its article, to keep only those it gets right "
        "(default: the generator; the YokaiEval paper used a separate, smaller model, GPT-4o-mini "
        "checking GPT-4o)",
    )
    llm_options(b)
    b.add_argument(
        "--language",
        default=None,
        help="the language of the questions, options and answers: the code of any open Wikipedia "
        "(ja, en, el, ko, ga, ...; default: the articles' wiki's)",
    )
    b.add_argument(
        "--labels",
        default=None,
        help="the type and region classes: a preset (yokai-ja, origin) or a labels JSON file "
        "(default: origin for a `corpus origin` corpus, its region from Wikidata; yokai-ja for Japanese "
        "list-page articles)",
    )
    b.add_argument(
        "--keep-unreferenced",
        action="store_true",
        help="keep questions from articles without any footnote (no attribution; default: drop them)",
    )
    b.add_argument(
        "--per-article", type=positive(int), default=None, help="questions asked of each article (default 1)"
    )
    b.add_argument("--seed", type=int, default=0, help="seed of the answer positions' balancing")
    _max_article_chars(b, 12_000)
    b.add_argument(
        "--answer-positions",
        choices=("balanced", "as-generated"),
        default=None,
        help="balanced (default): each answer position 25%% of the set, seeded by --seed; as-generated: "
        "where the generator put the answer (the paper's released set: 278/395/120/17 at A-D)",
    )
    b.add_argument(
        "--label-steps",
        type=int,
        choices=(1, 2),
        default=None,
        help="1 (default): type and region in one call from the article and the question; 2: the paper's "
        "way, the type from the question alone and the regions from the article alone",
    )
    b.add_argument(
        "--checker-abstains",
        choices=("yes", "no"),
        default=None,
        help="yes (default): the checker may answer null when the article does not tell, which drops the "
        "question; no: it must choose an option, as the paper's checker did",
    )
    _method_options(b, "yokaieval")
    _dry_run(b)
    b.set_defaults(func=cmd_build_mcq)


@speaks_flags
def cmd_build_mcq(args) -> int:
    """`wikiorigin build mcq`: YokaiEval-style questions from an articles file (or, with --dry-run, the calls it would make)."""
    from ..builders.mcq import MCQBuilder, MCQConfig
    from ..labels import load_labels
    from ..languages import language_parameter

    # bad labels, language or preset: a one-line error before any client, cache or call is made
    sampling = _apply_preset(args, "mcq")
    config = _config(
        MCQConfig,
        args,
        language=language_parameter(args.language) if args.language else None,
        labels=load_labels(args.labels) if args.labels else None,
        per_article=args.per_article,
        seed=args.seed,
        keep_unreferenced=args.keep_unreferenced or None,
        checker_abstains=None if args.checker_abstains is None else args.checker_abstains != "no",
        **{k: getattr(args, k) for k in ("max_article_chars", "answer_positions", "label_steps")},
    )
    config.params = _params(config.params, sampling)
    generator = llm_client(args, args.model)
    if args.dry_run:
        return _print_plan(MCQBuilder(config).plan(args.articles, generator), "check, attribute and label")
    checker = llm_client(args, args.checker_model) if args.checker_model else None
    result = _built(MCQBuilder(config), args, args.articles, generator, checker=checker)
    report = result.report
    print_usage([("generator", generator), ("checker", checker)])
    print(
        f"{report.kept} questions from {report.articles} articles ({report.generated} generated; "
        f"dropped: {report.dropped_said()}) -> {args.out}"
    )
    status = requests_outcome(
        [generator, checker], _failed_rows(args.out), flags(args), allow_failures=args.allow_failures
    )
    return _ended(result, status, args.out)


# --- freeform ----------------------------------------------------------------------------------


def _add_freeform(build) -> None:
    b = build.add_parser("freeform", help="WikiOriginQA-style questions from an origin corpus")
    b.add_argument("--articles", required=True, help="articles.parquet of `corpus origin`")
    b.add_argument(
        "--out", required=True, help="freeform.parquet (dropped: OUT.failed.parquet; OUT.lock while it runs)"
    )
    b.add_argument("--model", required=True, help="the generator model")
    llm_options(b)
    b.add_argument(
        "--rounds",
        type=positive(int, zero=True),
        default=None,
        help="refinement passes (default 3: the paper refined each question several times; "
        "each pass is one call per question, and a question given back unchanged makes "
        "the next pass a cache hit)",
    )
    b.add_argument("--cutoff", default="2023-12", help="knowledge cut-off for the criteria")
    _max_article_chars(b, 6_000)
    b.add_argument(
        "--instructions",
        choices=("auto", "en"),
        default=None,
        help="language of the generation and refinement instructions: auto (default) = the "
        "item's language, bundled for ja ps af ca sk et uk ka, else translated once by the "
        "generator (saved as OUT.instructions.json); en = English",
    )
    _method_options(b, "wikioriginqa")
    _dry_run(b)
    b.set_defaults(func=cmd_build_freeform)


@speaks_flags
def cmd_build_freeform(args) -> int:
    """`wikiorigin build freeform`: WikiOriginQA free-form questions from an origin corpus (or the plan with --dry-run)."""
    from ..builders.freeform import FreeformBuilder, FreeformConfig

    sampling = _apply_preset(args, "freeform")
    config = _config(
        FreeformConfig,
        args,
        rounds=args.rounds,
        cutoff=args.cutoff,
        instructions=args.instructions,
        max_article_chars=args.max_article_chars,
    )
    config.params = _params(config.params, sampling)
    generator = llm_client(args, args.model)
    if args.dry_run:
        return _print_plan(
            FreeformBuilder(config).plan(args.articles, generator), "refine, translate, score and check for giveaways"
        )
    result = _built(FreeformBuilder(config), args, args.articles, generator)
    report = result.report
    print_usage([("generator", generator)])
    print(f"{report.kept} questions from {report.articles} articles (dropped: {report.dropped_said()}) -> {args.out}")
    status = requests_outcome([generator], _failed_rows(args.out), flags(args), allow_failures=args.allow_failures)
    return _ended(result, status, args.out)


# --- preference --------------------------------------------------------------------------------


def _add_preference(build) -> None:
    b = build.add_parser(
        "preference",
        help="CARE-style chosen/rejected pairs (TRL format)",
        description="Pairs from people's ratings of recorded responses (--rated: no model is "
        "called), or from models' answers rated by an LLM judge (--models, "
        "--judge-model; the answers sample as CARE's open models did: temperature 0.7, top-p 1.0, "
        "at most 1,024 output tokens; the judge the same, our choice: CARE gives none for its judge).",
    )
    b.add_argument(
        "--questions",
        required=True,
        help="CARE JSON, or Parquet/JSON with question, answer (each pair's culture and category)",
    )
    b.add_argument(
        "--out",
        required=True,
        help="preferences.parquet (failed answers and ratings: OUT.failed.parquet; OUT.lock while it runs)",
    )
    b.add_argument(
        "--rated",
        default=None,
        metavar="FILE",
        help="rated responses (JSON, JSON Lines, CSV or Parquet with question, model, response, rating): "
        "pairs of these very texts, no model called (--models, --judge-model and --dry-run are "
        "refused with it); a rated question not in --questions is left out, counted and listed "
        "in OUT.failed.parquet; a bad row is an error naming it, before anything is written",
    )
    b.add_argument("--models", default=None, help="comma-separated models that answer (without --rated)")
    b.add_argument("--judge-model", default=None, help="the model that rates the answers 1-10 (without --rated)")
    b.add_argument(
        "--pairs",
        choices=("best-worst", "all"),
        default=None,
        help="best-worst: per question the highest- against the lowest-rated response (CARE's rule; "
        "among equal ratings the model whose name sorts first); all: every two responses whose "
        "ratings differ by --min-gap or more",
    )
    b.add_argument(
        "--min-gap",
        type=positive(float, zero=True),
        default=None,
        help="least rating gap of a pair (default: 2 with --pairs all, any gap with best-worst); "
        "equal ratings never make a pair",
    )
    b.add_argument(
        "--rating-scale",
        type=rating_scale,
        default=None,
        metavar="LOW-HIGH",
        help="the scale of the --rated ratings (default: CARE's 1-10); a rating outside it, or not a "
        "number, is an error naming the file and row, before anything is written",
    )
    b.add_argument(
        "--format",
        choices=("standard", "conversational"),
        default="standard",
        help="standard: prompt, chosen and rejected as strings; conversational: as lists of chat "
        "messages (TRL's conversational form, so the trainer applies the chat template)",
    )
    b.add_argument(
        "--language",
        default=None,
        help="the language of the questions and answers, written into every pair: the code of any open "
        "Wikipedia (default: the questions' own; CARE's files say none: give it, e.g. ja)",
    )
    _method_options(b, "care")
    _dry_run(b)
    llm_options(b)
    b.set_defaults(func=cmd_build_preference)


@speaks_flags
def cmd_build_preference(args) -> int:
    """`wikiorigin build preference`: CARE preference pairs from rated responses (--rated), or from
    several models' answers rated by a judge."""
    from ..builders.preference import PreferenceBuilder, PreferenceConfig
    from ..errors import WikioriginError

    sampling = _apply_preset(args, "preference")
    config = _config(
        PreferenceConfig,
        args,
        pairs=args.pairs,
        min_gap=args.min_gap,
        format=args.format,
        language=args.language,
        rating_scale=args.rating_scale,
    )
    config.answer_params = _params(config.answer_params, sampling)
    config.judge_params = _params(config.judge_params, sampling)
    if args.rated:
        return _rated_preferences(args, config)
    if not args.models or not args.judge_model:
        raise WikioriginError("give --models and --judge-model (or --rated FILE)")
    responders = {m: llm_client(args, m) for m in (name.strip() for name in args.models.split(",")) if m}
    builder = PreferenceBuilder(config)
    if args.dry_run:
        return _print_plan(builder.plan(args.questions, responders), "judge the answers")
    judge = llm_client(args, args.judge_model)
    result = _built(builder, args, args.questions, responders, judge)
    report = result.report
    print_usage([*responders.items(), ("judge", judge)])
    print(
        f"{report.kept} pairs from {report.questions} questions and {len(responders)} models "
        f"({report.dropped.get('answer', 0)} answers and {report.dropped.get('judge', 0)} ratings failed) "
        f"-> {args.out}"
    )
    status = requests_outcome(
        [*responders.values(), judge], _failed_rows(args.out), flags(args), allow_failures=args.allow_failures
    )
    return _ended(result, status, args.out)


def _rated_preferences(args, config) -> int:
    """`build preference --rated`: pairs from recorded ratings; no model, so no model option."""
    from ..builders.preference import PreferenceBuilder
    from ..errors import WikioriginError

    given = [
        o for o, v in (("--models", args.models), ("--judge-model", args.judge_model), ("--dry-run", args.dry_run)) if v
    ]
    if given:
        raise WikioriginError(
            f"--rated makes pairs from recorded ratings and calls no model: leave out {', '.join(given)}"
        )
    result = PreferenceBuilder(config).run_rated(args.questions, args.rated, out=args.out)
    report = result.report
    left = (
        (f"; {report.unmatched} rated questions not in {args.questions} left out, listed in {_failed_rows(args.out)}")
        if report.unmatched
        else ""
    )
    print(
        f"{report.kept} pairs from {report.questions} rated questions ({report.generated} responses{left}) "
        f"-> {args.out}"
    )
    return _ended(result, 0, args.out)


# --- card --------------------------------------------------------------------------------------


def _add_card(build) -> None:
    b = build.add_parser("card", help="a dataset card (README.md) for a dataset's directory")
    b.add_argument("directory", help="the directory of the dataset's Parquet files")
    b.add_argument(
        "--kind", choices=("mcq", "freeform", "preferences"), required=True, help="which dataset the directory holds"
    )
    b.add_argument("--title", required=True, help="the card's title")
    b.add_argument("--description", default="", help="a paragraph under the title")
    b.add_argument(
        "--force",
        action="store_true",
        help="replace a README.md that `build card` did not write (default: keep it, exit 2)",
    )
    b.add_argument(
        "--push",
        metavar="REPO",
        help="then upload the directory to the Hugging Face hub as the dataset repository REPO (owner/name; "
        "created if missing): its Parquet files, README.md and croissant.json. The token is HF_TOKEN's "
        "(or `hf auth login`'s), the endpoint HF_ENDPOINT's (default huggingface.co)",
    )
    b.add_argument("--private", action="store_true", help="with --push: a repository created is private")
    b.set_defaults(func=cmd_build_card)


def cmd_build_card(args) -> int:
    """`wikiorigin build card`: the dataset card (README.md with the hub's YAML) of a directory of sets."""
    from ..builders.dataset import CROISSANT, check_hub_token, hub_url, push, write_card

    if args.push:
        check_hub_token(args.push)  # before the card is written
    url = hub_url(args.push) if args.push else None
    card = write_card(args.directory, args.kind, args.title, args.description, force=args.force, url=url)
    print(f"dataset card -> {card}\nCroissant metadata -> {card.with_name(CROISSANT)}")
    if args.push:
        sent = push(args.directory, args.push, private=args.private)
        print(f"{len(sent)} files pushed -> {url}")
    return 0
