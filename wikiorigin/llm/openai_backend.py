"""The ``openai`` SDK backend: OpenAI, Azure OpenAI, or any OpenAI-compatible server (vLLM,
llama.cpp, ...) through ``base_url``. Keys come from the environment only.

:meth:`OpenAIBackend.check` asks the endpoint once, cheaply, before the first paid call: an
unreachable server, a refused key or an unknown model is an :class:`EndpointError` (one line,
naming the variable that holds the key) instead of a run in which every request fails; a
key that is not set at all is one before anything runs (:meth:`OpenAIBackend.check_key`).
The endpoint is in the cache key normalised (:func:`endpoint_key`): the same server typed
another way (``localhost`` or ``127.0.0.1``, a trailing slash, the default port) is the same key.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any
from urllib.parse import urlsplit

from ..errors import ParameterError
from ._endpoint import _certificates, _no_certificates, endpoint_key
from ._server_errors import (
    _about_response_format,
    _connection_problem,
    _reason,
    _refused_parameter,
    _retry_after,
    _sample,
)
from ._usage import read_usage

__all__ = [
    "OpenAIBackend",
    "TransientError",
    "RequestError",
    "EndpointError",
    "endpoint_key",
]

OPENAI_URL = "https://api.openai.com/v1"


def _not_text(content) -> str:
    return f"an answer that is not text ({type(content).__name__}: {_sample(content)})"


def _set(variable: str) -> bool:
    """Whether an environment variable holds more than blanks (a key of spaces is no key)."""
    return bool(os.environ.get(variable, "").strip())


# The probe's timeout: an endpoint that does not answer a model listing within this is
# taken for unreachable (a run's own requests get --timeout).
CHECK_TIMEOUT = 15.0


class TransientError(Exception):
    """A failure worth retrying; ``retry_after`` is the server's hint in seconds, if any."""

    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


class RequestError(Exception):
    """A request the backend refuses (too long, malformed): not worth retrying. ``param`` and
    ``code`` are the server's, when it names the parameter it refuses (OpenAI's
    ``unsupported_parameter`` / ``unsupported_value``)."""

    def __init__(self, message: str, param: str | None = None, code: str | None = None):
        super().__init__(message)
        self.param, self.code = param, code


class EndpointError(ParameterError):
    """The endpoint cannot serve the run at all: unreachable, the key refused, the model unknown,
    a parameter refused. A :class:`~wikiorigin.errors.ParameterError` of ``parameter``: the
    endpoint (``base_url``) unless another is at fault (the ``model``, a refused sampling
    parameter); ``url`` is the endpoint's address, when known."""

    def __init__(self, message: str, parameter: str = "base_url", *, also=(), url: str | None = None):
        self.url = url
        super().__init__(parameter, message, also=also)


class OpenAIBackend:
    """A chat backend on the ``openai`` SDK: ``model`` at OpenAI, at ``base_url`` (any
    OpenAI-compatible server) or at an Azure ``azure_endpoint`` (with ``api_version``); the key
    comes from the environment. Requests time out after ``timeout`` seconds (``ValueError`` if
    not positive). :meth:`check` raises :class:`EndpointError` for an endpoint that cannot serve."""

    name = "openai"
    # Which parameter carries the output limit: "max_tokens" until the server refuses it
    # (OpenAI's reasoning models want "max_completion_tokens"); learned once, then kept.
    limit_param = "max_tokens"
    # Whether the server takes ``response_format`` with a JSON schema: None until a request
    # has tried, False once a server refused it (the client then validates and repairs).
    json_schema: bool | None = None
    # Parameters that only ask for something best-effort (reproducibility): dropped, once, for a
    # server that refuses them, instead of failing the run.
    BEST_EFFORT = ("seed",)

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        *,
        azure_endpoint: str | None = None,
        api_version: str | None = None,
        timeout: float = 60.0,
    ):
        import openai

        if not timeout > 0:
            raise ValueError(f"OpenAIBackend: timeout must be > 0 seconds, not {timeout}")
        self._openai = openai
        # the server the SDK would reach: OPENAI_BASE_URL when none is given (in the cache key
        # and the provenance as the server it is, never as OpenAI's)
        base_url = base_url or (None if azure_endpoint else os.environ.get("OPENAI_BASE_URL") or None)
        self.model, self.base_url, self.timeout = model, base_url, timeout
        self.azure_endpoint = azure_endpoint
        self.api_version = api_version or os.environ.get("OPENAI_API_VERSION") or "2024-10-21"
        self._client: Any = None  # the SDK's async client, of the loop below
        self._loop: asyncio.AbstractEventLoop | None = None
        self._dropped: frozenset = frozenset()  # BEST_EFFORT parameters this server refused

    @property
    def key(self) -> str:
        """The backend's part of a cache key: the endpoint, normalised (:func:`endpoint_key`;
        once an endpoint, not at each request)."""
        endpoint, keyed = self._endpoint, getattr(self, "_keyed", None)
        if keyed is None or keyed[0] != endpoint:
            keyed = self._keyed = (endpoint, f"{self.name}:{endpoint_key(endpoint)}")
        return keyed[1]

    @property
    def typed_key(self) -> str | None:
        """The key as caches before normalisation held it (the endpoint as typed), when it
        differs from :attr:`key`: answers stored under it are still found."""
        typed = f"{self.name}:{self._endpoint}"
        return typed if typed != self.key else None

    @property
    def _endpoint(self) -> str:
        return self.azure_endpoint or self.base_url or OPENAI_URL

    def check_key(self) -> None:
        """Raises :class:`EndpointError` naming the variable when the endpoint needs a key and
        none is set: OpenAI's own (no ``base_url``, or one at its host) needs ``OPENAI_API_KEY``, Azure
        ``AZURE_OPENAI_API_KEY`` (or ``AZURE_OPENAI_AD_TOKEN``); another server may need none."""
        if self.azure_endpoint:
            if not (_set("AZURE_OPENAI_API_KEY") or _set("AZURE_OPENAI_AD_TOKEN")):
                raise EndpointError(
                    f"no API key for {self.azure_endpoint}: AZURE_OPENAI_API_KEY is not set "
                    "(nor AZURE_OPENAI_AD_TOKEN): set it to the key of the Azure resource",
                    "azure_endpoint",
                    url=self.azure_endpoint,
                )
        elif urlsplit(self._endpoint).hostname == urlsplit(OPENAI_URL).hostname and not _set("OPENAI_API_KEY"):
            raise EndpointError(  # OpenAI's own, however it was given
                f"no API key for {self._endpoint}: OPENAI_API_KEY is not set: set it, or give "
                "{base_url} for a server that needs none",
                url=self._endpoint,
            )

    @property
    def key_variable(self) -> str:
        """The environment variable the API key is read from."""
        return "AZURE_OPENAI_API_KEY" if self.azure_endpoint else "OPENAI_API_KEY"

    def _client_for_this_loop(self):
        """An async client bound to the running event loop (each ``LLMClient.run`` has its
        own loop; an HTTP client cannot outlive the loop it was made in). Its TLS settings are
        the SDK's own, made once (:meth:`_tls`): not again for each step of a build."""
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            openai = self._openai
            http = openai.DefaultAsyncHttpxClient(verify=self._tls())
            if self.azure_endpoint:
                self._client = openai.AsyncAzureOpenAI(
                    azure_endpoint=self.azure_endpoint,
                    api_version=self.api_version,
                    api_key=os.environ.get("AZURE_OPENAI_API_KEY"),
                    timeout=self.timeout,
                    max_retries=0,
                    http_client=http,
                )
            else:  # retries are ours: backoff, jitter, Retry-After
                self._client = openai.AsyncOpenAI(
                    base_url=self.base_url,
                    api_key=os.environ.get("OPENAI_API_KEY") or "not-needed",
                    timeout=self.timeout,
                    max_retries=0,
                    http_client=http,
                )
            self._loop = loop
        return self._client

    def _tls(self):
        """The TLS context of the HTTP client: the SDK's default (:func:`_certificates`); for an
        ``http://`` endpoint reached without a proxy, which never speaks TLS, one without
        certificates (loading them takes 20 ms, a tenth of a small build; a TLS connection it
        was ever used for would fail, never go unverified)."""
        from urllib.request import getproxies  # what the HTTP client reads the proxies from

        if urlsplit(self._endpoint).scheme == "http" and not getproxies():
            return _no_certificates()
        return _certificates(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))

    async def chat(self, messages: list[dict], params: dict) -> dict:
        """``{"text", "input_tokens", "output_tokens", "reasoning_tokens", "finish_reason",
        "json_schema"}``; raises :class:`TransientError` to be retried, :class:`RequestError`
        for a refusal. ``params`` are the request's; ``max_tokens`` goes as
        ``max_completion_tokens`` where the server wants it, and a ``response_format`` or a
        ``seed`` the server refuses is dropped (``json_schema`` False in the answer): each
        learned from the server's 400, once, and kept for the rest of the run."""
        while True:
            wire = self._wire(params)
            try:
                return await self._create(messages, wire)
            except RequestError as exc:
                if exc.param == "max_tokens" and self.limit_param == "max_tokens" and "max_tokens" in wire:
                    self.limit_param = "max_completion_tokens"
                elif exc.param in self.BEST_EFFORT and exc.param in wire:
                    self._dropped = self._dropped | {exc.param}
                elif "response_format" in wire and _about_response_format(exc) and self.json_schema is not False:
                    self.json_schema = False
                else:
                    raise

    def _wire(self, params: dict) -> dict:
        """The parameters as this server takes them (see :meth:`chat`)."""
        wire = dict(params)
        if "max_tokens" in wire and self.limit_param != "max_tokens":
            wire[self.limit_param] = wire.pop("max_tokens")
        if self.json_schema is False:
            wire.pop("response_format", None)
        for name in self._dropped:
            wire.pop(name, None)
        return wire

    async def _create(self, messages: list[dict], params: dict) -> dict:
        openai = self._openai
        try:
            client = self._client_for_this_loop()
            response = await client.chat.completions.create(model=self.model, messages=messages, **params)
        except openai.RateLimitError as exc:
            raise TransientError(f"429: {_reason(exc)}", _retry_after(exc.response)) from None
        except openai.InternalServerError as exc:
            raise TransientError(f"{exc.status_code}: {_reason(exc)}", _retry_after(exc.response)) from None
        except (openai.APITimeoutError, openai.APIConnectionError) as exc:
            raise TransientError(_connection_problem(exc, self.timeout)) from None
        except openai.APIResponseValidationError as exc:
            raise TransientError(f"a malformed response body: {exc}") from None
        except openai.APIStatusError as exc:  # 400 (e.g. longer than the context), 401, 404, ...
            if exc.status_code in (408, 409):
                raise TransientError(f"{exc.status_code}: {_reason(exc)}", _retry_after(exc.response)) from None
            param, code = _refused_parameter(exc)
            raise RequestError(f"{exc.status_code}: {_reason(exc)}", param, code) from None
        except json.JSONDecodeError as exc:  # the SDK lets a body that is not JSON through
            raise TransientError(f"a response body that is not JSON: {exc}") from None
        choices = getattr(response, "choices", None)  # a 200 with a body that is no completion
        if not isinstance(choices, list):
            raise TransientError(f"a response without choices ({_sample(response)})")
        choice = choices[0] if choices else None
        if choice is None or getattr(choice, "message", None) is None:
            raise TransientError("a response without a choice")
        if "response_format" in params and self.json_schema is None:
            self.json_schema = True
        content = choice.message.content
        text = content if content is None or isinstance(content, str) else None  # a number, a list of parts
        refusal = getattr(choice.message, "refusal", None)
        return {
            "text": text or "",
            **({} if text is not None or content is None else {"malformed": _not_text(content)}),
            **read_usage(response.usage),
            "finish_reason": choice.finish_reason,
            "json_schema": "response_format" in params,
            **({"refusal": refusal} if isinstance(refusal, str) and refusal.strip() else {}),
        }

    async def aclose(self) -> None:
        """Close the HTTP client of this loop (before the loop itself closes)."""
        if self._client is not None and self._loop is asyncio.get_running_loop():
            await self._client.close()
        self._client, self._loop = None, None

    async def check(self) -> None:
        """One cheap request before the first paid one; raises :class:`EndpointError`.

        The model's entry (``GET /models/MODEL``), else the model list; a server that lists
        neither the model nor any models (Azure deployments, llama.cpp, some proxies) is asked
        for a 1-token completion instead, which also tells an unknown model (404). The error
        carries nothing of the SDK's: it pickles however exceptions are pickled (Dask's tblib
        pickles each one's context too, and the SDK's errors cannot be rebuilt from their args).
        A key that is not set is said first (:meth:`check_key`), without asking."""
        self.check_key()
        try:
            await self._check()
        except EndpointError as exc:
            error = exc
        else:
            return
        error.__context__ = None  # the SDK's exception, which the message already says
        raise error

    async def _check(self) -> None:
        openai = self._openai
        client = self._client_for_this_loop().with_options(timeout=min(self.timeout, CHECK_TIMEOUT))
        listed = None
        if not self.azure_endpoint:
            try:
                await client.models.retrieve(self.model)
                return
            except openai.APIStatusError as exc:  # 404: no such entry, or no such route
                self._refused(exc)
            except openai.APIConnectionError as exc:
                raise self._unreachable(exc) from None
            except (openai.APIResponseValidationError, json.JSONDecodeError):
                pass
            try:
                listed = [m.id for m in (await client.models.list()).data]
            except openai.APIStatusError as exc:
                self._refused(exc)
            except (openai.APIResponseValidationError, json.JSONDecodeError, AttributeError):
                pass
            if listed and self.model in listed:
                return
        try:
            await client.chat.completions.create(
                model=self.model, messages=[{"role": "user", "content": "ping"}], max_tokens=1
            )
        except openai.NotFoundError as exc:
            served = f"; it lists {', '.join(listed[:10])}" if listed else ""
            raise EndpointError(
                f"{self.url} does not serve the model {self.model!r} (404: {_reason(exc)}){served}",
                "model",
                url=self.url,
            ) from None
        except openai.APIStatusError as exc:  # 400, 429, 5xx: it is there and took the key
            self._refused(exc)
        except openai.APIConnectionError as exc:
            raise self._unreachable(exc) from None
        except (openai.APIResponseValidationError, json.JSONDecodeError):
            pass  # it answered: a bad body is the run's problem, retried and recorded there

    @property
    def url(self) -> str:
        """The endpoint's base URL, as the client uses it once made."""
        client = self._client
        return str(client.base_url).rstrip("/") if client is not None else self._endpoint

    def _refused(self, exc) -> None:
        if exc.status_code in (401, 403):
            variable = self.key_variable
            unset = "" if _set(variable) else f" ({variable} is not set)"
            raise EndpointError(
                f"{self.url} refused the API key ({exc.status_code}: {_reason(exc)}): "
                f"set {variable} to a key it accepts{unset}",
                url=self.url,
            ) from None

    def _unreachable(self, exc) -> EndpointError:
        """The server cannot be reached: check the address given (either, when none was)."""
        given = [name for name in ("base_url", "azure_endpoint") if getattr(self, name)]
        given = given or ["base_url", "azure_endpoint"]
        problem = _connection_problem(exc, min(self.timeout, CHECK_TIMEOUT))
        return EndpointError(
            f"cannot reach {self.url}: {problem} (is the server running? check "
            + " / ".join("{" + name + "}" for name in given)
            + ")",
            given[0],
            also=given[1:],
            url=self.url,
        )
