"""The chat client the builders use: cache, bounded concurrency, retries, rate limits, usage.

``LLMClient(backend, cache=...).run(requests)`` answers a list of :class:`ChatRequest` in
order. Each answer comes from the cache when the same backend, model, messages, parameters and
prompt version were asked before; otherwise from the backend, at most ``concurrency`` at a
time, within optional requests- and tokens-per-minute limits, retried with exponential backoff
and jitter on 429, 5xx and timeouts (a server's ``Retry-After`` wins, up to ``max_wait``: a server
that asks for a longer pause ends that request at once, recorded as failed). Before its first
call the client checks the endpoint once (``backend.check()``: unreachable, key refused, model
unknown raise :class:`EndpointError`); a run answered wholly from the cache makes no request at
all, so a re-run works offline. Every wait is bounded: one request takes at most
``worst_case_seconds(timeout, retries, max_wait)``, and once ``stop_after`` requests in a row
have given up the endpoint is taken for down: the rest of that run is not sent. A request with a JSON
schema gets its answer parsed and validated, with one repair round (the model is shown the
error) before the row is given up. Nothing raises for one bad row: a failed request comes back
as a :class:`ChatResult` with ``error`` set, for the caller's ``failed`` file.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from ..progress import Progress
from ..retry import Backoff
from .cache import RequestCache, request_key
from .openai_backend import EndpointError, RequestError, TransientError

__all__ = ["ChatRequest", "ChatResult", "Usage", "LLMClient", "parse_json", "worst_case_seconds"]


@dataclass(slots=True)
class ChatRequest:
    """One chat request: the ``messages``, sampling ``params``, the ``prompt_version`` that keys
    the cache, and an optional JSON ``schema`` the answer must satisfy."""

    messages: list[dict]
    params: dict = field(default_factory=dict)
    prompt_version: str = ""
    schema: dict | None = None  # JSON schema the answer must satisfy


@dataclass(slots=True)
class ChatResult:
    """The answer to one :class:`ChatRequest`: its ``text``, the parsed JSON (``data``, for a
    request with a schema), whether it came from the cache, the ``error`` of a request that
    failed (then ``text`` is None), and the tokens counted."""

    text: str | None
    data: object = None  # the parsed JSON, for requests with a schema
    cached: bool = False
    error: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(slots=True)
class Usage:
    """Counters of one run; they add with ``+``. ``requests`` counts what the caller asked
    (cached or not), ``failures`` those that got no usable answer, ``waited`` the seconds spent
    sleeping between tries and for the rate limits."""

    requests: int = 0
    calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    failures: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    repairs: int = 0
    waited: float = 0.0

    def __add__(self, other: "Usage") -> "Usage":
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
        return (f"{self.calls} calls, {self.cache_hits} cache hits, {self.retries} retries, "
                f"{self.failures} failed, {self.input_tokens:,} input and {self.output_tokens:,} "
                f"output tokens" + (f", ${cost:,.4f}" if cost is not None else "")
                + f", {self.waited:,.1f} s waiting")


_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.S)


def parse_json(text: str):
    """JSON from a model's answer (code fences and text around the object tolerated)."""
    text = _FENCE.sub("", text.strip())
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        start, end = text.find("{"), text.rfind("}")
        if 0 <= start < end:
            return json.loads(text[start : end + 1])
        raise


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
                if (not self.rpm or len(self.events) < self.rpm) and (not self.tpm or used + tokens <= self.tpm or not self.events):
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


class LLMClient:
    """Answers lists of :class:`ChatRequest` with a backend (:class:`~wikiorigin.llm.OpenAIBackend`,
    :class:`~wikiorigin.llm.TransformersBackend`), an optional :class:`RequestCache`, at most
    ``concurrency`` requests at a time, ``retries`` with backoff, optional ``rpm`` / ``tpm`` limits
    and ``prices`` for the cost in :attr:`usage` (see the module docstring).

    :meth:`run` returns one :class:`ChatResult` per request, in order; :meth:`dry_run` counts the
    calls a run would make. Raises ``ValueError`` for a setting out of range, and
    :class:`~wikiorigin.llm.EndpointError` when the endpoint cannot serve the run at all."""

    def __init__(self, backend, cache: RequestCache | None = None, *, concurrency: int = 8,
                 retries: int = 3, backoff: float = 1.0, max_wait: float = 120.0,
                 rpm: int | None = None, tpm: int | None = None, prices: dict | None = None,
                 check: bool = True, stop_after: int = 10):
        if concurrency < 1:
            raise ValueError(f"LLMClient: concurrency must be >= 1, not {concurrency}")
        if stop_after < 1:
            raise ValueError(f"LLMClient: stop_after must be >= 1, not {stop_after}")
        if retries < 0 or not max_wait >= 0:
            raise ValueError(f"LLMClient: retries and max_wait must be >= 0, not {retries} and {max_wait}")
        self.backend, self.cache = backend, cache
        self.concurrency, self.retries = concurrency, retries
        self.backoff, self.max_wait = backoff, max_wait
        self.rpm, self.tpm, self.prices = rpm, tpm, prices
        self.usage = Usage()
        self.first_error: str | None = None  # of the first request that failed, for the summary
        self._checked = not check or not hasattr(backend, "check")
        self._check_error: Exception | None = None
        self.stop_after = stop_after
        self._given_up, self._down = 0, None

    def key(self, request: ChatRequest) -> str:
        """The cache key of ``request`` with this client's backend and model (:func:`request_key`)."""
        return request_key(self.backend.key, self.backend.model, request.messages,
                           request.params, request.prompt_version)

    def dry_run(self, requests: list[ChatRequest]) -> dict:
        """How many calls a run would make (cache hits excluded) and their input tokens."""
        todo = [r for r in requests if self.cache is None or self.cache.get(self.key(r)) is None]
        return {"requests": len(requests), "calls": len(todo),
                "input_tokens": sum(estimate_tokens(r.messages) for r in todo)}

    def run(self, requests: list[ChatRequest]) -> list[ChatResult]:
        """Answers in the order of ``requests``. Works in a notebook too (whose event loop is
        already running): then the requests run on a loop of their own in another thread."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self._run(requests))
        with ThreadPoolExecutor(1) as pool:
            return pool.submit(asyncio.run, self._run(requests)).result()

    async def _run(self, requests):
        gate = asyncio.Semaphore(self.concurrency)
        limit = _RateLimit(self.rpm, self.tpm)
        self._check_lock = asyncio.Lock()
        self._given_up, self._down = 0, None
        self._progress = Progress(f"{self.backend.model}: requests", total=len(requests), unit="request",
                                  note=self._progress_note)
        try:
            return await asyncio.gather(*(self._one(r, gate, limit) for r in requests))
        finally:  # the HTTP client goes with this loop, not after it (no "Event loop is closed")
            self._progress.close()
            if hasattr(self.backend, "aclose"):
                await self.backend.aclose()

    def _progress_note(self) -> str:
        cost = self.usage.cost(self.prices)
        return f"{self.usage.failures} failed" + (f", ${cost:.2f} so far" if cost is not None else "")

    async def _ensure_checked(self) -> None:
        """The endpoint check, once, before the first call that is not in the cache; every
        request waiting on it raises the same :class:`EndpointError` when it fails."""
        async with self._check_lock:
            if self._check_error is not None:
                raise self._check_error
            if not self._checked:
                try:
                    await self.backend.check()
                except EndpointError as exc:  # said once; every waiting request raises it
                    self._check_error = exc
                    raise
                self._checked = True

    async def _one(self, request: ChatRequest, gate, limit) -> ChatResult:
        self.usage.requests += 1
        result = await self._answer(request, gate, limit)
        if result.error:
            self.usage.failures += 1
            self.first_error = self.first_error or result.error
        self._progress.update()
        return result

    async def _answer(self, request: ChatRequest, gate, limit) -> ChatResult:
        result = await self._ask(request.messages, request, gate, limit)
        if request.schema is None or result.error:
            return result
        problem = _check(result, request.schema)
        if problem is None:
            return result
        self.usage.repairs += 1
        repair = request.messages + [
            {"role": "assistant", "content": result.text},
            {"role": "user", "content": "That answer is not valid JSON for the requested format "
                                        f"({problem}). Answer again with the corrected JSON only."},
        ]
        fixed = await self._ask(repair, request, gate, limit)
        if not fixed.error:
            problem = _check(fixed, request.schema)
            if problem is None:
                return fixed
        return ChatResult(result.text, error=fixed.error or f"invalid JSON after one repair: {problem}")

    async def _ask(self, messages, request: ChatRequest, gate, limit) -> ChatResult:
        key = request_key(self.backend.key, self.backend.model, messages, request.params, request.prompt_version)
        if self.cache is not None and (hit := self.cache.get(key)) is not None:
            self.usage.cache_hits += 1
            return ChatResult(hit["text"], cached=True, input_tokens=hit["input_tokens"],
                              output_tokens=hit["output_tokens"])
        if not self._checked:
            await self._ensure_checked()
        async with gate:
            if self._down is not None:
                return ChatResult(None, error=f"not sent: {self._down}")
            answer, error = await self._call(messages, request.params, limit)
        if error is not None:
            return ChatResult(None, error=error)
        self.usage.calls += 1
        self.usage.input_tokens += answer["input_tokens"]
        self.usage.output_tokens += answer["output_tokens"]
        if self.cache is not None:
            self.cache.put(key, answer)
        return ChatResult(answer["text"], input_tokens=answer["input_tokens"],
                          output_tokens=answer["output_tokens"])

    async def _call(self, messages, params, limit) -> tuple[dict | None, str | None]:
        """The backend's answer, retried with backoff; or why there is none."""
        backoff = Backoff(self.retries, self.backoff, self.max_wait, jitter=True)
        for attempt in backoff.tries:
            self.usage.waited += await limit.wait(estimate_tokens(messages))
            try:
                answer = await self.backend.chat(messages, params)
            except RequestError as exc:
                return None, f"refused: {exc}"
            except TransientError as exc:
                if backoff.exhausted(attempt):
                    return None, self._gave_up(f"gave up after {attempt + 1} tries: {exc}")
                if backoff.refuses(exc.retry_after):
                    return None, (f"the server asked to wait {exc.retry_after:,.0f} s, longer than "
                                  f"max_wait {self.max_wait:g} s: {exc}")
                self.usage.retries += 1
                delay = backoff.delay(attempt, exc.retry_after)
                self.usage.waited += delay
                await asyncio.sleep(delay)
            else:
                self._given_up = 0
                return answer, None

    def _gave_up(self, error: str) -> str:
        """Counts the requests given up in a row: after ``stop_after`` of them the endpoint is
        taken for down, and the rest of the run is not sent (failed rows, retried by a re-run)."""
        self._given_up += 1
        if self._given_up >= self.stop_after and self._down is None:
            self._down = (f"the endpoint seems down ({self._given_up} requests in a row gave up; "
                          f"the last: {error})")
        return error


def _check(result: ChatResult, schema: dict) -> str | None:
    """None when the answer is JSON that satisfies ``schema`` (and then sets ``data``)."""
    import jsonschema

    try:
        data = parse_json(result.text or "")
        jsonschema.validate(data, schema)
    except json.JSONDecodeError as exc:
        return f"not JSON: {exc}"
    except jsonschema.ValidationError as exc:
        return f"schema: {exc.message}"
    result.data = data
    return None
