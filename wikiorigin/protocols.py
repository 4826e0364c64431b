"""The two extension points, as :class:`typing.Protocol` s: what a model under evaluation
provides (:class:`EvaluatedModel`) and what a chat backend of the LLM client provides
(:class:`ChatBackend`).

Nothing has to inherit from them: any object with these members works, and a static type
checker checks it. The package's own are :class:`~wikiorigin.evaluators.models.LocalModel`,
:class:`~wikiorigin.evaluators.models.EndpointModel` and
:class:`~wikiorigin.evaluators.recorded.Recorded` (models), and
:class:`~wikiorigin.llm.OpenAIBackend`, :class:`~wikiorigin.llm.TransformersBackend` and
:class:`~wikiorigin.llm.FunctionBackend` (backends; the last makes a plain function one).
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

__all__ = ["EvaluatedModel", "ChatBackend"]


@runtime_checkable
class EvaluatedModel(Protocol):
    """A model under evaluation, as the evaluation tasks use it
    (:mod:`~wikiorigin.evaluators.tasks`).

    ``name`` names it in the items and summaries. A task calls only what it needs:
    ``generate`` (multiple choice in generation mode, free-form answers, answers for the
    judge), ``loglikelihood`` (multiple choice in log-likelihood mode) or ``token_logprobs``
    (the leakage check); a model that lacks the one a task needs is a one-line error, before
    anything runs. What identifies the model and how it runs, for the signature, is read from
    its attributes (:func:`~wikiorigin.evaluators.signature.model_settings`: ``path``,
    ``device``, ``chat``, ``max_length``, ``client``, ...), so it is never passed twice."""

    name: str

    def generate(
        self,
        prompts: list[str],
        *,
        max_new_tokens: int = 128,
        temperature: float = 0.1,
        top_p: float = 1.0,
        seed: int = 0,
    ) -> list[Any]:
        """One answer per prompt, in order: a ``str`` (or a
        :class:`~wikiorigin.evaluators.generation.Response`, which says whether the token
        limit cut it), or None for a request that failed."""
        ...

    def loglikelihood(
        self, requests: list[tuple[str, str]], *, batch_size: int | None = None
    ) -> list[tuple[float, bool]]:
        """For each ``(context, continuation)``: the continuation's summed log-probability
        after the context, and whether greedy decoding would produce it."""
        ...

    def token_logprobs(
        self, texts: list[str], *, windows: str = "overlap", stride: int | None = None
    ) -> list[list[float]]:
        """Every token's log-probability in each text (texts longer than the model's context
        in ``windows``, each predicting ``stride`` tokens)."""
        ...


@runtime_checkable
class ChatBackend(Protocol):
    """What :class:`~wikiorigin.llm.LLMClient` needs of a backend.

    ``model`` names the model (the rows' ``generator``, the provenance), ``key`` the backend
    in the request cache's keys (answers of one backend are never served for another), and
    ``chat`` answers one request. Optional members the client uses when present: ``check()``
    (async: the endpoint asked once before the first call that is not cached; raises
    :class:`~wikiorigin.llm.EndpointError`), ``aclose()`` (async: after each run),
    ``timeout`` (seconds one try may take) and ``json_schema`` (False once the server has
    refused a JSON-schema ``response_format``)."""

    model: str

    @property
    def key(self) -> str:
        """The backend's part of a cache key (``openai:HOST``, ``transformers:NAME``, ...)."""
        ...

    async def chat(self, messages: list[dict], params: dict) -> dict:
        """One chat: ``messages`` (``role``, ``content``) sampled with ``params``
        (``temperature``, ``max_tokens``, ...). Returns ``{"text", "input_tokens",
        "output_tokens"}`` and, where known, ``"finish_reason"`` (``length``: cut by the output
        limit) and ``"reasoning_tokens"``. Raises
        :class:`~wikiorigin.llm.openai_backend.TransientError` for what is worth retrying
        (timeouts, 429, 5xx) and :class:`~wikiorigin.llm.openai_backend.RequestError` for a
        request refused as it stands."""
        ...
