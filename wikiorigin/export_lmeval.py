"""A dataset as an lm-evaluation-harness task: a YAML file, its JSONL data and a README.

Multiple-choice questions (``mcq.parquet``, the released YokaiEval rows) become a
``multiple_choice`` task whose numbers are those of ``wikiorigin eval mcq --mode
loglikelihood``: each document carries the context our evaluator scores the options after
(:func:`~wikiorigin.evaluators.mcq.question_prompt` plus the answer cue of the language), the
options, and the answer's index; ``target_delimiter`` is our delimiter between context and
option (none for Japanese, a space for English; lm-eval's default is a space). lm-eval's
``acc`` is the option with the highest log-likelihood, ``acc_norm`` the highest per character
of the option.

A tokenizer can merge the end of the answer cue with the first characters of an option (a
Qwen2- or Llama-3-style pretokenizer keeps ``：河童`` together, and its BPE may have a token
``：河``). lm-eval cuts the whole text at the context's token count: the option then loses its
first characters, or all of them, and lm-eval 0.4 scores such an option at log-likelihood 0
(certain: it wins the question) or, without its logits cache, stops on ``assert
len(continuation_enc) > 0``. Given
the model's ``tokenizer``, the export checks every option as lm-eval would cut it
(:func:`merged_options`) and, where the cue merges, ends the cue with a space, else a new
line (:func:`choose_cue`): lm-eval and our evaluator both move a context's trailing white
space to the continuation, and the usual pretokenizers split before it, so every option keeps
its own tokens. The README then gives the ``--answer-cue`` that makes ``wikiorigin eval mcq``
score the same texts.

Free-form questions (``freeform.parquet``) become a ``generate_until`` task: the prompt of
``wikiorigin eval freeform``, greedy decoding to the end of the line, and ``exact_match``
against any of the item's answers (lm-eval scores a list target as "any of them").

:func:`mcq_documents`, :func:`freeform_documents`, :func:`mcq_task` and :func:`freeform_task`
are pure; :func:`export_lmeval` reads the dataset and writes the files.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from . import __version__
from ._inputs import built_incomplete, first_repeat
from ._lmeval_files import _check_ours, _readme
from .errors import MissingExtra, ParameterError, WikioriginError
from .evaluators import freeform, mcq
from .files import check_output, read_rows, write_text
from .languages import open_language

__all__ = [
    "LmEvalExport",
    "mcq_documents",
    "freeform_documents",
    "mcq_task",
    "freeform_task",
    "to_yaml",
    "export_lmeval",
    "merged_options",
    "choose_cue",
]

_TASK_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_MEAN = {"aggregation": "mean", "higher_is_better": True}


@dataclass(slots=True)
class LmEvalExport:
    """What :func:`export_lmeval` wrote."""

    task: str
    kind: str  # "mcq" or "freeform"
    language: str | None  # of a multiple-choice task
    rows: int
    yaml: Path
    data: Path
    readme: Path
    cue: str | None = None  # the answer cue of a multiple-choice task
    merged: int = 0  # options the tokenizer merged with the language's own cue (then the cue was changed)


def mcq_documents(rows: list[dict], language: str, cue: str | None = None) -> list[dict]:
    """lm-eval documents of questions read (and checked) by
    :func:`~wikiorigin.evaluators.mcq.read_questions`: ``prompt`` (the whole context, ending
    with ``cue``, by default that of ``language``), ``choices``, ``answer_index``, and id,
    type, region, title."""
    cue = mcq.answer_cue(language) if cue is None else cue
    return [
        {
            "id": str(row["id"]),
            "prompt": mcq.question_prompt(row) + cue,
            "choices": row["choices"],
            "answer_index": row["answer_index"],
            "type": row["type"],
            "region": row["region"],
            "title": row["title"],
        }
        for row in rows
    ]


def freeform_documents(rows: list[dict], source_language: bool = False) -> list[dict]:
    """lm-eval documents of free-form questions: ``prompt`` (as ``wikiorigin eval freeform``
    asks, in English or with ``source_language`` in the item's language) and ``answers``."""
    return [
        {
            "id": str(r.get("id") or r.get("qid") or i),
            "prompt": freeform.question_prompt(r, source_language),
            "answers": [str(a) for a in r["answers"]],
            "qid": r.get("qid"),
            "origin_wiki": r.get("origin_wiki"),
        }
        for i, r in enumerate(rows)
    ]


def merged_options(docs: list[dict], delimiter: str, encode) -> list[tuple[str, str]]:
    """The ``(id, option)`` pairs whose option does not keep its own tokens when lm-eval cuts
    ``prompt + delimiter + option`` (``HFLM._encode_pair``: the prompt's trailing white space
    goes to the option, and the whole's tokens after as many as the stripped prompt has are
    the option's): the whole does not begin with the prompt's tokens, or has no more of them.
    ``encode`` maps a list of texts to their token ids (no special tokens)."""
    heads = [d["prompt"].rstrip() for d in docs]
    head_ids = dict(zip(heads, encode(list(dict.fromkeys(heads)))))
    pairs = [(d, head, option) for d, head in zip(docs, heads) for option in d["choices"]]
    wholes = encode([d["prompt"] + delimiter + option for d, _, option in pairs])
    out = []
    for (doc, head, option), whole in zip(pairs, wholes):
        ids = head_ids[head]
        if len(whole) <= len(ids) or whole[: len(ids)] != ids:
            out.append((doc["id"], option))
    return out


def choose_cue(docs: list[dict], cue: str, delimiter: str, encode) -> tuple[str, list[tuple[str, str]]]:
    """The answer cue to export and the options ``cue`` merges with (:func:`merged_options`):
    ``cue`` itself when no option merges with it, else ``cue`` and a space (for a language
    without a delimiter), else ``cue`` and a new line, the first that merges with none.
    Documents carry ``prompt`` ending in ``cue``. A tokenizer that merges across all of them is
    a :class:`~wikiorigin.errors.WikioriginError`: lm-eval could not give our numbers."""
    merged = merged_options(docs, delimiter, encode)
    if not merged:
        return cue, []
    stem = [d["prompt"][: len(d["prompt"]) - len(cue)] for d in docs]
    for end in (" ", "\n") if delimiter == "" else ("\n",):
        tried = [{**d, "prompt": p + cue + end} for d, p in zip(docs, stem)]
        if not merged_options(tried, delimiter, encode):
            return cue + end, merged
    doc_id, option = merged[0]
    raise WikioriginError(
        f"the tokenizer merges the answer cue {cue!r} with the first characters of {len(merged)} "
        f"options (e.g. {option!r} of question {doc_id}), and still does after a space or a "
        "new line: lm-evaluation-harness would cut those options short, score them as certain or "
        "stop (assert len(continuation_enc) > 0); score them with wikiorigin's log-likelihood mode "
        "instead (eval mcq, or MCQTask, in mode loglikelihood)"
    )


def _encoder(path):
    """``encode(texts) -> ids`` of the tokenizer in ``path`` (a model directory, or a
    ``tokenizer.json``), local files only."""
    from .llm.hf import INSTALL

    path = Path(path)
    if not path.exists():
        raise WikioriginError(f"{path}: no such tokenizer (give a model directory or its tokenizer.json)")
    try:
        from transformers import AutoTokenizer, PreTrainedTokenizerFast
    except ImportError as exc:
        raise MissingExtra(f"checking a tokenizer needs transformers: {INSTALL}") from exc
    try:
        tokenizer = (
            PreTrainedTokenizerFast(tokenizer_file=str(path)) if path.is_file() else AutoTokenizer.from_pretrained(path)
        )
    except (OSError, ValueError) as exc:  # transformers' ways of saying "no tokenizer here"
        first = next((line for line in str(exc).splitlines() if line.strip()), type(exc).__name__)
        raise WikioriginError(f"{path}: transformers cannot load a tokenizer from it ({first})") from None
    return lambda texts: tokenizer(texts, add_special_tokens=False)["input_ids"] if texts else []


def _dataset(name: str, data: Path) -> dict:
    return {
        "task": name,
        "dataset_path": "json",
        "dataset_kwargs": {"data_files": {"test": str(data)}},
        "test_split": "test",
    }


def mcq_task(name: str, data: Path, language: str, meta: dict) -> dict:
    """The ``multiple_choice`` task config. Column names, not templates: lm-eval then takes
    each document's field as it is (no Jinja rendering, no parsing of a rendered list)."""
    return {
        **_dataset(name, data),
        "output_type": "multiple_choice",
        "doc_to_text": "prompt",
        "doc_to_choice": "choices",
        "doc_to_target": "answer_index",
        "target_delimiter": mcq.delimiter(language),
        "num_fewshot": 0,
        "metric_list": [{"metric": "acc", **_MEAN}, {"metric": "acc_norm", **_MEAN}],
        "metadata": {"version": 1.0, **meta},
    }


def freeform_task(name: str, data: Path, meta: dict, max_tokens: int = 32) -> dict:
    """The ``generate_until`` task config: greedy, to the end of the first line, exact match
    (case and surrounding spaces ignored) against any of the answers."""
    return {
        **_dataset(name, data),
        "output_type": "generate_until",
        "doc_to_text": "prompt",
        "doc_to_target": "answers",
        "num_fewshot": 0,
        "generation_kwargs": {"until": ["\n"], "do_sample": False, "max_gen_toks": max_tokens},
        "metric_list": [
            {"metric": "exact_match", **_MEAN, "ignore_case": True, "regexes_to_ignore": [r"^\s+", r"\s+$"]}
        ],
        "metadata": {"version": 1.0, **meta},
    }


class _TaskDumper(yaml.SafeDumper):
    """PyYAML's safe dumper, with a string that holds a line break written double-quoted, the
    break escaped (``"\\n"``): in its other styles PyYAML folds the string over several lines,
    and a break YAML has beyond ``\\n`` and ``\\r`` would be read back as a space."""


_LINE_BREAKS = frozenset("\n\r\x85\u2028\u2029")  # YAML 1.1's line breaks


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = '"' if _LINE_BREAKS.intersection(value) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_TaskDumper.add_representer(str, _represent_str)


def to_yaml(config: dict) -> str:
    """A task config as block YAML (PyYAML's safe dumper): keys in the config's own order, text
    as it is (CJK unescaped; line breaks and characters YAML cannot print escaped), no line
    folded. No ``!function`` tag: the configs name document fields and built-in metrics only."""
    return yaml.dump(
        config, Dumper=_TaskDumper, sort_keys=False, allow_unicode=True, default_flow_style=False, width=float("inf")
    )


def _write(path: Path, text: str) -> None:
    write_text(path, text)  # the one atomic writer: a failed write leaves no half file


def _kind(rows: list[dict], path) -> str:
    if not rows:
        raise WikioriginError(f"{path}: no rows")
    first = rows[0]
    has_choices = "choices" in first or isinstance(first.get("question"), dict)
    if has_choices == ("answers" in first):
        raise WikioriginError(
            f"{path}: row 0 has "
            + (
                "both `choices` and `answers`"
                if has_choices
                else "neither `choices` (multiple choice) nor `answers` (free-form)"
            )
        )
    return "mcq" if has_choices else "freeform"


def export_lmeval(
    dataset,
    out,
    task: str | None = None,
    language: str | None = None,
    source_language: bool = False,
    cue: str | None = None,
    tokenizer=None,
) -> LmEvalExport:
    """Write ``OUT/TASK.yaml``, ``OUT/TASK.jsonl`` and ``OUT/TASK.README.md`` for a
    multiple-choice or free-form dataset (told apart by its ``choices`` or ``answers``).
    ``language`` (multiple choice only) picks the answer cue and delimiter: by default the
    rows' ``language`` column (the released YokaiEval rows': their wiki's), else a
    :class:`~wikiorigin.errors.ParameterError` asking for it; ``cue`` replaces the cue (as ``eval mcq
    --answer-cue``). ``tokenizer`` (multiple choice only: a model directory or a
    ``tokenizer.json``) is checked for merging the cue with the options, and the cue changed
    where it does (:func:`choose_cue`; ``merged`` in the result, the README says so).
    ``source_language`` (free-form only) asks in the item's language. The task name defaults
    to ``wikiorigin_`` + the file's stem."""
    path, source = Path(dataset), Path(dataset).resolve()
    raw = read_rows(path)
    kind = _kind(raw, path)
    _check_once(raw, path)
    name = _task_name(task, source)
    _check_kind(path, kind, source_language=source_language, language=language, cue=cue, tokenizer=tokenizer)
    encode = _encoder(tokenizer) if tokenizer is not None else None
    out = Path(out).resolve()
    data = out / f"{name}.jsonl"
    meta: dict[str, object] = {
        "wikiorigin": __version__,
        "source": source.name,  # the file's name and checksum: no local path of this machine
        "source_sha256": hashlib.sha256(source.read_bytes()).hexdigest(),
        "kind": kind,
        **built_incomplete(path),  # a figure of the task is then one of an incomplete set
    }
    merged: list[tuple[str, str]] = []
    if kind == "mcq":
        language, cue, docs, merged = _mcq_docs(path, language, cue, encode)
        meta.update(language=language, rows=len(docs), answer_cue=cue)
        if tokenizer is not None:
            meta.update(tokenizer=Path(tokenizer).name, merged_options=len(merged))
        config = mcq_task(name, data, language, meta)
    else:
        docs = freeform_documents(freeform.read_freeform(path), source_language)
        meta.update(source_language=source_language, rows=len(docs))
        config = freeform_task(name, data, meta)
    files = [data, out / f"{name}.yaml", out / f"{name}.README.md"]
    for written in files:
        check_output(written, inputs=[path], suffix=None)  # the input is none of them; out writable
    _check_ours(*files)
    result = LmEvalExport(
        name, kind, language, len(docs), files[1], data, files[2], cue if kind == "mcq" else None, len(merged)
    )
    _write(data, "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs))
    _write(result.readme, _readme(result, source, meta))
    _write(result.yaml, f"# wikiorigin {__version__}: see {result.readme.name}\n" + to_yaml(config))
    return result


def _check_once(rows: list[dict], path: Path) -> None:
    """Each question once: a row repeated (the same id and question) would count twice in the
    task's accuracy, and an id given to two questions names neither."""
    from .evaluators.itemsets import check_once

    check_once(rows, path)
    ids = [(n, row["id"]) for n, row in enumerate(rows) if row.get("id") is not None]
    if repeat := first_repeat(i for _, i in ids):
        (n, given), first = ids[repeat[0]], ids[repeat[1]][0]
        raise WikioriginError(f"{path}: row {n}: id {given!r} again (first: row {first})")


def _task_name(task: str | None, source: Path) -> str:
    """The task's name: ``task``, or ``wikiorigin_`` + the file's stem; one lm-eval takes."""
    name = task or "wikiorigin_" + re.sub(r"[^a-z0-9_]+", "_", source.stem.split(".")[0].lower()).strip("_")
    if not _TASK_NAME.fullmatch(name):
        raise WikioriginError(f"task name {name!r}: use letters, digits, '_', '-' and '.'")
    return name


def _check_kind(path: Path, kind: str, **given) -> None:
    """The parameters ``given`` fit the dataset's ``kind``: ``source_language`` free-form only,
    ``language``, ``cue`` and ``tokenizer`` multiple choice only."""
    if kind == "mcq" and given["source_language"]:
        raise ParameterError(
            "source_language", f"{path}: {{source_language}} is for free-form questions; this is multiple choice"
        )
    for parameter in ("language", "cue", "tokenizer"):
        if kind == "freeform" and given[parameter] is not None:
            raise ParameterError(
                parameter, f"{path}: {{{parameter}}} is for multiple-choice questions; this is free-form"
            )


def _mcq_docs(
    path: Path, language: str | None, cue: str | None, encode
) -> tuple[str, str, list[dict], list[tuple[str, str]]]:
    """The language, answer cue, documents and options the tokenizer merges (``encode``: none
    without one) of a multiple-choice export."""
    questions = mcq.read_questions(path)
    # as eval mcq decides it: the one given (any open Wikipedia's), else the rows' own; none is an error
    language = open_language(language) if language else mcq.prompt_language(questions, source=str(path))
    cue = mcq.answer_cue(language) if cue is None else cue
    docs = mcq_documents(questions, language, cue)
    merged: list[tuple[str, str]] = []
    if encode is not None:
        cue, merged = choose_cue(docs, cue, mcq.delimiter(language), encode)
        docs = mcq_documents(questions, language, cue)
    return language, cue, docs, merged
