"""A plain function as a chat backend: a scripted model for tests and notebooks, or a thin
wrapper over any client library, behind the same cache, retries and usage as a server."""

from __future__ import annotations

import asyncio
import inspect

__all__ = ["FunctionBackend"]


def _takes_params(fn) -> bool:
    """Whether ``fn`` takes a second positional argument (the sampling parameters)."""
    try:
        parameters = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):  # a builtin without a signature: the documented one-argument form
        return False
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 2 or any(p.kind == p.VAR_POSITIONAL for p in parameters)


class FunctionBackend:
    """A chat backend (:class:`~wikiorigin.protocols.ChatBackend`) that calls ``fn``:
    ``fn(messages)`` or ``fn(messages, params)``, plain or ``async``, returns the answer's text
    (or a dict as :meth:`chat` returns one). ``model`` names it (default: the function's
    name); it keys the request cache, so two functions that answer differently need two names
    (or two caches). A plain function runs in a worker thread, so a slow one does not hold up
    the client's other requests. Token counts are estimated as the client's dry runs estimate
    them, unless ``fn`` returns its own."""

    name = "function"

    def __init__(self, fn, *, model: str | None = None):
        if not callable(fn):
            raise TypeError(f"FunctionBackend: expected a function, got {type(fn).__name__}")
        self.fn = fn
        self.model = model or getattr(fn, "__name__", None) or type(fn).__name__
        self._params = _takes_params(fn)
        self._async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(type(fn).__call__)

    @property
    def key(self) -> str:
        """The backend's part of a cache key: ``function:`` and the model's name."""
        return f"{self.name}:{self.model}"

    async def chat(self, messages: list[dict], params: dict) -> dict:
        """``{"text", "input_tokens", "output_tokens", "finish_reason"}`` of ``fn``'s answer.
        Raises ``TypeError`` when ``fn`` returns neither a string nor a dict with ``text``."""
        from ._limits import estimate_tokens

        args = (messages, params) if self._params else (messages,)
        answer = await self.fn(*args) if self._async else await asyncio.to_thread(self.fn, *args)
        if isinstance(answer, str):
            answer = {"text": answer}
        if not isinstance(answer, dict) or not isinstance(answer.get("text"), str):
            raise TypeError(
                f"FunctionBackend {self.model!r}: the function returned {type(answer).__name__}, "
                "expected the answer's text (str) or a dict with 'text'"
            )
        return {
            "input_tokens": estimate_tokens(messages),
            "output_tokens": estimate_tokens([{"content": answer["text"]}]) - 4,
            "finish_reason": "stop",
            **answer,
        }
