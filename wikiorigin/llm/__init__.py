"""Chat models for the builders: one small interface, a request cache, retries, rate limits and
usage accounting. See :class:`~wikiorigin.llm.client.LLMClient`. A backend is anything that
provides :class:`~wikiorigin.protocols.ChatBackend` (an OpenAI-compatible server,
:class:`OpenAIBackend`; a local model, :class:`TransformersBackend`; a plain function,
:class:`FunctionBackend`)."""

from .cache import RequestCache
from .client import ChatRequest, ChatResult, LLMClient, Usage, worst_case_seconds
from .function_backend import FunctionBackend
from .lock import RunLock
from .openai_backend import EndpointError, OpenAIBackend
from .transformers_backend import TransformersBackend

__all__ = [
    "ChatRequest",
    "ChatResult",
    "LLMClient",
    "Usage",
    "RequestCache",
    "OpenAIBackend",
    "TransformersBackend",
    "FunctionBackend",
    "EndpointError",
    "RunLock",
    "worst_case_seconds",
]
