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

Reasoning models (``reasoning_effort``): the requests carry ``reasoning_effort`` and none of
the sampling parameters (``temperature``, ``top_p``, ...: OpenAI's reasoning models refuse
them), and the output limit goes as ``max_completion_tokens`` where the server wants it; the
effort is part of the cache key, and the reasoning tokens are counted. The first call of a run
goes alone: a server that refuses one of the run's parameters is an :class:`EndpointError`
naming it and the option that changes it, before anything else is sent. Requests with a schema
are sent with a ``response_format`` of that JSON schema (structured outputs: OpenAI, Azure,
vLLM, llama.cpp) unless ``structured_outputs`` is False or the server refuses it; the answer is
validated either way, and ``usage.structured`` counts the calls answered under the schema.

Only complete, usable answers are kept (and cached): an empty answer or an HTML page is
retried, then failed; an answer cut off by the output limit is a failed request unless the
request says a cut answer is still an answer (``truncated_ok``, as an evaluation with a
token budget does). A refusal (the message's ``refusal``, or ``finish_reason``
``content_filter``) is the model's answer: a failed request (``refusal: ...``,
``content_filter: ...``) that is not retried, and is cached, so that running again does not
pay for it again (``retry_refusals=True`` asks again). The usage counts every response the
server sent, usable or not: it billed them all.

Nothing is paid twice: identical requests in one run are sent once (they share the one in
flight), and a request that another run on the same cache is sending is waited for, not sent
(:meth:`RequestCache.claim_many`: the request about to go is claimed with the next ones
waiting, in one transaction); a cache row that cannot be read is named in a warning and asked
again. A run that stops on an error (a full disk under the cache) ends its other requests
before it raises.

What a request costs beyond the server's time: a schema is checked and its validator built
once; an answer that satisfies it is cached with the schema's digest, so that a cache hit is a
look-up and a decode; answers are written in batches by the cache's writer thread (see
:mod:`wikiorigin.llm.cache` for what a kill may lose); tokens are estimated only under a
tokens-per-minute limit.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import replace

from ..progress import Progress
from . import _client_cache, _client_calls
from ._answers import _check, parse_json, strict_schema
from ._client_calls import _Runner
from ._limits import _RateLimit, estimate_tokens, worst_case_seconds
from ._requests import REASONING_EFFORTS, SAMPLING_PARAMS, ChatRequest, ChatResult
from ._usage import Usage
from .cache import RequestCache, request_key, request_keys

__all__ = [
    "ChatRequest",
    "ChatResult",
    "Usage",
    "LLMClient",
    "parse_json",
    "worst_case_seconds",
    "REASONING_EFFORTS",
    "SAMPLING_PARAMS",
    "strict_schema",
]


class LLMClient:
    """Answers lists of :class:`ChatRequest` with a backend (:class:`~wikiorigin.llm.OpenAIBackend`,
    :class:`~wikiorigin.llm.TransformersBackend`), an optional :class:`RequestCache`, at most
    ``concurrency`` requests at a time, ``retries`` with backoff, optional ``rpm`` / ``tpm`` limits
    and ``prices`` for the cost in :attr:`usage` (see the module docstring). A refusal that the
    cache holds is the answer again unless ``retry_refusals``.

    :meth:`run` returns one :class:`ChatResult` per request, in order; :meth:`dry_run` counts the
    calls a run would make. Raises ``ValueError`` for a setting out of range, and
    :class:`~wikiorigin.llm.EndpointError` when the endpoint cannot serve the run at all."""

    def __init__(
        self,
        backend,
        cache: RequestCache | None = None,
        *,
        concurrency: int = 8,
        retries: int = 3,
        backoff: float = 1.0,
        max_wait: float = 120.0,
        rpm: int | None = None,
        tpm: int | None = None,
        prices: dict | None = None,
        check: bool = True,
        stop_after: int = 10,
        reasoning_effort: str | None = None,
        structured_outputs: bool = True,
        retry_refusals: bool = False,
    ):
        if concurrency < 1:
            raise ValueError(f"LLMClient: concurrency must be >= 1, not {concurrency}")
        if stop_after < 1:
            raise ValueError(f"LLMClient: stop_after must be >= 1, not {stop_after}")
        if retries < 0 or not max_wait >= 0:
            raise ValueError(f"LLMClient: retries and max_wait must be >= 0, not {retries} and {max_wait}")
        if reasoning_effort is not None and reasoning_effort not in REASONING_EFFORTS:
            raise ValueError(
                f"LLMClient: reasoning_effort must be one of {', '.join(REASONING_EFFORTS)}, not {reasoning_effort!r}"
            )
        self.reasoning_effort, self.structured_outputs = reasoning_effort, structured_outputs
        self.retry_refusals = retry_refusals
        self.backend, self.cache = backend, cache
        self.concurrency, self.retries = concurrency, retries
        self.backoff, self.max_wait = backoff, max_wait
        self.rpm, self.tpm, self.prices = rpm, tpm, prices
        self.usage = Usage()
        self.first_error: str | None = None  # of the first request that failed, for the summary
        self._checked = not check or not hasattr(backend, "check")
        self._check_error: Exception | None = None
        self.stop_after = stop_after
        self._given_up = 0
        self._down: str | None = None  # why the rest of the run is not sent
        self._first_sent = not check
        self._inflight: dict[str, asyncio.Future] = {}
        self._waiting: dict[str, None] = {}  # keys waiting to be sent, in the order they will go
        self._claimed: set[str] = set()  # keys this run has claimed in the cache and not sent yet
        self._ahead_count = min(4 * concurrency, 256)  # keys claimed with the one about to go
        self.poll = 0.2  # seconds between looks at a request another run is sending
        self._session: _Runner | None = None  # the loop runs share (session)
        self._on_session = False  # the run under way is on the session's loop

    def params(self, params: dict) -> dict:
        """The parameters a request is sent with: as given, or, with a ``reasoning_effort``,
        without the sampling parameters, with the effort, and with the output limit as
        ``max_completion_tokens`` (which counts the reasoning). They are what the cache key holds,
        so answers of another effort are never served for this one."""
        if self.reasoning_effort is None:
            return dict(params)
        kept = {k: v for k, v in params.items() if k not in SAMPLING_PARAMS}
        if "max_tokens" in kept:  # reasoning models count their reasoning in this limit
            kept["max_completion_tokens"] = kept.pop("max_tokens")
        return {**kept, "reasoning_effort": self.reasoning_effort}

    def describe(self) -> dict:
        """What answers through this client, for a run's signature (a judge's, an endpoint
        model's): ``model`` (``NAME@HOST``), the normalised ``base_url``, the reasoning effort
        (:func:`~wikiorigin.llm.describe.describe_client`)."""
        from .describe import describe_client

        return describe_client(self)

    def settings(self) -> dict:
        """How this client asks, for a dataset's provenance: the backend, model, reasoning
        effort and structured outputs (``json_schema`` while the server takes them, else
        ``prompt``; ``usage.structured`` counts the calls answered under a schema)."""
        return {
            "backend": self.backend.key,
            "model": self.backend.model,
            "reasoning_effort": self.reasoning_effort,
            "structured_outputs": "json_schema" if self.structured_outputs and self._takes_schema() else "prompt",
        }

    def warnings(self) -> list[str]:
        """What the run's answers say about its settings: a reasoning effort the server seems
        to ignore (no reasoning tokens reported in any answer); requests the model refused."""
        said = []
        if self.reasoning_effort and self.usage.calls and not self.usage.reasoning_tokens:
            said.append(
                f"{self.backend.model}: reasoning_effort {self.reasoning_effort!r} was sent, but the server "
                f"reported no reasoning tokens in {self.usage.calls} answers: it may have ignored it"
            )
        if self.usage.refused:
            said.append(
                f"{self.backend.model} refused {self.usage.refused} requests (refusal or content_filter): "
                "the model's answer, kept in the cache, so running again does not ask them again"
                + ("" if self.retry_refusals else "; retry_refusals= asks them again")
            )
        return said

    def _takes_schema(self) -> bool:
        """Whether the backend can be sent a JSON-schema ``response_format`` (not refused yet)."""
        return hasattr(self.backend, "json_schema") and self.backend.json_schema is not False

    def key(self, request: ChatRequest) -> str:
        """The cache key of ``request`` with this client's backend and model (:func:`request_key`)."""
        return request_key(
            self.backend.key, self.backend.model, request.messages, self.params(request.params), request.prompt_version
        )

    def _keys(self, messages, params: dict, prompt_version: str) -> tuple[str, str | None]:
        """The key of a request, and its key as caches held it before endpoints were normalised
        (the backend's ``typed_key``) when that differs, the request encoded once."""
        typed = getattr(self.backend, "typed_key", None) if self.cache is not None else None
        keys = request_keys(
            [self.backend.key, *([typed] if typed else [])], self.backend.model, messages, params, prompt_version
        )
        return keys[0], (keys[1] if typed else None)

    def dry_run(self, requests: list[ChatRequest]) -> dict:
        """How many calls a run would make (cache hits excluded) and their input tokens."""
        todo = [
            r
            for r in requests
            if self.cache is None
            or _client_cache.lookup(self, *self._keys(r.messages, self.params(r.params), r.prompt_version))[1] is None
        ]
        return {
            "requests": len(requests),
            "calls": len(todo),
            "input_tokens": sum(estimate_tokens(r.messages) for r in todo),
        }

    def run(self, requests: list[ChatRequest]) -> list[ChatResult]:
        """Answers in the order of ``requests``. Works in a notebook too (whose event loop is
        already running): then the requests run on a loop of their own in another thread.
        Inside :meth:`session`, the runs share one loop and HTTP client."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            if self._session is not None:
                return self._session.run(self._run(requests, kept=True))
            return asyncio.run(self._run(requests))
        with ThreadPoolExecutor(1) as pool:
            return pool.submit(asyncio.run, self._run(requests)).result()

    @contextmanager
    def session(self):
        """``with llm.session():`` the runs inside share one event loop, and so the backend's HTTP
        client and its connections (a build's steps, one after the other: not a new client and
        new connections for each step); both are closed when the block ends. Called where an
        event loop runs already (a notebook), it changes nothing: each run goes on a loop of its
        own in another thread, as :meth:`run` does there."""
        try:
            asyncio.get_running_loop()
            running = True
        except RuntimeError:
            running = False
        if self._session is not None or running:  # inside one already, or a loop of the caller's
            yield self
            return
        self._session = _Runner()
        try:
            yield self
        finally:
            runner, self._session = self._session, None
            try:
                if hasattr(self.backend, "aclose"):
                    runner.run(self.backend.aclose())
            finally:
                runner.close()

    async def _run(self, requests, kept: bool = False):
        """The run on this loop; ``kept``: the loop of a :meth:`session`, whose HTTP client
        stays open for the next run."""
        self._on_session = kept
        gate = asyncio.Semaphore(self.concurrency)
        limit = _RateLimit(self.rpm, self.tpm)
        self._check_lock = asyncio.Lock()
        self._first_tried = asyncio.Event()
        if self._first_sent:
            self._first_tried.set()
        self._given_up, self._down = 0, None
        self._inflight = {}
        self._progress = Progress(
            f"{self.backend.model}: requests", total=len(requests), unit="request", note=self._progress_note
        )
        self._waiting, self._claimed, self._claiming = {}, set(), asyncio.Lock()
        tasks = [asyncio.ensure_future(self._one(r, gate, limit)) for r in requests]
        try:
            results = await asyncio.gather(*tasks)
            if self.cache is not None:  # every answer written: a write that failed raises here
                await asyncio.to_thread(self.cache.flush)
            return results
        finally:
            await _client_calls.wind_down(self, tasks)

    def _progress_note(self) -> str:
        cost = self.usage.cost(self.prices)
        return f"{self.usage.failures} failed" + (f", ${cost:.2f} so far" if cost is not None else "")

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
        if request.schema is None or result.error or result.data is not None:  # data: checked already
            return result
        problem = _check(result, request.schema)
        if problem is None:
            return result
        self.usage.repairs += 1
        repair = request.messages + [
            {"role": "assistant", "content": result.text},
            {
                "role": "user",
                "content": "That answer is not valid JSON for the requested format "
                f"({problem}). Answer again with the corrected JSON only.",
            },
        ]
        fixed = await self._ask(repair, request, gate, limit)
        if not fixed.error:
            problem = _check(fixed, request.schema)
            if problem is None:
                return fixed
        return ChatResult(result.text, error=fixed.error or f"invalid JSON after one repair: {problem}")

    async def _ask(self, messages, request: ChatRequest, gate, limit) -> ChatResult:
        """The answer from the cache, from an identical request in flight in this run, or asked."""
        params = self.params(request.params)
        key, typed = self._keys(messages, params, request.prompt_version)
        if self.cache is not None:
            found, stored = _client_cache.lookup(self, key, typed)
            if stored is not None:
                if found != key:  # stored under the endpoint as typed: found at once next time
                    self.cache.put(key, stored)
                return _client_cache.from_cache(self, stored, request.schema)
        shared = self._inflight.get(key)
        if shared is not None:
            result = replace(await asyncio.shield(shared), cached=True)
            self.usage.cache_hits += result.error is None
            return result
        future = self._inflight[key] = asyncio.get_running_loop().create_future()
        future.add_done_callback(_retrieved)
        try:
            result = await self._asked(key, messages, params, request, gate, limit)
        except BaseException as exc:
            if isinstance(exc, asyncio.CancelledError):
                future.cancel()
            else:
                future.set_exception(exc)
            raise
        future.set_result(result)
        return replace(result)

    async def _asked(self, key: str, messages, params: dict, request: ChatRequest, gate, limit) -> ChatResult:
        """A request that is not in the cache: sent (the first of the run alone), unless another
        run sends it already: then its answer."""
        if not self._checked:
            await _client_calls.ensure_checked(self)
        if request.schema is not None and self.structured_outputs and self._takes_schema():
            params = {
                **params,
                "response_format": {
                    "type": "json_schema",
                    "json_schema": {"name": "answer", "schema": strict_schema(request.schema), "strict": True},
                },
            }
        first = not self._first_sent
        if first:  # the first try goes alone: a refused parameter stops the run before more are sent
            self._first_sent = True
        else:
            await self._first_tried.wait()
            if self._check_error is not None:
                raise self._check_error
        self._waiting[key] = None
        try:
            async with gate:
                if self._down is not None:
                    return ChatResult(None, error=f"not sent: {self._down}")
                answered = await _client_cache.claim(self, key, request.schema)
                if answered is not None:
                    return answered
                answer, error = await _client_calls.call(self, messages, params, limit, request, first)
        finally:
            self._waiting.pop(key, None)
            if first:  # set after its first try already; here whatever ended it
                self._first_tried.set()
        return _client_cache.kept(self, key, answer, error, request.schema)


def _retrieved(future: asyncio.Future) -> None:
    """Marks a shared request's error as seen when no identical request awaited it."""
    if not future.cancelled():
        future.exception()
