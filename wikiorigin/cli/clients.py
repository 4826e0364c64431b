"""The LLM options several commands share, defined once (:func:`llm_options`), and the
client they describe (:func:`llm_client`): its request cache checked against the command's files
before it is opened (:func:`check_cache`)."""

from __future__ import annotations

from .argtypes import positive, prices

__all__ = ["REASONING_EFFORTS", "llm_options", "llm_client", "check_cache"]

# llm.client.REASONING_EFFORTS, written out: the command line starts without the LLM layer
# (tests/llm/test_reasoning.py checks that the two agree)
REASONING_EFFORTS = ("minimal", "low", "medium", "high")

_WAITS = (
    "Every wait is bounded: one request takes at most (RETRIES + 1) x TIMEOUT + RETRIES x MAX_WAIT "
    "(10 min with the defaults), a run at most that x requests / CONCURRENCY; the usage line says how "
    "long it waited; once 10 requests in a row have given up, the rest is not sent. The endpoint is "
    "checked once (seconds) before the first call that is not in the cache: a dead server, a refused "
    "key or an unknown model is an error before anything is paid."
)


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
    _waits(b)


def _waits(b) -> None:
    """The timeouts, retries and waits of the LLM clients, bounded (:data:`_WAITS`)."""
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
        return _client(args, TransformersBackend(name))
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
