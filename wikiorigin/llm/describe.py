"""What an LLM client says of itself, for the signatures of the runs it takes part in (a judge,
a paraphraser, an endpoint under evaluation): :func:`describe_client`, which
:meth:`~wikiorigin.llm.LLMClient.describe` returns."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from .openai_backend import OPENAI_URL, endpoint_key

__all__ = ["describe_client", "client_label", "backend_url"]


def backend_url(backend: Any) -> str | None:
    """The URL an OpenAI-compatible ``backend`` asks (Azure's endpoint, the base URL, else
    OpenAI's own); None for a backend without one (local, a function)."""
    if not (hasattr(backend, "base_url") or hasattr(backend, "azure_endpoint")):
        return None
    return getattr(backend, "azure_endpoint", None) or getattr(backend, "base_url", None) or OPENAI_URL


def client_label(client: Any) -> str:
    """``NAME@HOST`` of a client (or a backend): the host (and port) of an OpenAI-compatible
    backend's URL, or the backend's kind (``transformers``, ``function``) for a local one."""
    backend = getattr(client, "backend", client)
    model = str(getattr(backend, "model", type(backend).__name__))
    url = backend_url(backend)
    if url is not None:
        return f"{model}@{urlparse(url).netloc or url}"
    return f"{Path(model).name}@{getattr(backend, 'name', 'local')}"


def describe_client(client: Any) -> dict[str, Any]:
    """``model`` (``NAME@HOST``, :func:`client_label`), ``base_url`` (normalised:
    :func:`~wikiorigin.llm.openai_backend.endpoint_key`) where the backend has one, and the
    ``reasoning_effort`` it asks with, if any."""
    described: dict[str, Any] = {"model": client_label(client)}
    url = backend_url(client.backend)
    if url is not None:
        described["base_url"] = endpoint_key(url)
    effort = getattr(client, "reasoning_effort", None)
    if effort:
        described["reasoning_effort"] = effort
    return described
