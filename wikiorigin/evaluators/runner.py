"""The loaded model that :class:`~wikiorigin.evaluators.models.LocalModel`'s parts share: the
model and its tokenizer (loaded by :mod:`wikiorigin.llm.hf`, as the chat backend loads them),
padding, forward passes, and running a function over items in batches that halve on
out-of-memory (:class:`LoadedModel`); and how texts become token ids (:class:`Encoder`, also
used by an endpoint's scoring on the served model's tokenizer).

The capabilities built on it take it as an argument, each in its own module:
:mod:`~wikiorigin.evaluators.loglikelihood`, :mod:`~wikiorigin.evaluators.token_logprobs`,
:mod:`~wikiorigin.evaluators.generation`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..llm.hf import context_length, is_oom, load_causal_lm, require_torch
from ..progress import Progress

__all__ = ["LoadedModel", "Encoder", "unsort", "THINKING"]

THINKING = ("template-default", "on", "off")
"""The values of a local model's ``thinking`` switch: the chat template's own default, or its
``enable_thinking`` set on or off (Qwen3-style templates)."""


def unsort(order: list[int], results: list) -> list:
    """Results computed in ``order`` put back in the requests' order."""
    out: list = [None] * len(order)
    for i, result in zip(order, results):
        out[i] = result
    return out


class Encoder:
    """Texts as token ids with ``tokenizer`` (a transformers tokenizer); ``add_bos`` says which
    special tokens begin a scored context (see :class:`~wikiorigin.evaluators.models.LocalModel`)."""

    def __init__(self, tokenizer: Any, add_bos: bool | None = None):
        if add_bos not in (None, True, False):
            raise ValueError(f"add_bos must be None, True or False, got {add_bos!r}")
        self.tokenizer, self.add_bos = tokenizer, add_bos

    def prefix(self) -> int:
        """The token a text starts after: BOS, EOS where there is none."""
        tok = self.tokenizer
        return tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text``, without special tokens."""
        return self.encode_many([text])[0]

    def encode_many(self, texts: list[str]) -> list[list[int]]:
        """Token ids of many texts in one tokenizer call (a fast tokenizer works on the batch),
        without special tokens."""
        return self.tokenizer(texts, add_special_tokens=False)["input_ids"] if texts else []

    def encode_contexts(self, texts: list[str]) -> list[list[int]]:
        """Token ids of texts that begin a scored sequence, with the special tokens ``add_bos``
        gives them (lm-eval's ``HFLM.tok_encode``: the tokenizer's own unless the text already
        starts with the BOS token's text)."""
        if self.add_bos is False or not texts:
            return self.encode_many(texts)
        start = self.tokenizer.decode([self.prefix()])
        marked = [bool(start) and t.startswith(start) for t in texts]
        plain = iter(self.encode_many([t for t, m in zip(texts, marked) if m]))
        special = [t for t, m in zip(texts, marked) if not m]
        full = iter(self.tokenizer(special)["input_ids"] if special else [])
        out = [next(plain) if m else next(full) for m in marked]
        if self.add_bos:
            prefix = self.prefix()
            out = [ids if ids[:1] == [prefix] else [prefix] + ids for ids in out]
        return out


class LoadedModel:
    """A causal LM from a local directory and its tokenizer, with batched forward passes.

    ``max_length`` defaults to the model's positions (2048 when its config does not say);
    ``batch_size`` starts at ``max_batch_size`` rows and shrinks when a batch runs out of
    memory."""

    def __init__(
        self,
        path,
        *,
        device: str | None = "auto",
        dtype: str = "auto",
        max_batch_size: int = 32,
        max_length: int | None = None,
    ):
        self.torch: Any = require_torch("running a local model")
        self.tokenizer, self.model, self.device = load_causal_lm(path, device=device, dtype=dtype)
        self.path = Path(path)
        self.max_length: int = max_length or context_length(self.model.config) or 2048
        self.batch_size = max_batch_size
        accepted = inspect.signature(self.model.forward).parameters
        self.keeps_logits = "logits_to_keep" in accepted
        self.takes_positions = "position_ids" in accepted or any(
            p.kind is inspect.Parameter.VAR_KEYWORD for p in accepted.values()
        )

    @property
    def name(self) -> str:
        """The model's name in reports: its directory's name."""
        return self.path.name

    def batched(
        self,
        items: list,
        run: Callable[[list], list],
        batch_size: int | None = None,
        rows_per_item: int = 1,
        desc: str = "batches",
    ) -> list:
        """``run`` over ``items`` in batches; a batch that runs out of memory is split in half
        (and the model's batch size, counted in rows, remembered). Progress goes to stderr."""
        size, out, start = batch_size or max(1, self.batch_size // rows_per_item), [], 0
        with Progress(f"{self.name}: {desc}", total=len(items), unit="item") as bar:
            while start < len(items):
                chunk = items[start : start + size]
                try:
                    with self.torch.inference_mode():
                        out.extend(run(chunk))
                except RuntimeError as exc:  # torch's OutOfMemoryError is a RuntimeError
                    if not is_oom(exc) or size == 1:
                        raise
                    if self.device.startswith("cuda"):
                        self.torch.cuda.empty_cache()
                    size = max(1, size // 2)
                    self.batch_size = min(self.batch_size, size * rows_per_item)
                    continue
                start += len(chunk)
                bar.update(len(chunk))
        return out

    def call(self, **inputs):
        """The model's forward pass (position ids dropped for a model that works them out)."""
        if not self.takes_positions:  # a model without positions (recurrent) works them out itself
            inputs.pop("position_ids", None)
        return self.model(**inputs)

    def forward(self, ids, mask):
        """The logits of padded ``ids`` under ``mask``."""
        return self.call(input_ids=ids, attention_mask=mask, use_cache=False).logits

    def pad(self, rows: list[list[int]], left: bool = False):
        """Token ids and attention mask of ``rows``, padded on the right (or the left)."""
        torch = self.torch
        width = max(len(r) for r in rows)
        pad = self.tokenizer.pad_token_id
        if left:
            ids = [[pad] * (width - len(r)) + r for r in rows]
            mask = [[0] * (width - len(r)) + [1] * len(r) for r in rows]
        else:
            ids = [r + [pad] * (width - len(r)) for r in rows]
            mask = [[1] * len(r) + [0] * (width - len(r)) for r in rows]
        return (
            torch.tensor(ids, dtype=torch.long, device=self.device),
            torch.tensor(mask, dtype=torch.long, device=self.device),
        )
