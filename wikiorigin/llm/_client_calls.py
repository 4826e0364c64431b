"""How :class:`~wikiorigin.llm.client.LLMClient` sends one request to its backend: tries bounded
by the backend's ``timeout``, retried with backoff on transient errors (a server's
``Retry-After`` up to ``max_wait``), every billed response counted, a parameter the server
refuses on the run's first call raised for the whole run, and the endpoint taken for down after
``stop_after`` requests in a row gave up; the endpoint checked once before the first call, and a
run wound down however it ended; ``_Runner``, the loop a session's runs share (``asyncio.Runner``,
or its like on Python 3.10). Moved out of ``client.py``; each function takes the client whose
state it reads and counts."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Coroutine, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from ..retry import Backoff
from ._answers import _CutOff, _usable
from ._limits import _RateLimit, estimate_tokens
from .openai_backend import EndpointError, RequestError, TransientError

if TYPE_CHECKING:
    from ._requests import ChatRequest
    from .client import LLMClient

__all__ = ["_Runner", "call", "count", "ensure_checked", "gave_up", "refusal", "wind_down"]

_T = TypeVar("_T")

if sys.version_info >= (3, 11):
    from asyncio import Runner as _Runner
else:  # Python 3.10 has no asyncio.Runner: its run and close, on a loop of its own

    class _Runner:
        def __init__(self) -> None:
            self._loop = asyncio.new_event_loop()

        def run(self, coro: Coroutine[Any, Any, _T]) -> _T:
            return self._loop.run_until_complete(coro)

        def close(self) -> None:
            try:
                self._loop.run_until_complete(self._loop.shutdown_asyncgens())
            finally:
                self._loop.close()


# What a user changes when a server refuses one of these parameters ({name}: a parameter of
# the client, said by ParameterError).
_OPTION_FOR = {
    "temperature": "this looks like a reasoning model: give {reasoning_effort} (then no sampling parameter is sent)",
    "top_p": "this looks like a reasoning model: give {reasoning_effort} (then no sampling parameter is sent)",
    "reasoning_effort": "leave out {reasoning_effort} (the model does not take it) or give another level",
    "max_completion_tokens": "the server takes no max_completion_tokens: leave out {reasoning_effort}",
    "seed": "the server takes no seed",
}


def refusal(client: LLMClient, exc: RequestError, param: str) -> EndpointError:
    """A server's refusal of one of the run's parameters (``param``, the one ``exc`` names), as
    one line before anything is paid."""
    hint = _OPTION_FOR.get(param, "change the parameter that sets it")
    url = getattr(client.backend, "url", None)
    return EndpointError(
        f"{url or client.backend.key} refuses the parameter {param!r} for the model "
        f"{client.backend.model!r} ({exc}): " + hint,
        param,
        also=tuple({"reasoning_effort"} - {param}) if "{reasoning_effort}" in hint else (),
        url=url,
    )


async def call(
    client: LLMClient,
    messages: list[dict],
    params: dict,
    limit: _RateLimit,
    request: ChatRequest,
    first: bool = False,
) -> tuple[dict | None, str | None]:
    """The backend's answer, retried with backoff; or why there is none. An empty answer or
    an HTML page is retried like a server error; an answer cut off by the output limit is no
    answer unless the request takes one (``truncated_ok``). On the run's ``first`` call, a
    refused parameter raises :class:`EndpointError` for the whole run."""
    backoff = Backoff(client.retries, client.backoff, client.max_wait, jitter=True)
    for attempt in backoff.tries:
        if limit.rpm or limit.tpm:  # the tokens are counted only for a limit of tokens
            client.usage.waited += await limit.wait(estimate_tokens(messages) if limit.tpm else 0)
        try:
            try:
                answer = await _try(client, messages, params)
            finally:
                if first and attempt == 0 and not isinstance(sys.exc_info()[1], RequestError):
                    client._first_tried.set()  # the others go now (after a refusal: with its error)
            count(client, answer)
            _usable(answer, request, params)
        except _CutOff as exc:
            return None, str(exc)
        except RequestError as exc:
            if first and attempt == 0:
                refused = refusal(client, exc, exc.param) if exc.param else None
                if refused is not None:
                    client._check_error = refused
                client._first_tried.set()
                if refused is not None:
                    raise refused from None
            return None, f"refused: {exc}"
        except TransientError as exc:
            if backoff.exhausted(attempt):
                return None, gave_up(client, f"gave up after {attempt + 1} tries: {exc}")
            if backoff.refuses(exc.retry_after):
                return None, (
                    f"the server asked to wait {exc.retry_after:,.0f} s, longer than "
                    f"max_wait {client.max_wait:g} s: {exc}"
                )
            client.usage.retries += 1
            delay = backoff.delay(attempt, exc.retry_after)
            client.usage.waited += delay
            await asyncio.sleep(delay)
        else:
            client._given_up = 0
            return answer, None
    raise AssertionError("unreachable: Backoff.exhausted ends the tries")


def count(client: LLMClient, answer: dict) -> None:
    """A response's usage, whatever comes of it: the server billed it."""
    client.usage.calls += 1
    client.usage.input_tokens += answer.get("input_tokens") or 0
    client.usage.output_tokens += answer.get("output_tokens") or 0
    client.usage.reasoning_tokens += answer.get("reasoning_tokens") or 0
    client.usage.unmetered += bool(answer.get("unmetered"))


async def _try(client: LLMClient, messages: list[dict], params: dict) -> dict:
    """One try, bounded as a whole by the backend's ``timeout`` (a server that drips its
    answer a byte at a time is cut off there, not after one timeout per read)."""
    timeout = getattr(client.backend, "timeout", None)
    if not timeout:
        return await client.backend.chat(messages, params)
    try:
        return await asyncio.wait_for(client.backend.chat(messages, params), timeout)
    except asyncio.TimeoutError:
        raise TransientError(f"no answer within {timeout:g} s (timeout)") from None


def gave_up(client: LLMClient, error: str) -> str:
    """Counts the requests given up in a row: after ``stop_after`` of them the endpoint is
    taken for down, and the rest of the run is not sent (failed rows, retried by a re-run)."""
    client._given_up += 1
    if client._given_up >= client.stop_after and client._down is None:
        client._down = f"the endpoint seems down ({client._given_up} requests in a row gave up; the last: {error})"
    return error


async def ensure_checked(client: LLMClient) -> None:
    """The endpoint check, once, before the first call that is not in the cache; every
    request waiting on it raises the same :class:`EndpointError` when it fails."""
    async with client._check_lock:
        if client._check_error is not None:
            raise client._check_error
        if not client._checked:
            try:
                await client.backend.check()
            except EndpointError as exc:  # said once; every waiting request raises it
                client._check_error = exc
                raise
            client._checked = True


async def wind_down(client: LLMClient, tasks: Sequence[asyncio.Future]) -> None:
    """However the run ended: the requests still going are stopped and awaited (an error
    such as a full disk leaves no task behind to be reported at the loop's end), this run's
    claims in the cache end, and the HTTP client goes with this loop, not after it (no
    "Event loop is closed")."""
    pending = []
    for task in tasks:
        if not task.done():
            task.cancel()
            pending.append(task)
        elif not task.cancelled():
            task.exception()  # seen: not reported when the loop closes
    if pending:
        await asyncio.gather(*pending, return_exceptions=True)
    client._progress.close()
    if client.cache is not None:
        client.cache.release()
    if hasattr(client.backend, "aclose") and not client._on_session:
        await client.backend.aclose()
