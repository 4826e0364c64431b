"""How :class:`~wikiorigin.llm.client.LLMClient` uses its :class:`~wikiorigin.llm.RequestCache`:
a stored answer that serves the run (a damaged row named and asked again, a refusal asked again
with ``retry_refusals``), found under its key or the key as the endpoint was typed; a request
claimed before it is sent (with the next ones waiting, in one transaction), or the answer of
another run that claimed it first, waited for; an answer kept, marked with its schema's digest
when it satisfies it. Moved out of ``client.py``; each function takes the client whose cache,
counters and claims it uses."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING

from ._answers import _check, _declined, _sample, _schema, parse_json
from ._limits import worst_case_seconds
from ._requests import ChatResult

if TYPE_CHECKING:
    from .client import LLMClient

__all__ = ["ahead", "claim", "from_cache", "kept", "lookup", "stored"]


def stored(client: LLMClient, key: str, answer: dict | None) -> dict | None:
    """The stored ``answer`` when it serves this run: a row without an answer's fields is
    damaged (named in a warning, asked again), and a refusal is asked again with
    ``retry_refusals``."""
    if answer is None:
        return None
    if not isinstance(answer.get("text"), str) or not all(
        isinstance(answer.get(k), int) for k in ("input_tokens", "output_tokens")
    ):
        if client.cache is not None:
            client.cache.damaged(key, f"no text and tokens: {_sample(answer)}")
        return None
    return None if client.retry_refusals and _declined(answer) else answer


def lookup(client: LLMClient, key: str, typed: str | None) -> tuple[str, dict | None]:
    """The answer stored for a request, and the key it was found under (its ``key``, or the
    key ``typed`` before normalisation)."""
    cache = client.cache
    if cache is None:
        return key, None
    found = stored(client, key, cache.get(key))
    if found is None and typed:
        return typed, stored(client, typed, cache.get(typed))
    return key, found


def from_cache(client: LLMClient, answer: dict, schema: dict | None = None) -> ChatResult:
    """A stored answer; its JSON decoded, without checking it again, when it was checked
    against this very ``schema`` before it was stored (its ``checked``: the schema's digest)."""
    client.usage.cache_hits += 1
    declined = _declined(answer)
    if declined:
        client.usage.refused += 1
    result = ChatResult(
        None if declined else answer["text"],
        cached=True,
        error=declined,
        input_tokens=answer["input_tokens"],
        output_tokens=answer["output_tokens"],
        reasoning_tokens=answer.get("reasoning_tokens", 0),
        finish_reason=answer.get("finish_reason"),
    )
    if schema is not None and not declined and answer.get("checked") == _schema(schema).digest:
        try:
            result.data = parse_json(answer["text"])
        except json.JSONDecodeError:  # a row changed since: checked as any other
            pass
    return result


async def claim(client: LLMClient, key: str, schema: dict | None) -> ChatResult | None:
    """None once this run has claimed ``key`` in the cache (it sends the request); the
    answer, when another run that had claimed it stored one meanwhile (waited for, polling,
    as long as that run lives and its claim lasts). Keys are claimed in batches: ``key``
    with the next ones waiting to be sent (:func:`ahead`), in one transaction."""
    cache = client.cache
    if cache is None:
        return None
    while True:
        async with client._claiming:
            if key in client._claimed:
                client._claimed.discard(key)
                return None
            timeout = getattr(client.backend, "timeout", None) or 600.0
            worst = worst_case_seconds(timeout, client.retries, client.max_wait)
            seconds = worst * (1 + client._ahead_count // client.concurrency) + 60  # the last is sent that late
            found = await asyncio.to_thread(cache.claim_many, ahead(client, key), seconds)
            client._claimed.update(k for k, (answer, holder) in found.items() if answer is None and holder is None)
        answer, holder = found[key]
        if holder is None:  # claimed now, or answered meanwhile
            client._claimed.discard(key)
            kept_answer = stored(client, key, answer)
            return from_cache(client, kept_answer, schema) if kept_answer is not None else None
        client.usage.waited += client.poll
        await asyncio.sleep(client.poll)


def ahead(client: LLMClient, key: str) -> list[str]:
    """``key``, and the next keys waiting to be sent that this run has not claimed yet."""
    keys = [key]
    for waiting in client._waiting:
        if len(keys) > client._ahead_count:
            break
        if waiting != key and waiting not in client._claimed:
            keys.append(waiting)
    return keys


def kept(client: LLMClient, key: str, answer: dict | None, error: str | None, schema: dict | None) -> ChatResult:
    """The result of one call; an answer is cached (written by the cache's writer thread
    with those that arrive meanwhile), a refusal too; a failed request (no ``answer``, its
    ``error``) ends its claim, for another run to send. An answer that satisfies its ``schema``
    is stored marked so (the schema's digest), and is not checked again when it is found in the
    cache."""
    if answer is None:
        if client.cache is not None:
            client.cache.release(key)
        return ChatResult(None, error=error)
    client.usage.structured += bool(answer.pop("json_schema", False))
    declined = _declined(answer)
    if declined:
        client.usage.refused += 1
    result = ChatResult(
        None if declined else answer["text"],
        error=declined,
        input_tokens=answer["input_tokens"],
        output_tokens=answer["output_tokens"],
        reasoning_tokens=answer.get("reasoning_tokens", 0),
        finish_reason=answer.get("finish_reason"),
    )
    if schema is not None and not declined and _check(result, schema) is None:
        answer["checked"] = _schema(schema).digest
    if client.cache is not None:
        client.cache.put(key, answer)
    return result
