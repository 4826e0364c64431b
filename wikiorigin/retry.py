"""How long to wait before trying again: exponential backoff, bounded, with a server's word.

One policy for every retry loop of the library (dump downloads in ``dumps/fetch.py``, LLM
requests in ``llm/client.py``). The loops stay with their callers, since each knows which of
its errors may pass with time and what a failure returns; the arithmetic of the waits and the
decision to give up live here. Try ``attempt`` (from 0) failed: wait :meth:`Backoff.delay`
seconds, unless :meth:`Backoff.exhausted` (no try left) or :meth:`Backoff.refuses` (the server
asks for a longer wait than ``max_wait``). :func:`retry_after` reads that word from a
response's headers.
"""

from __future__ import annotations

import email.utils
import math
import random
import time
from dataclasses import dataclass

__all__ = ["Backoff", "retry_after"]


@dataclass(frozen=True, slots=True)
class Backoff:
    """``retries`` tries after the first, waiting ``base * 2 ** attempt`` seconds after failed
    try ``attempt`` (times a random factor in [0.5, 1.5) with ``jitter``), at most
    ``max_wait``; a server's ``Retry-After`` replaces the computed wait."""

    retries: int
    base: float = 1.0
    max_wait: float = math.inf
    jitter: bool = False

    @property
    def tries(self) -> range:
        """The attempts, from 0: the first try and the retries."""
        return range(self.retries + 1)

    def exhausted(self, attempt: int) -> bool:
        """Whether try ``attempt`` was the last one allowed."""
        return attempt >= self.retries

    def refuses(self, retry_after: float | None) -> bool:
        """Whether a server's ``Retry-After`` (seconds, None when it gave none) asks for a
        longer wait than ``max_wait``: then waiting is no use, the caller gives up."""
        return retry_after is not None and retry_after > self.max_wait

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait after failed try ``attempt``: the server's ``Retry-After`` when it
        gave one, else the exponential backoff; never more than ``max_wait``."""
        if retry_after is None:
            retry_after = self.base * 2**attempt
            if self.jitter:
                retry_after *= 0.5 + random.random()
        return min(self.max_wait, retry_after)


def retry_after(headers) -> float | None:
    """A server's wait in seconds from response ``headers`` (any mapping with ``get``):
    ``retry-after-ms``, else ``Retry-After`` in seconds or as an HTTP date (a date past is 0);
    None when it sent none or nothing readable."""
    ms, value = headers.get("retry-after-ms"), headers.get("retry-after")
    for text, scale in ((ms, 1000), (value, 1)):
        try:
            seconds = float(text) / scale if text is not None else None
        except ValueError:
            seconds = None
        if seconds is not None and math.isfinite(seconds):
            return max(0.0, seconds)
    if value is None:
        return None
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when.timestamp() - time.time())
