"""What the client is asked and what it answers: :class:`ChatRequest` and :class:`ChatResult`,
and the parameters of reasoning models (:data:`REASONING_EFFORTS`, :data:`SAMPLING_PARAMS`).
Moved out of ``client.py``; ``wikiorigin.llm.client`` still exports these names."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["ChatRequest", "ChatResult", "REASONING_EFFORTS", "SAMPLING_PARAMS"]

REASONING_EFFORTS = ("minimal", "low", "medium", "high")
"""The values of ``reasoning_effort`` that OpenAI's reasoning models take."""

SAMPLING_PARAMS = (
    "temperature",
    "top_p",
    "presence_penalty",
    "frequency_penalty",
    "logprobs",
    "top_logprobs",
    "logit_bias",
    "n",
)
"""The parameters a request to a reasoning model goes without."""


@dataclass(slots=True)
class ChatRequest:
    """One chat request: the ``messages``, sampling ``params``, the ``prompt_version`` that keys
    the cache, and an optional JSON ``schema`` the answer must satisfy."""

    messages: list[dict]
    params: dict = field(default_factory=dict)
    prompt_version: str = ""
    schema: dict | None = None  # JSON schema the answer must satisfy
    truncated_ok: bool = False  # an answer cut off by the output limit is still an answer


@dataclass(slots=True)
class ChatResult:
    """The answer to one :class:`ChatRequest`: its ``text``, the parsed JSON (``data``, for a
    request with a schema), whether it came from the cache, the ``error`` of a request that
    failed (then ``text`` is None), and the tokens counted."""

    text: str | None
    data: object = None  # the parsed JSON, for requests with a schema
    cached: bool = False
    error: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    finish_reason: str | None = None
