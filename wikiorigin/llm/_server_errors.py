"""What a server's error says, read from the ``openai`` SDK's exceptions: the socket's own
words or the timeout (:func:`_connection_problem`), the parameter a 400 refuses
(:func:`_refused_parameter`), whether it is the ``response_format``, the server's message on one
short line (:func:`_reason`), its ``Retry-After``. Moved out of ``openai_backend.py``;
``wikiorigin.llm.openai_backend`` still imports these names."""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from ..retry import retry_after

if TYPE_CHECKING:
    from .openai_backend import RequestError

__all__ = [
    "_about_response_format",
    "_connection_problem",
    "_reason",
    "_refused_parameter",
    "_retry_after",
    "_sample",
]


def _connection_problem(exc, timeout: float) -> str:
    """What the socket said, from the bottom of the chain the SDK and httpx wrap it in
    (``Connection refused``, ``Name or service not known``), or the timeout."""
    import openai

    if isinstance(exc, openai.APITimeoutError):
        return f"no answer within {timeout:g} s (timeout)"
    chain: list[BaseException] = []
    link = exc
    while link is not None and link not in chain and len(chain) < 20:
        chain.append(link)
        link = link.__cause__ or link.__context__
    for link in reversed(chain):
        if isinstance(link, OSError) and link.errno and link.errno > 0:
            return os.strerror(link.errno)
        if isinstance(link, OSError) and link.strerror:
            return link.strerror
    return str(exc.__cause__ or exc)


def _refused_parameter(exc) -> tuple[str | None, str | None]:
    """The parameter a 400 refuses and the server's code for it (OpenAI's error body names
    both: ``{"error": {"param": "temperature", "code": "unsupported_value"}}``); servers that
    only say it in words (``Unsupported parameter: 'max_tokens'``) are read too."""
    body = getattr(exc, "body", None)
    error = body.get("error", body) if isinstance(body, dict) else None
    param = error.get("param") if isinstance(error, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    if not param:
        said = re.search(r"[Uu]nsupported (?:parameter|value)[^'\"]*['\"]([a-z_]+)['\"]", _reason(exc))
        param = said.group(1) if said else None
    return (param if isinstance(param, str) else None), (code if isinstance(code, str) else None)


def _about_response_format(exc: RequestError) -> bool:
    """Whether a refusal is of the ``response_format`` (a server without structured outputs)."""
    return exc.param == "response_format" or any(
        word in str(exc).lower() for word in ("response_format", "json_schema", "response format")
    )


def _sample(response) -> str:
    """The start of a body that is not what was asked for, on one line."""
    text = " ".join(str(response).split())
    return text if len(text) <= 80 else text[:77] + "..."


def _reason(exc) -> str:
    """The server's own message (not the SDK's repr of the whole body), cut to one short line."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        body = body.get("error", body)
    if isinstance(body, dict):
        body = body.get("message", body)
    text = str(body if isinstance(body, str) and body else getattr(exc, "message", exc))
    text = " ".join(text.split())
    return text if len(text) <= 200 else text[:197] + "..."


def _retry_after(response) -> float | None:
    """The server's wait in seconds (:func:`~wikiorigin.retry.retry_after`); None when it
    sent none or there is no response."""
    return None if response is None else retry_after(response.headers)
