"""The requests of an endpoint's scoring (:class:`~wikiorigin.evaluators.completions.EchoScoring`):
the served context from ``/v1/models``, and the prompts not in the cache sent to
``/v1/completions`` (the first alone, then the rest in batches, a bounded number at a time),
retried with backoff, the answers checked (:mod:`~wikiorigin.evaluators._echo`) and cached."""

from __future__ import annotations

import asyncio
import json
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ..llm._usage import read_usage
from ..llm.openai_backend import EndpointError, RequestError, TransientError, _reason
from ..progress import Progress
from ..retry import Backoff, retry_after
from ._echo import _Impossible, _prompt_part, _Unusable

EchoScoring = Any  # completions.EchoScoring, which imports this module

__all__ = ["served_context", "fetch", "run_sync", "in_order", "ECHO_PARAMS"]

ECHO_PARAMS = {"echo": True, "logprobs": 1, "max_tokens": 1, "temperature": 0}
"""What each scoring request asks of ``/v1/completions`` besides the model and the prompts:
lm-evaluation-harness's ``local-completions`` payload (one token generated, then dropped)."""


def _sdk(backend: Any):
    import openai

    return openai.AsyncOpenAI(
        base_url=backend.base_url,
        api_key=os.environ.get("OPENAI_API_KEY") or "not-needed",
        timeout=backend.timeout,
        max_retries=0,
    )


async def _checked(scoring: EchoScoring) -> None:
    """The endpoint checked, once per scoring object."""
    if not scoring.checked:
        await scoring.client.backend.check()
        scoring.checked = True


async def _close(sdk, backend) -> None:
    await sdk.close()
    if hasattr(backend, "aclose"):
        await backend.aclose()


async def served_context(scoring: EchoScoring) -> int | None:
    """The endpoint checked, then the model's ``max_model_len`` in ``/v1/models`` (None
    where the server lists none)."""
    import openai

    backend = scoring.client.backend
    sdk = _sdk(backend)
    try:
        await _checked(scoring)
        listed = (await sdk.models.list()).data
    except (openai.APIError, ValueError):  # no model list: no context known
        return None
    finally:
        await _close(sdk, backend)
    entry = next((m for m in listed if getattr(m, "id", None) == backend.model), None)
    length = getattr(entry, "max_model_len", None)
    return length if isinstance(length, int) and not isinstance(length, bool) else None


class _Batches:
    """What one fetch has got so far: answers ``found``, requests ``failed`` after their
    retries, answers ``broken`` (impossible numbers, no log-probabilities)."""

    def __init__(self, scoring: EchoScoring, sdk, total: int):
        self.scoring, self.sdk = scoring, sdk
        self.found: dict[str, dict] = {}
        self.failed: list[str] = []
        self.broken: list[str] = []
        self.bar = Progress(f"{scoring.name}: scored prompts", total=total, unit="prompt")

    async def one(self, batch: list[tuple[str, Any]], gate: asyncio.Semaphore) -> None:
        """One request of ``batch``'s prompts; each usable answer kept and cached."""
        cache = self.scoring.client.cache
        async with gate:
            try:
                choices = await _ask(self.scoring, self.sdk, [p for _, p in batch])
            except (RequestError, TransientError) as exc:
                self.failed.append(f"{exc}")
                return
        for (key, prompt), choice in zip(batch, choices):
            try:
                self.found[key] = _prompt_part(prompt, choice)
            except _Impossible as exc:
                self.broken.append(self.scoring.impossible(prompt, exc))
                continue
            except _Unusable as exc:
                self.broken.append(f"an answer without the prompt's log-probabilities: {exc}")
                continue
            if cache is not None:
                await asyncio.to_thread(cache.put, key, self.found[key])
        self.bar.update(len(batch))


async def fetch(scoring: EchoScoring, todo: dict, size: int) -> dict:
    """Answers of the prompts not in the cache: the endpoint checked (once), the first
    prompt alone (a server that cannot score prompts stops here; one that does not answer
    it after its retries leaves every prompt unscored, none sent), then the rest in
    batches of ``size``, at most ``concurrency`` requests at a time."""
    client, backend = scoring.client, scoring.client.backend
    items, sdk = list(todo.items()), _sdk(backend)
    got = _Batches(scoring, sdk, len(items))
    try:
        await _checked(scoring)
        await _first(scoring, sdk, items[0], got.found, got.failed)
        got.bar.update()
        gate = asyncio.Semaphore(client.concurrency)
        if not got.failed:  # the first unanswered after its retries: the server is down, none sent
            await asyncio.gather(*(got.one(items[i : i + size], gate) for i in range(1, len(items), size)))
    finally:
        got.bar.close()
        await _close(sdk, backend)
    if client.cache is not None:  # the answers written before the run goes on (a full disk: said here)
        await asyncio.to_thread(client.cache.flush)
    client.usage.failures += len(items) - len(got.found)
    if got.broken:
        raise EndpointError(
            f"{backend.url}: {len(items) - len(got.found)} of {len(items)} prompts were not scored; "
            f"the first: {got.broken[0]} (the {len(got.found)} scored are cached: run again to go on)",
            url=backend.url,
        )
    if got.failed:
        client.first_error = client.first_error or got.failed[0]
    return got.found


async def _first(scoring: EchoScoring, sdk, item, found: dict, failed: list) -> None:
    """The run's first prompt, alone: a server that refuses to score prompts, or answers
    without their log-probabilities, is an EndpointError before anything else is sent; one
    that gives no answer after the retries (an outage) leaves it unscored (in ``failed``)."""
    key, prompt = item
    backend, cache = scoring.client.backend, scoring.client.cache
    where = f"{backend.url}/completions for the model {backend.model!r}"
    try:
        found[key] = _prompt_part(prompt, (await _ask(scoring, sdk, [prompt]))[0])
    except RequestError as exc:
        raise EndpointError(
            f"{where} refuses to score a prompt ({exc}): log-likelihoods need a server "
            "that takes echo with logprobs on /v1/completions (vLLM, llama-cpp-python's "
            "server)",
            url=backend.url,
        ) from None
    except TransientError as exc:
        failed.append(f"{exc}")
        return
    except _Impossible as exc:
        raise EndpointError(f"{backend.url}: {scoring.impossible(prompt, exc)}", url=backend.url) from None
    except _Unusable as exc:
        fix = "" if isinstance(prompt, list) else "; or give {tokenizer} to send token ids"
        raise EndpointError(
            f"{where} answers without the prompt's log-probabilities ({exc}): log-likelihoods "
            "need a server that echoes the prompt with logprobs (vLLM, llama-cpp-python's "
            "server; llama.cpp's own server gives the generated token's only)" + fix,
            also=("tokenizer",) if fix else (),
            url=backend.url,
        ) from None
    if cache is not None:
        await asyncio.to_thread(cache.put, key, found[key])


async def _ask(scoring: EchoScoring, sdk, prompts: list) -> list[dict]:
    """The choices (in the prompts' order) of one request, retried with backoff on 429,
    5xx, timeouts and bodies that are no answer; a refusal raises RequestError at once."""
    client, backend = scoring.client, scoring.client.backend
    backoff = Backoff(client.retries, client.backoff, client.max_wait, jitter=True)
    for attempt in backoff.tries:
        try:
            return await asyncio.wait_for(_post(scoring, sdk, prompts), backend.timeout)
        except asyncio.TimeoutError:
            exc = TransientError(f"no answer within {backend.timeout:g} s (timeout)")
        except TransientError as error:
            exc = error
        if backoff.exhausted(attempt):
            raise TransientError(f"gave up after {attempt + 1} tries: {exc}")
        if backoff.refuses(exc.retry_after):
            raise TransientError(
                f"the server asked to wait {exc.retry_after:,.0f} s, longer than max_wait {client.max_wait:g} s: {exc}"
            )
        client.usage.retries += 1
        delay = backoff.delay(attempt, exc.retry_after)
        client.usage.waited += delay
        await asyncio.sleep(delay)
    raise TransientError("no try was made")  # Backoff.tries is never empty


async def _post(scoring: EchoScoring, sdk, prompts: list) -> list[dict]:
    """One request: the server's choices as it sent them (plain JSON), in prompt order."""
    import openai

    usage = scoring.client.usage
    try:
        raw = await sdk.completions.with_raw_response.create(
            model=scoring.client.backend.model, prompt=prompts, **ECHO_PARAMS
        )
        body = json.loads(raw.text)
    except openai.RateLimitError as exc:
        raise TransientError(f"429: {_reason(exc)}", retry_after(exc.response.headers)) from None
    except openai.InternalServerError as exc:
        raise TransientError(f"{exc.status_code}: {_reason(exc)}", retry_after(exc.response.headers)) from None
    except (openai.APITimeoutError, openai.APIConnectionError) as exc:
        raise TransientError(f"cannot reach the server: {exc}") from None
    except openai.APIStatusError as exc:  # 400 (a parameter refused, a prompt too long), 404, ...
        if exc.status_code in (408, 409):
            raise TransientError(f"{exc.status_code}: {_reason(exc)}", retry_after(exc.response.headers)) from None
        raise RequestError(f"{exc.status_code}: {_reason(exc)}") from None
    except ValueError as exc:  # a body that is not JSON
        raise TransientError(f"a response body that is not JSON: {exc}") from None
    counted = read_usage(body.get("usage") if isinstance(body, dict) else None)  # billed, usable or not
    usage.calls += 1
    usage.input_tokens += counted["input_tokens"]
    usage.output_tokens += counted["output_tokens"]
    usage.unmetered += bool(counted.get("unmetered"))
    choices = body.get("choices") if isinstance(body, dict) else None
    if not isinstance(choices, list) or len(choices) != len(prompts):
        raise TransientError(
            f"an answer with {len(choices) if isinstance(choices, list) else 'no'} choices for {len(prompts)} prompts"
        )
    return in_order(choices)


def in_order(choices: list) -> list:
    """An answer's choices in the order of their ``index`` (as given where none has one); an
    index repeated or missing (which choice scores which prompt is then unknown) is a
    :class:`TransientError`."""
    indices = [c.get("index") if isinstance(c, dict) else None for c in choices]
    if all(i is None for i in indices):
        return choices
    whole = [i for i in indices if isinstance(i, int) and not isinstance(i, bool)]
    if len(whole) != len(indices) or sorted(whole) != list(range(len(choices))):
        raise TransientError(f"an answer whose choices' indices {indices[:8]} are not 0 to {len(choices) - 1}")
    return sorted(choices, key=lambda c: c["index"])


def run_sync(coroutine):
    """Run ``coroutine`` to its end, also where an event loop is already running (a notebook):
    then on a loop of its own in another thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()
