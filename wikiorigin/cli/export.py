"""The export stage's command: ``export lm-eval`` (a dataset as an lm-evaluation-harness task)."""

from __future__ import annotations

from .options import speaks_flags

__all__ = ["add_commands"]


def add_commands(sub) -> None:
    """Register ``export`` and its sub-command ``lm-eval`` under ``sub``."""
    s = sub.add_parser("export", help="datasets in other tools' formats")
    export = s.add_subparsers(dest="exporter", required=True)
    x = export.add_parser("lm-eval", help="an lm-evaluation-harness task (YAML + JSONL) with our numbers")
    x.add_argument("dataset", help="mcq.parquet, released YokaiEval rows (JSON/Parquet) or freeform.parquet")
    x.add_argument("--out", required=True, help="directory for TASK.yaml, TASK.jsonl, TASK.README.md")
    x.add_argument("--task", default=None, help="task name (default: wikiorigin_ + the file's stem)")
    x.add_argument(
        "--language",
        default=None,
        help="multiple choice: answer cue and delimiter, the code of any open Wikipedia "
        "(default: the rows' language column; the released YokaiEval rows: their wiki's, ja)",
    )
    x.add_argument("--source-language", action="store_true", help="free-form: ask in the item's language")
    x.add_argument(
        "--answer-cue",
        default=None,
        help="multiple choice: the cue before each option, as eval mcq's (\\n is a new line)",
    )
    x.add_argument(
        "--tokenizer",
        default=None,
        metavar="PATH",
        help="multiple choice: the model's tokenizer (a model directory or tokenizer.json): check that "
        "every option keeps its own tokens after the cue; where not, the cue ends with a space or a "
        "new line (the task's README names the --answer-cue that gives eval mcq the same numbers)",
    )
    x.set_defaults(func=cmd_export_lmeval)


@speaks_flags
def cmd_export_lmeval(args) -> int:
    """`wikiorigin export lm-eval`: a dataset written as an lm-evaluation-harness task."""
    from ..export_lmeval import export_lmeval

    r = export_lmeval(
        args.dataset,
        args.out,
        task=args.task,
        language=args.language,
        source_language=args.source_language,
        tokenizer=args.tokenizer,
        cue=None if args.answer_cue is None else args.answer_cue.replace("\\n", "\n"),
    )
    kind = f"multiple_choice, {r.language}" if r.kind == "mcq" else "generate_until"
    print(
        f"lm-eval task {r.task}: {r.rows} questions ({kind}) -> {r.yaml} ({r.data.name}, {r.readme.name}); "
        f"run: lm_eval --model hf --model_args pretrained=MODEL --tasks {r.task} --include_path {r.yaml.parent}"
    )
    return 0
