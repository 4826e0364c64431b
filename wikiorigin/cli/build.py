"""The build stage's commands: ``build mcq``, ``build freeform`` and ``build preference``
(QA datasets written with LLMs), and ``build card`` (a dataset card). Each turns its options
into a builder's configuration (:mod:`wikiorigin.builders`), runs the builder and saves the
set, holding ``OUT.lock`` while it runs, then says one line."""

from __future__ import annotations

from .build_options import (
    card_options,
    dry_run,
    freeform_options,
    mcq_inputs,
    mcq_method,
    preference_inputs,
    preference_pairs,
)
from .options import flags, llm_client, llm_options, positive, speaks_flags, temperature
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


def _method_options(b, preset: str) -> None:
    """``--preset`` (the paper's method settings) and the sampling options of every LLM step;
    an option given wins over the preset, the preset over the builder's defaults."""
    from ..builders.presets import PRESETS

    m = b.add_argument_group(
        "method settings",
        "Defaults are the builder's own, which differ from the paper where docs/explanation/methods.md says; "
        f"--preset {preset} sets every method setting to the "
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
        help="sampling temperature of every step (default: the builder's, or the preset's)",
    )
    m.add_argument(
        "--top-p",
        type=_unit,
        default=None,
        help="nucleus sampling of every step (default: the builder's, or the preset's)",
    )
    m.add_argument(
        "--max-tokens",
        type=positive(int),
        default=None,
        help="output limit of every step, in tokens (default: the builder's, or the preset's)",
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
    mcq_inputs(b)
    mcq_method(b)
    _method_options(b, "yokaieval")
    dry_run(b)
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
    freeform_options(b)
    _method_options(b, "wikioriginqa")
    dry_run(b)
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
    preference_inputs(b)
    preference_pairs(b)
    _method_options(b, "care")
    dry_run(b)
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
    card_options(b)
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
