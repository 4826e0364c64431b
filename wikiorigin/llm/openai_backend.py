"""The ``openai`` SDK backend: OpenAI, Azure OpenAI, or any OpenAI-compatible server (vLLM,
llama.cpp, ...) through ``base_url``. Keys come from the environment only."""

from __future__ import annotations

import asyncio
import json
import os

__all__ = ["OpenAIBackend", "TransientError", "RequestError"]


class TransientError(Exception):
    """A failure worth retrying; ``retry_after`` is the server's hint in seconds, if any."""

    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


class RequestError(Exception):
    """A request the backend refuses (too long, malformed): not worth retrying."""


class OpenAIBackend:
    name = "openai"

    def __init__(self, model: str, base_url: str | None = None, *, azure_endpoint: str | None = None,
                 api_version: str | None = None, timeout: float = 60.0):
        import openai

        self._openai = openai
        self.model, self.base_url, self.timeout = model, base_url, timeout
        self.azure_endpoint, self.api_version = azure_endpoint, api_version
        self._client, self._loop = None, None

    @property
    def key(self) -> str:
        return f"{self.name}:{self.azure_endpoint or self.base_url or 'https://api.openai.com/v1'}"

    def _client_for_this_loop(self):
        """An async client bound to the running event loop (each ``LLMClient.run`` has its
        own loop; an HTTP client cannot outlive the loop it was made in)."""
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            openai = self._openai
            if self.azure_endpoint:
                self._client = openai.AsyncAzureOpenAI(
                    azure_endpoint=self.azure_endpoint, api_version=self.api_version or "2024-10-21",
                    api_key=os.environ.get("AZURE_OPENAI_API_KEY"), timeout=self.timeout, max_retries=0)
            else:  # retries are ours: backoff, jitter, Retry-After
                self._client = openai.AsyncOpenAI(
                    base_url=self.base_url, api_key=os.environ.get("OPENAI_API_KEY") or "not-needed",
                    timeout=self.timeout, max_retries=0)
            self._loop = loop
        return self._client

    async def chat(self, messages: list[dict], params: dict) -> dict:
        """``{"text", "input_tokens", "output_tokens"}``; raises TransientError to be retried."""
        openai = self._openai
        try:
            client = self._client_for_this_loop()
            response = await client.chat.completions.create(model=self.model, messages=messages, **params)
        except openai.RateLimitError as exc:
            raise TransientError(f"429: {exc}", _retry_after(exc.response)) from None
        except openai.InternalServerError as exc:
            raise TransientError(f"{exc.status_code}: {exc}", _retry_after(exc.response)) from None
        except (openai.APITimeoutError, openai.APIConnectionError) as exc:
            raise TransientError(f"{type(exc).__name__}: {exc}") from None
        except openai.APIResponseValidationError as exc:
            raise TransientError(f"a malformed response body: {exc}") from None
        except openai.BadRequestError as exc:  # e.g. longer than the model's context
            raise RequestError(f"{exc.status_code}: {exc}") from None
        except json.JSONDecodeError as exc:  # the SDK lets a body that is not JSON through
            raise TransientError(f"a response body that is not JSON: {exc}") from None
        choice = response.choices[0] if response.choices else None
        if choice is None or choice.message is None:
            raise TransientError("a response without a choice")
        usage = response.usage
        return {"text": choice.message.content or "",
                "input_tokens": usage.prompt_tokens if usage else 0,
                "output_tokens": usage.completion_tokens if usage else 0}


def _retry_after(response) -> float | None:
    value = response.headers.get("retry-after") if response is not None else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None
