"""The counters of a run of :class:`~wikiorigin.llm.client.LLMClient` and what they cost:
:class:`Usage` counts the requests asked, the calls the server answered (and billed, usable or
not), the cache hits, retries, failures, refusals, repairs, the tokens (reasoning tokens among the
output tokens, as servers price them) and the seconds spent waiting; runs add with ``+``, and
:meth:`Usage.cost` prices the tokens at ``{"input": ..., "output": ...}`` USD per million. Moved
out of ``client.py``; ``wikiorigin.llm.client`` still exports :class:`Usage`."""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["Usage", "read_usage"]


def _count(value) -> int | None:
    """A token count as a server reports it: a whole number from 0 (digits too, as the SDK
    reads them), else None (unreadable)."""
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return int(value) if value >= 0 and value == int(value) else None


def read_usage(usage) -> dict:
    """``input_tokens``, ``output_tokens`` and ``reasoning_tokens`` of a response's ``usage``
    (the SDK's object, or the JSON object); ``unmetered`` when the server reported none, or
    counts that are no token counts (negative, NaN, text): counted as 0 then, and said
    (:attr:`Usage.unmetered`)."""

    def get(where, name):
        return where.get(name) if isinstance(where, dict) else getattr(where, name, None)

    details = get(usage, "completion_tokens_details")
    counts = [_count(get(usage, name)) for name in ("prompt_tokens", "completion_tokens")]
    reasoning = _count(get(details, "reasoning_tokens") or 0) if details else 0
    read = {"input_tokens": counts[0] or 0, "output_tokens": counts[1] or 0, "reasoning_tokens": reasoning or 0}
    metered = usage is not None and None not in counts and reasoning is not None
    return read if metered else {**read, "unmetered": True}


@dataclass(slots=True)
class Usage:
    """Counters of one run; they add with ``+``. ``requests`` counts what the caller asked
    (cached or not), ``failures`` those that got no usable answer, ``waited`` the seconds spent
    sleeping between tries and for the rate limits."""

    requests: int = 0
    calls: int = 0  # responses the server sent (and billed), usable or not
    cache_hits: int = 0  # answered without a call: the cache, or a request in flight already
    retries: int = 0
    failures: int = 0
    refused: int = 0  # of the failures, the model's refusals (refusal, content_filter)
    input_tokens: int = 0
    output_tokens: int = 0  # reasoning tokens included, as servers count and price them
    reasoning_tokens: int = 0
    structured: int = 0  # calls answered under a JSON-schema response_format
    repairs: int = 0
    waited: float = 0.0
    unmetered: int = 0  # calls whose usage the server did not report, or reported unreadably

    def __add__(self, other: Usage) -> Usage:
        return Usage(**{k: getattr(self, k) + getattr(other, k) for k in self.__slots__})

    def cost(self, prices: dict | None) -> float | None:
        """USD, from ``{"input": per 1M tokens, "output": per 1M tokens}``."""
        if not prices:
            return None
        return (self.input_tokens * prices["input"] + self.output_tokens * prices["output"]) / 1e6

    def as_dict(self) -> dict:
        """The counters as a dict (field -> value), for JSON."""
        return {k: getattr(self, k) for k in self.__slots__}

    def summary(self, prices: dict | None = None) -> str:
        """One line for the end of a run: calls, cache hits, retries, failures, tokens, the cost
        at ``prices`` (when given) and the time spent waiting."""
        cost = self.cost(prices)
        return (
            f"{self.calls} calls, {self.cache_hits} cache hits, {self.retries} retries, "
            f"{self.failures} failed"
            + (f" ({self.refused} refused by the model)" if self.refused else "")
            + f", {self.input_tokens:,} input and {self.output_tokens:,} output tokens"
            + (f" ({self.reasoning_tokens:,} reasoning)" if self.reasoning_tokens else "")
            + (f" (at least: {self.unmetered} calls reported no readable usage)" if self.unmetered else "")
            + (f", ${cost:,.4f}" if cost is not None else "")
            + f", {self.waited:,.1f} s waiting"
        )
