"""The options of the model under evaluation (``eval``), defined once (:func:`model_options`),
and the model they describe (:func:`model`): a local checkpoint or an OpenAI-compatible
endpoint, with its sampling settings (:func:`sampling`)."""

from __future__ import annotations

from .argtypes import positive, temperature
from .clients import _client, check_cache

__all__ = ["model_options", "model", "sampling"]

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
