"""Chat models for the builders: one small interface, a request cache, retries, rate limits and
usage accounting. See :class:`~wikiorigin.llm.client.LLMClient`."""

from .cache import RequestCache
from .client import ChatRequest, ChatResult, LLMClient, Usage, worst_case_seconds
from .lock import RunLock
from .openai_backend import EndpointError, OpenAIBackend
from .transformers_backend import TransformersBackend

__all__ = ["ChatRequest", "ChatResult", "LLMClient", "Usage", "RequestCache", "OpenAIBackend",
           "TransformersBackend", "EndpointError", "RunLock", "worst_case_seconds"]
