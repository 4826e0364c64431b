"""A local transformers model as a chat backend, for small runs without a server.

The model is loaded as the evaluators load theirs (:mod:`wikiorigin.llm.hf`: the same device
and dtype choice, the same errors); its own chat template builds the prompt; generation runs in
a worker thread (one at a time: a single model in memory), so the client's event loop stays
free. ``pip install -e '.[eval]'`` brings torch and transformers.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from ..errors import WikioriginError
from .hf import context_length, load_causal_lm, require_torch
from .openai_backend import RequestError

__all__ = ["TransformersBackend"]


class TransformersBackend:
    """A chat backend on a local transformers ``model`` (a local directory): loaded on
    ``device`` in ``dtype`` as the evaluators load theirs, prompted with its own chat template,
    at most ``max_new_tokens`` per answer. Raises :class:`~wikiorigin.errors.WikioriginError` if
    the tokenizer has no chat template, or torch and transformers are missing (``pip install -e
    '.[eval]'``)."""

    name = "transformers"

    def __init__(self, model: str, *, device: str | None = None, max_new_tokens: int = 256, dtype: str = "auto"):
        self.tokenizer, self.lm, self.device = load_causal_lm(
            model, device=device, dtype=dtype, what="the transformers backend"
        )
        if self.tokenizer.chat_template is None:
            raise WikioriginError(f"{model}: the tokenizer has no chat template")
        self.model = str(model)
        self.max_new_tokens = max_new_tokens
        self._torch = require_torch("the transformers backend")
        self._lock = threading.Lock()

    @property
    def key(self) -> str:
        """The backend's part of a cache key: "transformers" and the model's folder name."""
        return f"{self.name}:{Path(self.model).name}"

    def _generate(self, messages: list[dict], params: dict) -> dict:
        torch = self._torch
        ids = self.tokenizer.apply_chat_template(
            messages, add_generation_prompt=True, return_tensors="pt", return_dict=True
        )
        limit = context_length(self.lm.config)
        wanted = int(params.get("max_tokens", params.get("max_completion_tokens", self.max_new_tokens)))
        if limit and ids["input_ids"].shape[1] + wanted > limit:
            raise RequestError(
                f"{ids['input_ids'].shape[1]} prompt tokens + {wanted} new exceed the model's {limit} positions"
            )
        ids = {k: v.to(self.device) for k, v in ids.items()}
        temperature = float(params.get("temperature", 0) or 0)
        options = {"max_new_tokens": wanted, "do_sample": temperature > 0, "pad_token_id": self.tokenizer.pad_token_id}
        if temperature > 0:
            options.update(temperature=temperature, top_p=float(params.get("top_p", 1.0)))
        with self._lock, torch.no_grad():
            output = self.lm.generate(**ids, **options)
        new = output[0, ids["input_ids"].shape[1] :]
        ended = int(new.shape[0]) < wanted or (new.shape[0] and int(new[-1]) == self.tokenizer.eos_token_id)
        return {
            "text": self.tokenizer.decode(new, skip_special_tokens=True),
            "input_tokens": int(ids["input_ids"].shape[1]),
            "output_tokens": int(new.shape[0]),
            "finish_reason": "stop" if ended else "length",
        }

    async def chat(self, messages: list[dict], params: dict) -> dict:
        """``{"text", "input_tokens", "output_tokens"}`` of one chat, generated in a worker
        thread; raises :class:`~wikiorigin.llm.openai_backend.RequestError` when the prompt and
        the new tokens exceed the model's context."""
        return await asyncio.to_thread(self._generate, messages, params)
