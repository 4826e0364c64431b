"""Loading and batching for :class:`~wikiorigin.evaluators.models.LocalModel`: the model and
its tokenizer (loaded by :mod:`wikiorigin.llm.hf`, as the chat backend loads them), encoding,
padding, and running a function over items in batches that halve on out-of-memory.

The scoring built on it lives beside it: :mod:`~wikiorigin.evaluators.loglikelihood`,
:mod:`~wikiorigin.evaluators.token_logprobs`, :mod:`~wikiorigin.evaluators.generation`.
"""

from __future__ import annotations

import inspect
from pathlib import Path

from ..errors import ParameterError
from ..llm.hf import context_length, is_oom, load_causal_lm, require_torch
from ..progress import Progress

__all__ = ["ModelRunner", "unsort", "THINKING"]

THINKING = ("template-default", "on", "off")
"""The values of a local model's ``thinking`` switch: the chat template's own default, or its
``enable_thinking`` set on or off (Qwen3-style templates)."""


def unsort(order: list[int], results: list) -> list:
    """Results computed in ``order`` put back in the requests' order."""
    out: list = [None] * len(order)
    for i, result in zip(order, results):
        out[i] = result
    return out


class ModelRunner:
    """A causal LM from a local directory, its tokenizer, and batched forward passes.

    ``max_length`` defaults to the model's positions (2048 when its config does not say);
    ``batch_size`` starts at ``max_batch_size`` rows and shrinks when a batch runs out of
    memory; ``add_bos`` is read by :meth:`encode_contexts` (see
    :class:`~wikiorigin.evaluators.models.LocalModel`); ``thinking`` switches a chat
    template's reasoning on or off (:meth:`set_thinking`)."""

    def __init__(
        self,
        path,
        *,
        device: str | None = "auto",
        dtype: str = "auto",
        max_batch_size: int = 32,
        max_length: int | None = None,
        chat: bool = True,
        share_context: bool = True,
        add_bos: bool | None = None,
        thinking: str = "template-default",
    ):
        if add_bos not in (None, True, False):
            raise ValueError(f"LocalModel: add_bos must be None, True or False, got {add_bos!r}")
        if thinking not in THINKING:  # before the model is loaded; set_thinking checks the template
            raise ValueError(f"LocalModel: thinking must be one of {', '.join(THINKING)}, not {thinking!r}")
        self._torch = require_torch("running a local model")
        self.tokenizer, self.model, self.device = load_causal_lm(path, device=device, dtype=dtype)
        self.path = Path(path)
        self.max_length = max_length or context_length(self.model.config) or 2048
        self.batch_size = max_batch_size
        self.chat = chat and self.tokenizer.chat_template is not None
        self.share_context = share_context
        self.add_bos = add_bos
        self.thinking = "template-default"
        self.set_thinking(thinking)
        self._dropped_ids = None  # the special tokens a generation's text goes without (see Generation)
        self.cut_inside_token = 0  # requests whose context ended inside a token (see _split_many)
        accepted = inspect.signature(self.model.forward).parameters
        self._keeps_logits = "logits_to_keep" in accepted
        self._takes_positions = "position_ids" in accepted or any(
            p.kind is inspect.Parameter.VAR_KEYWORD for p in accepted.values()
        )
        self._head = None  # checked once, when first needed: see _output_layer
        self._reusable = None  # likewise: see _reusable_cache

    @property
    def can_think(self) -> bool:
        """Whether the chat template (in use) takes ``enable_thinking`` (Qwen3, SmolLM3, GLM-4.5
        and others whose reasoning can be switched on and off)."""
        template = self.tokenizer.chat_template if self.chat else None
        if isinstance(template, dict):  # several named templates
            template = " ".join(map(str, template.values()))
        return "enable_thinking" in str(template or "")

    @property
    def thinking_mode(self) -> str | None:
        """The ``thinking`` switch as runs record it (the signature's ``think``): the value for a
        template that has the switch, None for one that has none."""
        return self.thinking if self.can_think else None

    def set_thinking(self, mode: str) -> None:
        """Switch the chat template's reasoning: ``on`` or ``off`` (``enable_thinking``), or
        ``template-default``. A template without the switch (or no chat template) takes only
        ``template-default``: anything else is a one-line error, never a switch ignored."""
        if mode not in THINKING:
            raise ValueError(f"LocalModel: thinking must be one of {', '.join(THINKING)}, not {mode!r}")
        if mode != "template-default" and not self.can_think:
            lacks = "this one has no such switch" if self.chat else "this model is used without one"
            raise ParameterError(
                "thinking",
                f"{self.path}: {{thinking}} needs a chat template that takes enable_thinking (Qwen3-style); {lacks}",
                mode,
            )
        self.thinking = mode

    @property
    def name(self) -> str:
        """The model's name in reports: its directory's name."""
        return self.path.name

    def _prefix(self) -> int:
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
        start = self.tokenizer.decode([self._prefix()])
        marked = [bool(start) and t.startswith(start) for t in texts]
        plain = iter(self.encode_many([t for t, m in zip(texts, marked) if m]))
        special = [t for t, m in zip(texts, marked) if not m]
        full = iter(self.tokenizer(special)["input_ids"] if special else [])
        out = [next(plain) if m else next(full) for m in marked]
        if self.add_bos:
            prefix = self._prefix()
            out = [ids if ids[:1] == [prefix] else [prefix] + ids for ids in out]
        return out

    def _batched(
        self, items: list, run, batch_size: int | None = None, rows_per_item: int = 1, desc: str = "batches"
    ) -> list:
        """``run`` over ``items`` in batches; a batch that runs out of memory is split in half
        (and the model's batch size, counted in rows, remembered). Progress goes to stderr."""
        size, out, start = batch_size or max(1, self.batch_size // rows_per_item), [], 0
        with Progress(f"{self.name}: {desc}", total=len(items), unit="item") as bar:
            while start < len(items):
                chunk = items[start : start + size]
                try:
                    with self._torch.inference_mode():
                        out.extend(run(chunk))
                except RuntimeError as exc:  # torch's OutOfMemoryError is a RuntimeError
                    if not is_oom(exc) or size == 1:
                        raise
                    if self.device.startswith("cuda"):
                        self._torch.cuda.empty_cache()
                    size = max(1, size // 2)
                    self.batch_size = min(self.batch_size, size * rows_per_item)
                    continue
                start += len(chunk)
                bar.update(len(chunk))
        return out

    def _call(self, **inputs):
        if not self._takes_positions:  # a model without positions (recurrent) works them out itself
            inputs.pop("position_ids", None)
        return self.model(**inputs)

    def _forward(self, ids, mask):
        return self._call(input_ids=ids, attention_mask=mask, use_cache=False).logits

    def _pad(self, rows: list[list[int]], left: bool = False):
        """Token ids and attention mask of ``rows``, padded on the right (or the left)."""
        torch = self._torch
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
