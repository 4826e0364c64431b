"""Chat models for the builders: one small interface, a request cache, retries, rate limits and
usage accounting. See :class:`~wikiorigin.llm.client.LLMClient`."""

from .cache import RequestCache
from .client import ChatRequest, ChatResult, LLMClient, Usage
from .openai_backend import OpenAIBackend
from .transformers_backend import TransformersBackend

__all__ = ["ChatRequest", "ChatResult", "LLMClient", "Usage", "RequestCache", "OpenAIBackend",
           "TransformersBackend"]
