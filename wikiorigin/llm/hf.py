"""Loading a local Hugging Face causal LM, for the evaluators' runner
(:class:`~wikiorigin.evaluators.models.LocalModel`) and the chat backend
(:class:`~wikiorigin.llm.transformers_backend.TransformersBackend`) alike: one device choice,
one dtype choice, the same one-line errors.

The device is the one asked for (``cpu``, ``cuda``, ``cuda:N``, ``mps``), else CUDA, then MPS,
then CPU; the dtype is the one asked for, else bfloat16 on CUDA and float32 elsewhere. Models
are loaded from local directories, never fetched from a hub. torch and transformers are
imported when a model is loaded, never on import of this module.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import MissingExtra, ParameterError, WikioriginError

__all__ = ["pick_device", "pick_dtype", "load_causal_lm", "missing_parts", "context_length", "is_oom", "require_torch"]

INSTALL = "pip install -e '.[eval]' in the wikiorigin checkout"


def require_torch(what: str):
    """torch, or a :class:`~wikiorigin.errors.MissingExtra` (an ImportError) that says ``what``
    needs the eval extra and how to install it."""
    try:
        import torch
        import transformers  # noqa: F401  (checked here, imported where used)
    except ImportError as exc:
        raise MissingExtra(f"{what} needs: {INSTALL}") from exc
    return torch


def pick_device(device: str | None = None) -> str:
    """``device`` when this machine has it (a :class:`~wikiorigin.errors.ParameterError` when
    not), or for ``None``/``"auto"`` the first of CUDA, MPS, CPU."""
    import torch

    if device and device != "auto":
        kind = device.split(":", 1)[0]
        if kind == "cuda" and not torch.cuda.is_available():
            raise ParameterError(
                "device",
                f"{{device}}: CUDA is not available here (torch {torch.__version__}"
                + (" is a CPU build" if torch.version.cuda is None else ", no GPU visible")
                + ")",
                device,
            )
        if kind == "mps" and not _has_mps(torch):
            raise ParameterError("device", "{device}: MPS (Apple GPU) is not available here", device)
        if kind not in ("cpu", "cuda", "mps"):
            raise ParameterError("device", "{device}: not a device (cpu, cuda, cuda:N, mps or auto)", device)
        return device
    if torch.cuda.is_available():
        return "cuda"
    return "mps" if _has_mps(torch) else "cpu"


def _has_mps(torch) -> bool:
    return getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available()


def pick_dtype(dtype, device: str):
    """The torch dtype for ``dtype`` (a torch dtype, a name such as ``"bfloat16"``, or
    ``"auto"``: bfloat16 on CUDA, float32 elsewhere) on ``device``."""
    import torch

    if dtype == "auto":
        return torch.bfloat16 if device.split(":", 1)[0] == "cuda" else torch.float32
    if isinstance(dtype, str):
        value = getattr(torch, dtype, None)
        if not isinstance(value, torch.dtype):
            raise ParameterError("dtype", "{dtype}: not a torch dtype (auto, bfloat16, float16 or float32)", dtype)
        return value
    return dtype


def load_causal_lm(path, *, device: str | None = "auto", dtype="auto", what: str = "running a local model"):
    """``(tokenizer, model, device)`` of the checkpoint in the local directory ``path``: the
    model on the device :func:`pick_device` chooses, in the dtype :func:`pick_dtype` chooses,
    in eval mode; the tokenizer pads with its EOS token when it has no pad token."""
    require_torch(what)
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = Path(path)
    if not path.exists():
        raise WikioriginError(f"{path}: no such model directory (models are loaded from local paths)")
    if not path.is_dir():
        raise WikioriginError(f"{path}: a file, not a model directory (config.json, tokenizer files and weights)")
    device = pick_device(device)
    dtype = pick_dtype(dtype, device)
    try:
        tokenizer = AutoTokenizer.from_pretrained(path)
        model: Any = AutoModelForCausalLM.from_pretrained(path, dtype=dtype)
    except (ValueError, OSError, KeyError) as exc:  # transformers' ways of saying "not a model"
        raise _not_a_model(path, exc) from exc
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer, model.to(device).eval(), device


_TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "spiece.model", "vocab.json", "vocab.txt")
_WEIGHTS = (".safetensors", ".bin", ".safetensors.index.json", ".bin.index.json")


def missing_parts(path) -> list[str]:
    """What the local model directory ``path`` lacks of what transformers loads: its
    configuration (``config.json``), tokenizer files, weights; and the package a tokenizer
    file needs when it is not installed (sentencepiece for ``tokenizer.model``, tiktoken for
    ``*.tiktoken``). Empty when nothing is missing that can be told from the file names."""
    import importlib.util

    names = {p.name for p in Path(path).iterdir()}
    missing = []
    if "config.json" not in names:
        missing.append("no config.json (the model's configuration)")
    if not names & set(_TOKENIZER_FILES) and not any(n.endswith(".tiktoken") for n in names):
        missing.append("no tokenizer files (tokenizer.json, or tokenizer.model, or vocab.json and merges.txt)")
    if not any(n.endswith(_WEIGHTS) for n in names):
        missing.append("no weights (model.safetensors or pytorch_model.bin)")
    if "vocab.json" in names and "merges.txt" not in names and "tokenizer.json" not in names:
        missing.append("no merges.txt beside vocab.json")
    needs = {
        "sentencepiece": {"tokenizer.model", "spiece.model"} & names and "tokenizer.json" not in names,
        "tiktoken": any(n.endswith(".tiktoken") for n in names),
    }
    for package, needed in needs.items():
        if needed and importlib.util.find_spec(package) is None:
            missing.append(f"{package} is not installed, and its tokenizer needs it ({INSTALL})")
    return missing


def _not_a_model(path: Path, exc: Exception) -> WikioriginError:
    """One line for a directory transformers could not load: what it lacks, else why."""
    missing = missing_parts(path)
    if missing:
        return WikioriginError(f"{path}: not a model directory transformers can load: {'; '.join(missing)}")
    first = next((line.strip() for line in str(exc).splitlines() if line.strip()), type(exc).__name__)
    return WikioriginError(f"{path}: transformers cannot load this model ({type(exc).__name__}: {first})")


def context_length(config) -> int | None:
    """The model's number of positions, from its config (None when it does not say)."""
    return getattr(config, "max_position_embeddings", None) or getattr(config, "n_positions", None)


def is_oom(exc: BaseException) -> bool:
    """Whether ``exc`` is an out-of-memory error: torch's own type (CUDA, and other backends
    that raise it), or, for backends that raise a plain RuntimeError (MPS, older builds), a
    RuntimeError that says so."""
    import torch

    kinds = tuple(
        k
        for k in (getattr(torch, "OutOfMemoryError", None), getattr(torch.cuda, "OutOfMemoryError", None))
        if k is not None
    )
    if kinds and isinstance(exc, kinds):
        return True
    return isinstance(exc, RuntimeError) and "out of memory" in str(exc).lower()
