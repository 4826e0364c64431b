"""The extension points, as :class:`typing.Protocol` s: what a model under evaluation
provides, one Protocol per capability (:class:`GeneratingModel`, :class:`LoglikelihoodModel`,
:class:`TokenLogprobsModel`, and :class:`Judge` for the LLM that rates answers), and what a
chat backend of the LLM client provides (:class:`ChatBackend`).

Nothing has to inherit from them: any object with these members works, and a static type
checker checks it. A model needs only the capability a task uses: one that only generates
is a model for the tasks that only generate. Every model describes itself
(:meth:`Described.describe`): the signature of a run is the task's settings and that
description, nothing read off the model otherwise. The package's own are
:class:`~wikiorigin.evaluators.models.LocalModel`,
:class:`~wikiorigin.evaluators.models.EndpointModel` and
:class:`~wikiorigin.evaluators.recorded.Recorded` (models), :class:`~wikiorigin.llm.LLMClient`
(a judge), and :class:`~wikiorigin.llm.OpenAIBackend`, :class:`~wikiorigin.llm.TransformersBackend` and
:class:`~wikiorigin.llm.FunctionBackend` (backends; the last makes a plain function one).
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from .errors import ParameterError

__all__ = [
    "Described",
    "GeneratingModel",
    "LoglikelihoodModel",
    "TokenLogprobsModel",
    "Judge",
    "EvaluatedModel",
    "AnyModel",
    "ChatBackend",
    "CAPABILITIES",
    "MissingCapability",
    "require",
    "model_name",
]


@runtime_checkable
class Described(Protocol):
    """What every model under evaluation has: :meth:`describe`. Its ``name`` (an attribute)
    names it in the items and summaries; a model without one is named by its description
    (``name``, else ``model``), else by its class (:func:`model_name`)."""

    def describe(self) -> dict[str, Any]:
        """What identifies the model and how it runs, as a flat record of JSON values (the
        run's settings take it whole: :mod:`~wikiorigin.evaluators.signature`). ``model``
        names it in the signature (by default :func:`model_name`); the rest is the model's own
        (``dtype``, ``device``, ``template``, ``base_url``, ``tokenizer``, ...). What holds
        for one capability only goes under that capability's name (``generate``,
        ``loglikelihood``, ``token_logprobs``: a dict), and joins the settings of the runs
        that use it (a chat template is signed when the model generates, not when it scores
        texts)."""
        ...


@runtime_checkable
class GeneratingModel(Described, Protocol):
    """A model that answers prompts: multiple choice in generation mode, free-form answers,
    answers for a judge."""

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


@runtime_checkable
class LoglikelihoodModel(Described, Protocol):
    """A model that scores continuations: multiple choice in log-likelihood mode."""

    def loglikelihood(self, requests: list[tuple[str, str]], *, batch_size: int | None = None) -> list[Any]:
        """For each ``(context, continuation)``: the continuation's summed log-probability
        after the context, and whether greedy decoding would produce it (None for a request
        that failed)."""
        ...


@runtime_checkable
class TokenLogprobsModel(Described, Protocol):
    """A model that scores every token of texts: the leakage check."""

    def token_logprobs(self, texts: list[str], *, windows: str = "overlap", stride: int | None = None) -> list[Any]:
        """Every token's log-probability in each text (texts longer than the model's context
        in ``windows``, each predicting ``stride`` tokens; None for a text that failed)."""
        ...


@runtime_checkable
class Judge(Protocol):
    """The LLM that rates answers (CARE's judge): an :class:`~wikiorigin.llm.LLMClient`, or
    anything that runs its chat requests, says how it sends ``params`` and describes itself
    (``model``: ``NAME@HOST``, signed as the run's ``judge``)."""

    def run(self, requests: list[Any]) -> list[Any]:
        """One result per :class:`~wikiorigin.llm.ChatRequest`, in order (``text``, ``error``)."""
        ...

    def params(self, params: dict) -> dict:
        """The sampling parameters as they are sent (a reasoning effort replaces some)."""
        ...

    def describe(self) -> dict[str, Any]:
        """What rates, as :meth:`Described.describe` (``model``: ``NAME@HOST``)."""
        ...


@runtime_checkable
class EvaluatedModel(Described, Protocol):
    """Any model under evaluation (the name kept from when one Protocol asked for every
    capability): it describes itself; each task checks the capability it needs
    (:class:`GeneratingModel`, :class:`LoglikelihoodModel`, :class:`TokenLogprobsModel`)."""


AnyModel = GeneratingModel | LoglikelihoodModel | TokenLogprobsModel
"""A model with at least one capability, for type annotations."""

CAPABILITIES: dict[str, tuple[type, str]] = {
    "generate": (GeneratingModel, "generate() (generation)"),
    "loglikelihood": (LoglikelihoodModel, "loglikelihood() (log-likelihoods)"),
    "token_logprobs": (TokenLogprobsModel, "token_logprobs() (token log-probabilities)"),
}
"""Each capability a task may need: its Protocol and how an error names it."""


class MissingCapability(ParameterError, TypeError):
    """A model given to a task that lacks what the task needs (a capability, or
    ``describe()``): one line, before anything runs. A :class:`TypeError` too."""


def require(model: object, capability: str, what: str) -> None:
    """Refuse ``model`` for ``what`` (a task, a mode) unless it has ``capability`` (a key of
    :data:`CAPABILITIES`) and describes itself."""
    protocol, said = CAPABILITIES[capability]
    kind = type(model).__name__
    if not callable(getattr(model, capability, None)):
        raise MissingCapability("model", f"{what} needs a model with {said}; {kind} has none")
    if not callable(getattr(model, "describe", None)):
        raise MissingCapability(
            "model",
            f"{what}: {kind} does not describe itself: give it describe() -> dict "
            "(what identifies it and how it runs; the run's signature)",
        )
    if not isinstance(model, protocol):  # pragma: no cover - the two checks above are the protocol's
        raise MissingCapability("model", f"{what} needs a model with {said}; {kind} has none")


def model_name(model: object, description: dict[str, Any] | None = None) -> str:
    """The name of a model in the items and summaries: its ``name`` attribute, else its
    description's (``description``, else its ``describe()``) ``name`` or ``model``, else its
    class's name."""
    name = getattr(model, "name", None)
    if isinstance(name, str) and name:
        return name
    if description is None:
        describe = getattr(model, "describe", None)
        description = describe() if callable(describe) else {}
    for key in ("name", "model"):
        value = description.get(key) if isinstance(description, dict) else None
        if isinstance(value, str) and value:
            return value
    return type(model).__name__


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
