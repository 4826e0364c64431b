"""The files an lm-eval export writes beside its documents: the README (:func:`_readme`: how
to run the task, the ``wikiorigin`` command that gives the same numbers, what the tokenizer check
found, the provenance), and the check that the files it replaces are an export's own
(:func:`_check_ours`). Moved out of ``export_lmeval.py``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from . import __version__
from .errors import WikioriginError
from .evaluators import mcq

if TYPE_CHECKING:
    from .export_lmeval import LmEvalExport

__all__ = ["_check_ours", "_cue_option", "_readme"]


def _cue_option(cue: str) -> str:
    """``cue`` as ``--answer-cue`` takes it on a shell's command line (``\\n`` a new line)."""
    return "'" + cue.replace("\n", "\\n").replace("'", "'\\''") + "'"


def _tokens_said(result: LmEvalExport, meta: dict) -> str:
    """What the README says of the tokenizer check."""
    if meta.get("tokenizer") is None:
        return (
            "A tokenizer that merges the answer cue with the first characters of an option (a Qwen2- or "
            "Llama-3-style one on Japanese or Chinese: a token for `：河`) makes lm-eval cut those options "
            "short, score one it swallows whole as certain, or stop (`assert len(continuation_enc) > 0`): "
            "export again with `--tokenizer MODEL` to check, and to get a cue that keeps every option's "
            "tokens its own."
        )
    if not result.merged:
        return f"Checked with the tokenizer of `{meta['tokenizer']}`: every option keeps its own tokens."
    return (
        f"The tokenizer of `{meta['tokenizer']}` merges the language's answer cue with the first characters of "
        f"{result.merged} options, which lm-eval would cut short, score as certain when swallowed whole, or "
        f"stop on (`assert len(continuation_enc) > 0`): this export's cue is {_cue_option(result.cue or '')} "
        "instead (a context's trailing white space goes to the option, in lm-eval and in wikiorigin alike), "
        "and every option keeps its own tokens."
    )


def _readme(result: LmEvalExport, source: Path, meta: dict) -> str:
    """The README beside an export: how to run the task, what it gives, its provenance."""
    run = f"lm_eval --model hf --model_args pretrained=MODEL --tasks {result.task} --include_path {result.yaml.parent}"
    if result.kind == "mcq":
        language, own = result.language or "", result.cue or ""  # a multiple-choice export has both
        cue = "" if own == mcq.answer_cue(language) else f" --answer-cue {_cue_option(own)}"
        same = (
            f"It gives the `acc` and `acc_norm` that `wikiorigin eval mcq --mode loglikelihood "
            f"--questions {source.name} --language {result.language}{cue} --model MODEL --out RESULTS` "
            "writes to RESULTS/summary.json: zero-shot, no chat template (leave out lm-eval's "
            "`--apply_chat_template`), the same dtype on both sides (`--dtype`, lm-eval's `dtype=`). "
            + _tokens_said(result, meta)
        )
    else:
        same = (
            "Exact match here is lm-eval's (the first line of a greedy generation, case "
            "ignored); `wikiorigin eval freeform` reads the answer more leniently and adds chrF, "
            "so its numbers differ. Add `--apply_chat_template` for a chat model."
        )
    return "\n".join(
        [
            f"# lm-evaluation-harness task `{result.task}`",
            "",
            f"Exported by wikiorigin {__version__} from `{source.name}` "
            f"(sha256 {meta['source_sha256']}): {result.rows} "
            + ("multiple-choice questions" if result.kind == "mcq" else "free-form questions")
            + ".",
            "",
            f"- `{result.yaml.name}`: the task config",
            f"- `{result.data.name}`: one document per line (the path in the config is absolute: "
            "re-export after moving this directory)",
            "",
            "Run:",
            "",
            f"    {run}",
            "",
            same,
            "",
            *_incomplete_said(meta),
            "Provenance:",
            "",
            "```json",
            json.dumps(meta, ensure_ascii=False, indent=1),
            "```",
            "",
        ]
    )


def _incomplete_said(meta: dict) -> list[str]:
    """The README's word on a set accepted incomplete (``complete: false``), else nothing."""
    if meta.get("complete") is not False:
        return []
    return [
        f"**Incomplete**: {meta.get('failed_requests', '?')} LLM requests of the build failed after their retries "
        "and the set was accepted as it is (`complete: false`): questions are missing, so its figures are those "
        "of an incomplete set.",
        "",
    ]


def _check_ours(data: Path, config: Path, readme: Path) -> None:
    """The files of an export are replaced only when an export wrote them: a config that starts
    with our line, a README with our title, a documents file beside a config of ours. Another
    file of those names is an error naming it, before anything is written."""
    marks = {config: "# wikiorigin ", readme: "# lm-evaluation-harness task `"}
    for path, mark in marks.items():
        if path.exists() and not _starts_with(path, mark):
            raise WikioriginError(f"{path}: not written by an export of wikiorigin; move it, or give another task name")
    if data.exists() and not (config.exists() and _starts_with(config, marks[config])):
        raise WikioriginError(
            f"{data}: not written by an export of wikiorigin (no config of ours beside it); move it, "
            "or give another task name"
        )


def _starts_with(path: Path, mark: str) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(len(mark.encode())) == mark.encode()
    except OSError:
        return False
