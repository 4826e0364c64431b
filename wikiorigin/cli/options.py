"""Option groups that several commands share, defined once, and the objects they describe:
the LLM options (:func:`llm_options`, :func:`llm_client`), the options of a model under
evaluation (:func:`model_options`, :func:`model`), and argparse types checked at the edge."""

from __future__ import annotations

import argparse
import json
import math
import re

# llm.client.REASONING_EFFORTS, written out: the command line starts without the LLM layer
# (tests/llm/test_reasoning.py checks that the two agree)
REASONING_EFFORTS = ("minimal", "low", "medium", "high")

__all__ = [
    "llm_options",
    "llm_client",
    "check_cache",
    "model_options",
    "model",
    "sampling",
    "positive",
    "rating_scale",
    "memory_size",
    "namespaces",
    "FLAGS",
    "flags",
    "in_flags",
    "speaks_flags",
]

FLAGS = {
    "language": "--language",
    "instruction": "--instruction",
    "cue": "--answer-cue",
    "judge": "--judge-model",
    "mode": "--mode",
    "labels": "--labels",
    "paraphrases": "--paraphrases FILE",
    "paraphraser": "--paraphrase-model NAME",
    "windows": "--windows",
    "stride": "--stride",
    "human_ratings": "--human-ratings FILE",
    "pairs": "--pairs",
    "min_gap": "--min-gap",
    "rating_scale": "--rating-scale",
    "force": "--force",
    "format": "--format",
    "source_language": "--source-language",
    "model": "--model",
    "articles": "--articles",
    "questions": "--questions",
    "responses": "--responses",
    "rated": "--rated",
    "out": "--out",
    "directory": "--out",
    "cache": "--cache",
    "base_url": "--base-url",
    "azure_endpoint": "--azure-endpoint",
    "reasoning_effort": "--reasoning-effort",
    "retry_refusals": "--retry-refusals",
    "temperature": "--temperature",
    "top_p": "--top-p",
    "max_tokens": "--max-tokens",
    "max_new_tokens": "--max-new-tokens",
    "seed": "--seed",
    "device": "--device",
    "dtype": "--dtype",
    "tokenizer": "--tokenizer PATH",
    "max_length": "--max-length N",
    "thinking": "--thinking",
    "min_editions": "--min-editions",
    "max_editions": "--max-editions",
    "sample": "--sample",
    "entities_file": "--entities",
    "wikidata": "--wikidata",
    "sparql": "--sparql",
    "text": "--text",
    "html_dump": "--html-dump",
    "scheduler": "--scheduler",
    "kind": "--kind",
    "annotator": "--annotator",
    "port": "--port",
    "host": "--host",
    "policy": "--policy",
    "db": "--db",
    "allow_failures": "--allow-failures",
    "max_article_chars": "--max-article-chars",
    "answer_positions": "--answer-positions",
    "label_steps": "--label-steps",
    "checker_abstains": "--checker-abstains",
}
"""The library's parameters as the command line calls them: a
:class:`~wikiorigin.errors.ParameterError` is said with these (``give --language``, not
``give language=``), by the commands that have the option (:func:`flags`)."""


def flags(args, error=None) -> dict[str, str]:
    """The library's parameters as the command ``args`` were parsed for calls them: the
    :data:`FLAGS` of its own options (one it lacks stays in the library's words), and
    ``--endpoint`` for the ``base_url`` of the model under evaluation (an
    :class:`~wikiorigin.llm.EndpointError` of its server), where the LLM clients' is ``--base-url``."""
    names = {name: flag for name, flag in FLAGS.items() if hasattr(args, _dest(flag))}
    endpoint, url = getattr(args, "endpoint", None), getattr(error, "url", None)
    if endpoint and url and url.rstrip("/") == endpoint.rstrip("/"):
        names["base_url"] = "--endpoint"
    return names


def _dest(flag: str) -> str:
    """argparse's attribute of ``flag`` (``--answer-cue`` -> ``answer_cue``)."""
    return flag.split()[0].lstrip("-").replace("-", "_")


def in_flags(text: str, names: dict[str, str]) -> str:
    """``text`` in which the library said a parameter as it takes it (``raise max_tokens=``: a
    failed request's reason) with those of ``names`` said as their flags."""
    return re.sub(r"(?<![\w.-])([a-z_]+)=(?=$|[\s,;:)])", lambda m: names.get(m[1], m[0]), text)


def speaks_flags(func):
    """A command handler whose library errors name the command line's flags (:func:`flags`)
    instead of the library's parameters, and whose library warnings show on stderr
    (:func:`~wikiorigin.cli.outcome.show_log`). The handler's first argument is its parsed
    options. (A :class:`~wikiorigin.errors.ParameterError` that a command without it raises is
    said the same way by :func:`wikiorigin.cli.main`.)"""
    import functools

    from ..errors import ParameterError, WikioriginError
    from .outcome import show_log

    @functools.wraps(func)
    def handler(args, *rest, **kwargs):
        try:
            with show_log():
                return func(args, *rest, **kwargs)
        except ParameterError as exc:
            raise WikioriginError(exc.said(flags(args, exc))) from None

    return handler


def namespaces(text: str) -> list[int]:
    """An argparse type: comma-separated namespace numbers (``0`` or ``0,14``)."""
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None


def memory_size(text: str) -> str:
    """A memory size as DuckDB takes it (``4GB``, ``512MB``, ``1.5GiB``), checked at the command line."""
    if not re.fullmatch(r"\s*\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)\s*", text, re.I):
        raise argparse.ArgumentTypeError(f"{text!r} is not a memory size such as 4GB or 512MB")
    return text.strip()


def positive(kind, zero: bool = False):
    """An argparse type: a finite number > 0 (>= 0 with ``zero``)."""

    def convert(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if not math.isfinite(value) or value < 0 or (value == 0 and not zero):
            raise argparse.ArgumentTypeError(f"expected a number {'>=' if zero else '>'} 0, got {text!r}")
        return value

    return convert


# --- LLM options: the builders, and the judges and paraphrasers of `eval` ---------------------

_WAITS = (
    "Every wait is bounded: one request takes at most (RETRIES + 1) x TIMEOUT + RETRIES x MAX_WAIT "
    "(10 min with the defaults), a run at most that x requests / CONCURRENCY; the usage line says how "
    "long it waited; once 10 requests in a row have given up, the rest is not sent. The endpoint is "
    "checked once (seconds) before the first call that is not in the cache: a dead server, a refused "
    "key or an unknown model is an error before anything is paid."
)


def rating_scale(text: str) -> tuple[float, float]:
    """An argparse type: a rating scale ``LOW-HIGH`` (``1-10``, ``0-5``, ``-3-3``, ``1.5-4.5``),
    finite, the lowest first."""
    found = re.fullmatch(r"\s*(-?\d+(?:\.\d+)?)\s*(?:-|\.\.|to)\s*(-?\d+(?:\.\d+)?)\s*", text)
    low, high = (float(found[1]), float(found[2])) if found else (math.nan, math.nan)
    if not low < high:
        raise argparse.ArgumentTypeError(f"expected LOW-HIGH with LOW under HIGH (e.g. 1-10), got {text!r}")
    return (low, high)


def prices(text: str) -> dict:
    """``--prices``: JSON with numbers for ``input`` and ``output`` (USD per 1M tokens), checked
    at the command line, before anything runs."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        value = None
    if not (isinstance(value, dict) and all(_price(value.get(k)) for k in ("input", "output"))):
        raise argparse.ArgumentTypeError(
            f'{text!r} is not JSON such as {{"input": 0.15, "output": 0.6}} (USD per 1M tokens: numbers >= 0)'
        )
    return value


def _price(value) -> bool:
    """A price: a finite number >= 0 (not a boolean, not NaN)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value < float("inf")


def temperature(text: str) -> float:
    """An argparse type: a sampling temperature, 0 to 2 (the range OpenAI's API and vLLM take)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0 <= value <= 2:  # nan too
        raise argparse.ArgumentTypeError(f"expected a temperature from 0 to 2, got {text!r}")
    return value


def llm_options(b) -> None:
    """The options of the LLM clients a command makes (:func:`llm_client`)."""
    b.add_argument(
        "--backend",
        choices=("openai", "transformers"),
        default="openai",
        help="an OpenAI-compatible API, or a local transformers model (MODEL = its path)",
    )
    b.add_argument("--base-url", default=None, help="an OpenAI-compatible server (vLLM, ...)")
    b.add_argument("--azure-endpoint", default=None, help="Azure OpenAI endpoint")
    b.add_argument(
        "--cache", default="llm-cache.sqlite", help="request cache (SQLite): a re-run pays for no call twice"
    )
    b.add_argument("--concurrency", type=positive(int), default=8, help="requests in flight at once")
    b.add_argument("--rpm", type=positive(int), default=None, help="requests per minute at most")
    b.add_argument("--tpm", type=positive(int), default=None, help="tokens per minute at most")
    b.add_argument("--prices", type=prices, default=None, help='USD per 1M tokens: {"input": 0.15, "output": 0.6}')
    b.add_argument(
        "--reasoning-effort",
        choices=REASONING_EFFORTS,
        default=None,
        help="a reasoning model (OpenAI's o-series and GPT-5, or a server that takes the parameter): "
        "send reasoning_effort and no sampling parameter (temperature, top_p), the output "
        "limit as max_completion_tokens; reasoning tokens are counted in the usage",
    )
    b.add_argument(
        "--structured-outputs",
        choices=("auto", "off"),
        default="auto",
        help="auto: send each JSON schema as a json_schema response_format where the server takes it "
        "(else ask for JSON in the prompt and repair once; the provenance says which); "
        "off: always the prompt",
    )
    b.add_argument(
        "--allow-failures",
        action="store_true",
        help="accept a run whose requests failed after their retries as it is (exit 0; it stays "
        "`complete: false`); without it such a run exits 1, and the same command again retries "
        "only the failed requests (answers already paid for come from the cache)",
    )
    b.add_argument(
        "--retry-refusals",
        action="store_true",
        help="ask again the requests the model refused (a refusal, or the server's content_filter): "
        "without it a refusal is the model's answer, kept in the cache, not asked again by a re-run "
        "and still a failed request (a failed row, exit 1 unless --allow-failures)",
    )
    w = b.add_argument_group("timeouts, retries and waits", _WAITS)
    w.add_argument(
        "--timeout",
        type=positive(float),
        default=60,
        metavar="SECONDS",
        help="seconds one try may take (default: %(default)s)",
    )
    w.add_argument(
        "--retries",
        type=positive(int, zero=True),
        default=3,
        metavar="N",
        help="tries after the first on a timeout, 429 or 5xx (default: %(default)s)",
    )
    w.add_argument(
        "--max-wait",
        type=positive(float, zero=True),
        default=120,
        metavar="SECONDS",
        help="longest pause before a retry, in seconds; a server that asks (Retry-After) for "
        "more ends that request at once, recorded as failed (default: %(default)s)",
    )


# The options that name a command's inputs: --cache may be none of them, nor --out.
_FILES = ("articles", "questions", "responses", "rated", "paraphrases", "labels")


def check_cache(args) -> None:
    """``--cache`` checked before it is opened (opening it as SQLite would destroy the file it
    names) by the library's rule (:func:`wikiorigin.runs.check_cache`): none of the command's
    inputs, nor ``--out``, a file written beside it or inside it (a results directory)."""
    from ..runs import check_cache as check

    out = getattr(args, "out", None)
    if not isinstance(out, str) or not out:
        return
    siblings = []
    if out.endswith(".parquet"):  # a set: the files its build writes beside it
        from ..builders.result import written_paths

        siblings = written_paths(out)
    check(args.cache, out, inputs={o: getattr(args, o, None) for o in _FILES}, siblings=siblings)


def llm_client(args, name):
    """The LLM client of model ``name`` that :func:`llm_options` describe; ``--prices`` is read
    here, once (``client.prices``). The cache path is checked against the command's files
    (:func:`check_cache`) and opened (checked: :class:`~wikiorigin.llm.cache.CacheError`); an
    API key the endpoint needs and the environment lacks is an error now, before anything runs
    (:meth:`~wikiorigin.llm.OpenAIBackend.check_key`; not for ``--dry-run``, which sends nothing)."""
    from ..llm import OpenAIBackend, TransformersBackend

    check_cache(args)

    if args.backend == "transformers":
        backend = TransformersBackend(name)
    else:
        backend = OpenAIBackend(name, base_url=args.base_url, azure_endpoint=args.azure_endpoint, timeout=args.timeout)
        if not getattr(args, "dry_run", False):
            backend.check_key()
    return _client(args, backend)


def _client(args, backend):
    """The one :class:`~wikiorigin.llm.LLMClient` of :func:`llm_options` around ``backend``
    (a builder's or judge's model, or the endpoint under evaluation): every option the command
    was given (limits, prices, waits, refusals) reaches it."""
    from ..llm import LLMClient, RequestCache

    return LLMClient(
        backend,
        RequestCache(args.cache),
        concurrency=args.concurrency,
        retries=args.retries,
        max_wait=args.max_wait,
        rpm=args.rpm,
        tpm=args.tpm,
        prices=args.prices,
        reasoning_effort=args.reasoning_effort,
        structured_outputs=args.structured_outputs == "auto",
        retry_refusals=args.retry_refusals,
    )


# --- the model under evaluation (`eval`) -------------------------------------------------------

# --bos: how a log-likelihood context begins (LocalModel's add_bos)
_BOS = {"tokenizer": None, "none": False, "always": True}


def model_options(e, required: bool = True, endpoint: bool = True) -> None:
    """The options of the model under evaluation; ``endpoint=False`` where only a local model
    can do the job. ``--temperature`` is 0 (greedy) to 2: OpenAI's range; above it sampling
    is noise on every backend."""

    e.add_argument(
        "--model",
        required=required,
        help="the model under evaluation: a local checkpoint directory"
        + (", or a name with --endpoint" if endpoint else ""),
    )
    if endpoint:
        e.add_argument("--endpoint", default=None, help="an OpenAI-compatible base URL to evaluate instead")
        e.add_argument(
            "--tokenizer",
            default=None,
            metavar="PATH",
            help="with --endpoint, log-probabilities (log-likelihood mode, leakage): the served model's "
            "tokenizer (a local directory): prompts go as token ids, cut and begun (--bos) as a "
            "local model's, as lm-evaluation-harness's tokenized requests; without it, as text "
            "cut at the server's text offsets, with the server's special tokens",
        )
    e.add_argument("--device", default="auto", help="cuda, mps or cpu (default: the first there)")
    e.add_argument("--dtype", default="auto", help="torch dtype (default: bfloat16 on CUDA, else float32)")
    e.add_argument(
        "--batch-size",
        type=positive(int),
        default=32,
        help="largest batch; halved on out-of-memory (an endpoint's log-probabilities: prompts a request)",
    )
    e.add_argument("--no-chat-template", action="store_true", help="send raw prompts")
    e.add_argument(
        "--bos",
        choices=tuple(_BOS),
        default="tokenizer",
        help="log-likelihoods: the tokenizer's own special tokens before the context, as "
        "lm-evaluation-harness (default); none; or always BOS (EOS where there is none)",
    )
    e.add_argument("--temperature", type=temperature, default=0.1, help="sampling temperature, 0 to 2 (0: greedy)")
    e.add_argument("--max-new-tokens", type=positive(int), default=128, help="longest answer, in tokens")
    e.add_argument("--seed", type=int, default=0, help="sampling seed")
    e.add_argument("--out", required=True, help="results directory")


def model(args):
    """The model under evaluation that :func:`model_options` describe: a local checkpoint, or
    an OpenAI-compatible endpoint."""
    from ..errors import WikioriginError

    if getattr(args, "endpoint", None):
        from ..evaluators.completions import load_tokenizer
        from ..evaluators.models import EndpointModel
        from ..llm import OpenAIBackend

        if args.bos != "tokenizer" and not args.tokenizer:
            raise WikioriginError(
                f"--bos {args.bos} with --endpoint needs --tokenizer PATH (prompts as token ids); "
                "a text prompt gets the server's own special tokens"
            )
        backend = OpenAIBackend(args.model, base_url=args.endpoint, timeout=args.timeout)
        check_cache(args)
        tokenizer = load_tokenizer(args.tokenizer) if args.tokenizer else None
        return EndpointModel(
            _client(args, backend),
            tokenizer=tokenizer,
            add_bos=_BOS[args.bos] if tokenizer else None,
            max_length=getattr(args, "max_length", None),
            batch_size=args.batch_size,
        )
    if getattr(args, "tokenizer", None):
        raise WikioriginError("--tokenizer is for --endpoint (a local model has its own)")
    from ..evaluators.models import LocalModel

    return LocalModel(
        args.model,
        device=args.device,
        dtype=args.dtype,
        max_batch_size=args.batch_size,
        chat=not args.no_chat_template,
        add_bos=_BOS[args.bos],
        max_length=getattr(args, "max_length", None),
    )


def sampling(args) -> dict:
    """The sampling settings of :func:`model_options`, as the evaluators take them."""
    return {"temperature": args.temperature, "max_new_tokens": args.max_new_tokens, "seed": args.seed}
