"""The client's bounds on time and rate: :class:`_RateLimit` keeps requests and tokens per
minute within ``rpm`` / ``tpm`` over a sliding minute, :func:`estimate_tokens` is the rough token
count (of a request's messages) those limits and dry runs use, and :func:`worst_case_seconds` the
longest one request can take with its retries. Moved out of ``client.py``; ``wikiorigin.llm.client``
still exports these names."""

from __future__ import annotations

import asyncio
import time
from collections import deque

__all__ = ["_RateLimit", "estimate_tokens", "worst_case_seconds"]


class _RateLimit:
    """Requests and tokens per minute, over a sliding minute."""

    def __init__(self, rpm: int | None, tpm: int | None):
        self.rpm, self.tpm = rpm, tpm
        self.events: deque = deque()
        self.lock = asyncio.Lock()

    async def wait(self, tokens: int) -> float:
        """Seconds waited."""
        if not self.rpm and not self.tpm:
            return 0.0
        started = time.monotonic()
        async with self.lock:
            while True:
                now = time.monotonic()
                while self.events and now - self.events[0][0] > 60:
                    self.events.popleft()
                used = sum(t for _, t in self.events)
                if (not self.rpm or len(self.events) < self.rpm) and (
                    not self.tpm or used + tokens <= self.tpm or not self.events
                ):
                    self.events.append((now, tokens))
                    return now - started
                await asyncio.sleep(max(0.01, 60 - (now - self.events[0][0])))


def worst_case_seconds(timeout: float, retries: int, max_wait: float) -> float:
    """The longest one request can take: every try times out and every pause is the longest."""
    return (retries + 1) * timeout + retries * max_wait


def estimate_tokens(messages: list[dict]) -> int:
    """A rough count (4 characters a token; 1.5 for CJK text) for dry runs and rate limits."""
    text = "".join(m.get("content") or "" for m in messages)
    cjk = sum(1 for ch in text if ord(ch) > 0x2E80)
    return int((len(text) - cjk) / 4 + cjk / 1.5) + 4 * len(messages)
