"""Batched generation: left-padded prompts, wrapped in the model's chat template when it has
one (``chat=False`` sends the raw prompt), sampled or greedy.

Each response is a :class:`Response`: the text, and how it ended (``finish_reason``, as an
OpenAI-compatible server says it): ``stop`` when the model wrote its end-of-sequence token,
``length`` when it ran into ``max_new_tokens`` first (``truncated``: no answer). The text is
decoded with the special tokens dropped, except the markers of a reasoning trace
(:data:`~wikiorigin.evaluators.markup.TRACE_TOKENS`: ``<think>``, gpt-oss's ``<|channel|>``,
...), and with the trace's opening marker put back in front when the chat template wrote it
at the end of the prompt (QwQ, DeepSeek-R1): the answer reader sees the model's whole turn.
"""

from __future__ import annotations

from typing import Any

from ..errors import ParameterError, WikioriginError
from .markup import TRACE_TOKENS, opened_trace
from .runner import THINKING, LoadedModel, unsort

__all__ = ["Generator", "Response"]


class Response(str):
    """A model's response: the text (a ``str``, so that it goes wherever text goes) with the
    ``finish_reason`` it ended with (``stop``, ``length``; None where not known)."""

    finish_reason: str | None = None

    def __new__(cls, text: str, finish_reason: str | None = None):
        response = super().__new__(cls, text)
        response.finish_reason = finish_reason
        return response

    @property
    def truncated(self) -> bool:
        """Whether the response was stopped by the token limit (``finish_reason`` ``length``):
        cut off, it is no answer."""
        return self.finish_reason == "length"


class Generator:
    """The generation of :class:`~wikiorigin.evaluators.models.LocalModel` on the ``loaded``
    model: through its chat template when ``chat`` (and it has one), the template's reasoning
    switched by ``thinking`` (:meth:`set_thinking`)."""

    def __init__(self, loaded: LoadedModel, chat: bool = True, thinking: str = "template-default"):
        self.loaded = loaded
        self.tokenizer: Any = loaded.tokenizer
        self.chat = chat and self.tokenizer.chat_template is not None
        self.thinking = "template-default"
        self.set_thinking(thinking)
        self._dropped_ids: set[int] | None = None  # the special tokens a generation's text goes without

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
                f"{self.loaded.path}: {{thinking}} needs a chat template that takes enable_thinking "
                f"(Qwen3-style); {lacks}",
                mode,
            )
        self.thinking = mode

    def format_prompt(self, prompt: str, system: str | None = None) -> str:
        """``prompt`` as the model sees it: through its chat template (with an optional ``system``
        message and the generation prompt, and ``enable_thinking`` when ``thinking`` is ``on``
        or ``off``) when ``chat`` is on, else unchanged."""
        if not self.chat:
            return prompt
        messages = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": prompt}]
        switch = {} if self.thinking == "template-default" else {"enable_thinking": self.thinking == "on"}
        return self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True, **switch)

    def generate(
        self,
        prompts: list[str],
        *,
        max_new_tokens: int = 128,
        temperature: float = 0.1,
        top_p: float = 1.0,
        seed: int = 0,
        system: str | None = None,
        batch_size: int | None = None,
    ) -> list[Response]:
        """One :class:`Response` per prompt (sampling when ``temperature`` > 0, greedy at 0);
        ``truncated`` when it reached ``max_new_tokens`` without the end-of-sequence token."""
        loaded = self.loaded
        texts = [self.format_prompt(p, system) for p in prompts]
        special = not self.chat  # a chat template writes its own special tokens
        encoded = [self.tokenizer(t, add_special_tokens=special)["input_ids"] for t in texts]
        for i, ids in enumerate(encoded):
            if len(ids) + max_new_tokens > loaded.max_length:
                raise WikioriginError(
                    f"prompt {i}: {len(ids)} tokens + {max_new_tokens} new exceed "
                    f"the model's {loaded.max_length} positions"
                )
        order = sorted(range(len(encoded)), key=lambda i: (-len(encoded[i]), i))
        options = {
            "max_new_tokens": max_new_tokens,
            "do_sample": temperature > 0,
            "pad_token_id": self.tokenizer.pad_token_id,
        }
        if temperature > 0:
            options.update(temperature=temperature, top_p=top_p)
        ends = self._end_ids()

        def run(chunk):
            loaded.torch.manual_seed(seed)
            ids, mask = loaded.pad([encoded[i] for i in chunk], left=True)
            output = loaded.model.generate(input_ids=ids, attention_mask=mask, **options)
            rows = [row[ids.shape[1] :].tolist() for row in output]
            return [
                Response(opened_trace(texts[i]) + self._decode(row), "stop" if ends.intersection(row) else "length")
                for i, row in zip(chunk, rows)
            ]

        return unsort(order, loaded.batched(order, run, batch_size, desc="generation"))

    def _end_ids(self) -> set[int]:
        """The tokens that end a generation: the tokenizer's EOS and the generation config's."""
        config = getattr(self.loaded.model, "generation_config", None)
        ends = getattr(config, "eos_token_id", None)
        ends = set(ends if isinstance(ends, (list, tuple)) else [ends]) | {self.tokenizer.eos_token_id}
        return {e for e in ends if e is not None}

    def _decode(self, ids: list[int]) -> str:
        """Generated ids as text, without special tokens but those of reasoning traces (as
        ``skip_special_tokens=True`` would drop them too)."""
        tokenizer = self.tokenizer
        dropped = self._dropped_ids
        if dropped is None:
            special = {i for i, t in tokenizer.added_tokens_decoder.items() if t.special}
            special |= set(tokenizer.all_special_ids)
            dropped = self._dropped_ids = {i for i in special if tokenizer.convert_ids_to_tokens(i) not in TRACE_TOKENS}
        return tokenizer.decode([i for i in ids if i not in dropped], skip_special_tokens=False)
