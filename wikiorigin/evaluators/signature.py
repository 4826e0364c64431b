"""Runs that describe themselves: the settings of an evaluation and its one-line signature.

As sacrebleu stamps a score with ``nrefs:1|case:mixed|tok:13a|...|version:2.0.0``, every
evaluation writes the settings that change its numbers: a ``settings`` record in
``summary.json`` and a signature line in ``report.md``, e.g.::

    wikiorigin-eval|task:mcq|mode:generate|model:Qwen2.5-7B@3fa1c2d9|dtype:bfloat16|device:cuda|
    template:chat@5b3e0f1a|instruction:9c1d2e3f|lang:ja|temp:0.1|top_p:1.0|seed:0|max_new:128|
    bos:template|parser:2|data:0a1b2c3d|version:0.1.0

(on one line). Fields come in the order of :data:`FIELDS`, under their abbreviations; a
setting that is absent or ``None`` is left out; settings the table does not know follow in
alphabetical order under their own names, before ``version``. Two numbers are comparable
only when their signatures agree on every field but the model's own (:data:`MODEL_FIELDS`,
and the hash of the chat template, which belongs to the model): :func:`differences` lists
the others.

What the model is comes from the model alone: its ``describe()``
(:class:`~wikiorigin.protocols.Described`), taken whole, with what it says of the capability
the run uses (:func:`model_settings`); nothing is read off it otherwise, and a model that only
generates is signed by what it says. The package's models say ``NAME@REVISION``: for a local
directory the revision is, first found: the git
commit of a checkout (``git-`` + 8 hex digits), the hub commit transformers read
(``config._commit_hash``, ``hf-`` + 8), else a SHA-1 (8 hex digits) of ``config.json`` and
the names and sizes of the weight files (not their bytes: hashing gigabytes would take
minutes). For an endpoint it is the host (and port) of its base URL. ``data`` is a hash of
the questions themselves (:func:`data_hash`), so the same questions agree whatever file they
came in, and questions worded otherwise do not.

Each evaluator builds its record: :func:`~wikiorigin.evaluators.freeform.freeform_settings`,
:func:`~wikiorigin.evaluators.judge.judge_settings`,
:func:`~wikiorigin.evaluators.leakage.leakage_settings`, :func:`mcq_settings`; their
``write_*_results`` take it as ``settings=``.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

from .. import __version__
from ..errors import ParameterError
from ..llm.describe import client_label
from ..protocols import CAPABILITIES, Described, model_name
from .answers import PARSER_VERSION
from .cues import answer_cue
from .unread import JUDGE_PROMPT

__all__ = [
    "FIELDS",
    "MODEL_FIELDS",
    "SAMPLING_DEFAULTS",
    "signature",
    "run_settings",
    "model_settings",
    "model_revision",
    "client_name",
    "context_bos",
    "mcq_settings",
    "text_hash",
    "data_hash",
    "differences",
]

PREFIX = "wikiorigin-eval"

FIELDS = (  # (settings key, abbreviation), in the signature's order
    ("task", "task"),  # mcq, freeform, judge, leakage
    ("mode", "mode"),  # mcq: generate or loglikelihood
    ("model", "model"),  # NAME@REVISION (see the module docstring)
    ("dtype", "dtype"),
    ("device", "device"),
    ("template", "template"),  # chat@<sha1-8 of the chat template>, raw, or server (an endpoint's)
    ("thinking", "think"),  # a local chat template's enable_thinking: on, off or template-default
    ("reasoning_effort", "effort"),  # an endpoint's reasoning effort (then no sampling parameter is sent)
    ("instruction", "instruction"),  # sha1-8 of the prompt template or instruction line
    ("language", "lang"),
    ("temperature", "temp"),
    ("top_p", "top_p"),
    ("seed", "seed"),
    ("max_new_tokens", "max_new"),
    ("bos", "bos"),  # how the first token is conditioned (see run_settings)
    ("split", "split"),  # how context and continuation are cut into tokens
    ("max_length", "ctx"),  # the model's context in tokens (a property of the model)
    ("windows", "windows"),  # layout of the windows over texts longer than the context
    ("stride", "stride"),  # tokens predicted per overlapping window
    ("max_chars", "chars"),
    ("min_k", "mink"),
    ("parser", "parser"),  # version of the rules that read an answer from a response
    ("judge", "judge"),  # NAME@HOST of the judging LLM
    ("judge_prompt", "jprompt"),  # sha1-8 of the judge's instructions
    ("judge_sampling", "jsample"),  # the judge's sampling as sent: t0.7,p1,m1024 or effort:low,m1024
    ("paraphrases", "para"),  # data_hash of the paraphrases
    ("paraphraser", "paraphraser"),  # NAME@HOST#<sha1-8 of its prompt> of the paraphrasing LLM
    ("chrf", "chrf"),  # c<char order>w<word order>b<beta>
    ("base_url", "url"),  # an endpoint's base URL, normalised
    ("file", "file"),  # recorded answers: the file's name
    ("sha256", "sha256"),  # recorded answers: the file's SHA-256
    ("data", "data"),  # data_hash of the questions (or articles) evaluated
    ("version", "version"),
)
"""The settings a signature names, as ``(settings key, abbreviation)`` pairs in the
signature's order."""
_ABBREVIATION = dict(FIELDS)
_ORDER = {key: i for i, (key, _) in enumerate(FIELDS)}

# Fields that describe the model under evaluation, not the way it was evaluated: runs of
# different models differ there by design.
MODEL_FIELDS = frozenset({"model", "max_length", "base_url", "file", "sha256"})
"""The fields that describe the model under evaluation rather than how it was evaluated:
runs of different models differ there by design, so comparisons do not warn about them."""

# What LocalModel.generate and EndpointModel.generate use when not told otherwise.
SAMPLING_DEFAULTS = {"temperature": 0.1, "top_p": 1.0, "seed": 0, "max_new_tokens": 128}
"""The sampling that ``LocalModel.generate`` and ``EndpointModel.generate`` use when not told
otherwise."""

_WEIGHTS = (".safetensors", ".bin", ".pt", ".pth", ".gguf", ".h5", ".msgpack", ".ckpt")


def text_hash(text: str) -> str:
    """The first 8 hex digits of the SHA-1 of ``text`` (UTF-8)."""
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:8]


def data_hash(rows, keys: tuple[str, ...]) -> str:
    """The first 8 hex digits of the SHA-1 of the ``keys`` of each row (dicts), in order: the
    same questions give the same hash whatever file (Parquet, JSON) or extra columns
    (recorded responses) they came in."""
    values = [[row.get(key) for key in keys] for row in rows]
    return text_hash(json.dumps(values, ensure_ascii=False, sort_keys=True, default=_plain))


def _plain(value):
    return value.tolist() if hasattr(value, "tolist") else str(value)


def _value(value) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value).replace("|", "/")  # the separator never occurs inside a value


def signature(settings: dict) -> str:
    """The one-line signature of a ``settings`` record (see the module docstring)."""
    if not isinstance(settings, dict):
        raise TypeError(f"signature: expected a settings dict, got {type(settings).__name__}")
    present = {k: v for k, v in settings.items() if v is not None}
    known = [(key, short) for key, short in FIELDS if key in present and key != "version"]
    unknown = sorted(k for k in present if k not in _ABBREVIATION)
    parts = [f"{short}:{_value(present[key])}" for key, short in known]
    parts += [f"{key}:{_value(present[key])}" for key in unknown]
    if "version" in present:
        parts.append(f"version:{_value(present['version'])}")
    return "|".join([PREFIX, *parts])


def _git_revision(path: Path) -> str | None:
    """The commit checked out in ``path`` (read from ``.git``, without running git)."""
    git = path / ".git"
    try:
        head = (git / "HEAD").read_text().strip()
        if not head.startswith("ref: "):
            return head[:8]
        ref = head[5:]
        if (git / ref).is_file():
            return (git / ref).read_text().strip()[:8]
        for line in (git / "packed-refs").read_text().splitlines():
            if line.endswith(f" {ref}"):
                return line.split()[0][:8]
    except OSError:
        return None
    return None


def model_revision(path, commit_hash: str | None = None) -> str:
    """The revision of a local model directory: ``git-XXXXXXXX`` (a git checkout),
    ``hf-XXXXXXXX`` (``commit_hash``, the hub commit transformers read), or the SHA-1 (8 hex
    digits) of ``config.json`` and the weight files' names and sizes."""
    path = Path(path)
    found = _git_revision(path) if path.is_dir() else None
    if found:
        return f"git-{found}"
    if commit_hash:
        return f"hf-{commit_hash[:8]}"
    digest = hashlib.sha1()
    config = path / "config.json"
    if config.is_file():
        digest.update(config.read_bytes())
    files = sorted(p for p in path.iterdir() if p.is_file() and p.name.endswith(_WEIGHTS)) if path.is_dir() else []
    for weights in files:
        digest.update(f"\n{weights.name} {weights.stat().st_size}".encode())
    return digest.hexdigest()[:8]


def model_settings(model: Described | None, capability: str | None = None) -> dict[str, Any]:
    """What the model under evaluation says of itself (its ``describe()``), as settings: its
    top-level fields, and those under ``capability`` (``generate``, ``loglikelihood``,
    ``token_logprobs``: what holds when it is used so); ``model`` defaults to its name
    (:func:`~wikiorigin.protocols.model_name`).
    Nothing is read off the model otherwise. ``None`` (recorded responses) gives ``{}``."""
    if model is None:
        return {}
    description = model.describe()
    if not isinstance(description, dict):
        raise TypeError(f"{type(model).__name__}.describe() gave {type(description).__name__}, not a dict")
    settings = {k: v for k, v in description.items() if k not in CAPABILITIES}
    section = description.get(capability) if capability is not None else None
    if isinstance(section, dict):
        settings.update(section)
    settings.setdefault("model", model_name(model, description))
    return settings


def judge_sampling(client, params: dict | None = None) -> str:
    """How a judging client samples CARE's ratings, as it sends them (the judge's own
    :data:`~wikiorigin.care.JUDGE_PARAMS` through the client: a reasoning effort replaces
    the temperature and top-p; ``params``: other than those): ``t0.7,p1,m1024``, or
    ``effort:low,m1024``."""
    from ..care import JUDGE_PARAMS

    asked = JUDGE_PARAMS if params is None else params
    sent = client.params(asked) if hasattr(client, "params") else dict(asked)
    parts = [f"effort:{sent['reasoning_effort']}"] if sent.get("reasoning_effort") else []
    parts += [f"{short}{sent[key]:g}" for key, short in (("temperature", "t"), ("top_p", "p")) if key in sent]
    limit = sent.get("max_tokens", sent.get("max_completion_tokens"))
    return ",".join(parts + ([f"m{limit}"] if limit else []))


def client_name(client) -> str | None:
    """``NAME@HOST`` of an :class:`~wikiorigin.llm.LLMClient` (a judge, a paraphraser, an
    endpoint under evaluation): the host of an OpenAI-compatible backend's URL, or the
    backend's kind (``transformers``) for a local one (:func:`~wikiorigin.llm.describe.client_label`)."""
    return None if client is None else client_label(client)


def context_bos(add_bos: bool | None) -> str:
    """``bos`` of log-likelihood scoring, from a model's ``add_bos``: ``tokenizer`` (None: the
    tokenizer's own special tokens, lm-evaluation-harness's default), ``none`` (False),
    ``forced`` (True: the BOS token in front when the tokenizer does not put it there)."""
    return {None: "tokenizer", False: "none", True: "forced"}[add_bos]


def run_settings(
    task: str, model: Described | None = None, *, capability: str | None = None, sampling: dict | None = None, **fields
) -> dict:
    """The settings record of one run: ``task``, the model's own description
    (:func:`model_settings`, with what it says of ``capability``, the capability the run
    uses), the sampling actually used (``sampling`` over :data:`SAMPLING_DEFAULTS`; leave it
    ``None`` when nothing is generated), the evaluator's own ``fields`` (``None`` values
    dropped) and the wikiorigin version. A field of the model's own named like one of the
    run's (``version``, ``temperature``, ...) is kept as ``model_<name>``.

    A model names how the first token is conditioned (``bos``) in its description:
    ``template`` (a chat template writes the special tokens) or ``tokenizer`` (a raw prompt),
    for scored contexts ``tokenizer``, ``none`` or ``forced`` (:func:`context_bos`), ``always``
    (the BOS token before every scored text), ``server`` (an endpoint's own)."""
    run_own = {"task", "version", *fields, *(SAMPLING_DEFAULTS if sampling is not None else ())}
    described = model_settings(model, capability)
    settings = {"task": task, **{f"model_{k}" if k in run_own else k: v for k, v in described.items()}}
    if sampling is not None:
        settings.update({**SAMPLING_DEFAULTS, **{k: v for k, v in sampling.items() if v is not None}})
        if settings.get("reasoning_effort"):  # a reasoning model is sent no sampling parameter
            for key in ("temperature", "top_p"):
                settings.pop(key, None)
    settings.update({k: v for k, v in fields.items() if v is not None})
    settings["version"] = __version__
    for key, value in settings.items():
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"run_settings: {key} is {value}, not a finite number")
    return settings


def mcq_settings(
    model: Described | None = None,
    *,
    mode: str = "generate",
    language: str | None = None,
    instruction: str | None = None,
    judge=None,
    recorded: str = "recorded",
    rows: list[dict] | None = None,
    cue: str | None = None,
    **sampling,
) -> dict:
    """Settings of a multiple-choice run (:mod:`~wikiorigin.evaluators.mcq`): generation
    (``instruction``, sampling, the answer parser's version, the judge of unread answers)
    or log-likelihood (the answer cue: ``cue``, else that of ``language``; how contexts are
    split and begun: the model's description). ``model=None``: recorded responses;
    ``rows``: the questions (hashed). :class:`~wikiorigin.evaluators.tasks.MCQTask` makes these
    from what it ran; called by hand, the arguments must be those of the run."""
    data = data_hash(rows, ("id", "question", "choices", "answer_index")) if rows is not None else None
    if mode == "loglikelihood":
        return run_settings(
            "mcq",
            model,
            capability="loglikelihood",
            mode=mode,
            language=language,
            instruction=text_hash(_cue(language) if cue is None else cue),
            data=data,
        )
    if mode != "generate":
        raise ValueError(f"mcq_settings: mode is 'generate' or 'loglikelihood', not {mode!r}")
    settings = run_settings(
        "mcq",
        model,
        capability="generate",
        sampling=sampling if model is not None else None,
        mode=mode,
        language=language if model is not None else None,  # recorded prompts had their own
        instruction=None if instruction is None or model is None else text_hash(instruction),
        parser=PARSER_VERSION,
        judge=client_name(judge),
        judge_prompt=text_hash(JUDGE_PROMPT) if judge is not None else None,
        data=data,
    )
    if model is None:
        settings["model"] = f"recorded:{recorded}"
    return settings


def _cue(language: str | None) -> str:
    """The answer cue of ``language``; a :class:`~wikiorigin.errors.ParameterError` without one."""
    if language is None:
        raise ParameterError(
            "language",
            "mcq_settings: log-likelihood mode without a cue needs the language of its answer cue: give {language}",
        )
    return answer_cue(language)


def _comparable(key: str, value):
    if key == "template" and isinstance(value, str):
        return value.split("@", 1)[0]  # the template's own hash belongs to the model
    return value


def differences(a: dict | None, b: dict | None) -> dict[str, tuple]:
    """``{field: (value in a, value in b)}`` for the settings two runs differ in, the model's
    own fields left out. A field one run lacks counts as a difference (``None`` there)."""
    a, b = a or {}, b or {}
    out = {}
    for key in sorted(set(a) | set(b), key=lambda k: (_ORDER.get(k, len(FIELDS)), k)):
        if key in MODEL_FIELDS:
            continue
        if _comparable(key, a.get(key)) != _comparable(key, b.get(key)):
            out[key] = (a.get(key), b.get(key))
    return out
