"""Batched generation: left-padded prompts, wrapped in the model's chat template when it has
one (``chat=False`` sends the raw prompt), sampled or greedy."""

from __future__ import annotations

from ..errors import WikioriginError
from .runner import unsort

__all__ = ["Generation"]


class Generation:
    """The generation methods of :class:`~wikiorigin.evaluators.models.LocalModel`, on the
    loading and batching of :class:`~wikiorigin.evaluators.runner.ModelRunner`."""

    def format_prompt(self, prompt: str, system: str | None = None) -> str:
        """``prompt`` as the model sees it: through its chat template (with an optional ``system``
        message and the generation prompt) when ``chat`` is on, else unchanged."""
        if not self.chat:
            return prompt
        messages = ([{"role": "system", "content": system}] if system else []) + \
            [{"role": "user", "content": prompt}]
        return self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)

    def generate(self, prompts: list[str], *, max_new_tokens: int = 128, temperature: float = 0.1,
                 top_p: float = 1.0, seed: int = 0, system: str | None = None,
                 batch_size: int | None = None) -> list[str]:
        """One response per prompt (sampling when ``temperature`` > 0, greedy at 0)."""
        torch = self._torch
        texts = [self.format_prompt(p, system) for p in prompts]
        special = not self.chat  # a chat template writes its own special tokens
        encoded = [self.tokenizer(t, add_special_tokens=special)["input_ids"] for t in texts]
        for i, ids in enumerate(encoded):
            if len(ids) + max_new_tokens > self.max_length:
                raise WikioriginError(f"prompt {i}: {len(ids)} tokens + {max_new_tokens} new exceed "
                                      f"the model's {self.max_length} positions")
        order = sorted(range(len(encoded)), key=lambda i: (-len(encoded[i]), i))
        options = {"max_new_tokens": max_new_tokens, "do_sample": temperature > 0,
                   "pad_token_id": self.tokenizer.pad_token_id}
        if temperature > 0:
            options.update(temperature=temperature, top_p=top_p)

        def run(chunk):
            torch.manual_seed(seed)
            ids, mask = self._pad([encoded[i] for i in chunk], left=True)
            output = self.model.generate(input_ids=ids, attention_mask=mask, **options)
            return [self.tokenizer.decode(row[ids.shape[1]:], skip_special_tokens=True) for row in output]

        return unsort(order, self._batched(order, run, batch_size, desc="generation"))
