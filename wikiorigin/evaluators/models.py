"""Models under evaluation: a local causal LM (transformers + torch) or an OpenAI-compatible
endpoint, behind the same ``generate``, ``loglikelihood`` and ``token_logprobs`` calls (an
endpoint's log-probabilities from ``/v1/completions`` with ``echo``:
:mod:`~wikiorigin.evaluators.completions`), each describing itself (``describe()``: what
identifies it and how it runs, the signature's part of the model).

:class:`LocalModel` loads a model from a local path; the device is CUDA, then MPS, then CPU
(bf16 on CUDA, float32 elsewhere). It does three things in batches:

- ``generate(prompts)``: left-padded batched generation, the prompt wrapped in the model's chat
  template when it has one (``chat=False`` sends the raw prompt);
- ``loglikelihood([(context, continuation), ...])``: the summed log-probability of each
  continuation and whether greedy decoding would produce it, with the numbers of
  lm-evaluation-harness's ``hf`` model (``HFLM.loglikelihood``, lm-eval 0.4) at its defaults:
  the same special tokens (the tokenizer's own, so a Llama-style tokenizer's ``<s>``; see
  ``add_bos``), the same cut between context and continuation, the same truncation (see
  :func:`~wikiorigin.evaluators.loglikelihood.split_many` for the one case where we differ: a
  token spanning the cut). Requests are sorted by length, one forward pass per batch;
  continuations that share a context (a question's options) share one pass over it, its
  key/value cache reused, and the output layer runs at the continuations' real steps only;
- ``token_logprobs(texts)``: every token's log-probability, texts longer than the model's
  context in windows: lm-eval's disjoint windows (``loglikelihood_rolling``) or overlapping
  ones (perplexity, Min-K%).

The batch size starts at ``max_batch_size`` and halves on out-of-memory until a batch fits.
torch and transformers are imported when a model is loaded, never on import of this module.

:class:`LocalModel` is one loaded model (:class:`~wikiorigin.evaluators.runner.LoadedModel`,
on the loader it shares with the transformers chat backend, :mod:`wikiorigin.llm.hf`) and the
parts that take it: :class:`~wikiorigin.evaluators.generation.Generator`,
:class:`~wikiorigin.evaluators.loglikelihood.LoglikelihoodScorer`,
:class:`~wikiorigin.evaluators.token_logprobs.TokenScorer`.
"""

from __future__ import annotations

import json
from typing import Any

from ..llm.hf import pick_device
from .completions import EchoScoring
from .generation import Generator, Response
from .loglikelihood import LoglikelihoodScorer
from .runner import THINKING, Encoder, LoadedModel
from .signature import context_bos, model_revision, text_hash
from .token_logprobs import WINDOWS, TokenScorer

__all__ = ["LocalModel", "EndpointModel", "pick_device", "WINDOWS"]


class LocalModel:
    """A causal LM from a local directory (a transformers checkpoint).

    ``add_bos`` says which special tokens begin a scored context (log-likelihood mode):
    ``None`` (default) the tokenizer's own, as lm-evaluation-harness's ``hf`` model does by
    default (``add_special_tokens`` left to the tokenizer: ``<s>`` for Llama-style tokenizers,
    nothing for GPT-2-style ones); ``False`` none (lm-eval's ``add_bos_token=False``);
    ``True`` the tokenizer's, and the BOS token (EOS where there is none) in front if they do
    not begin with it. lm-eval's ``add_bos_token=True`` only asks the tokenizer for its special
    tokens, which is ``None`` here for every tokenizer that adds ``<s>`` by itself and adds
    nothing for a GPT-2-style one. A context that already starts with the BOS token's text
    gets no second one (as in lm-eval). ``thinking`` switches a chat template's reasoning on
    or off (:meth:`set_thinking`)."""

    def __init__(
        self,
        path,
        *,
        device: str | None = "auto",
        dtype: str = "auto",
        max_batch_size: int = 32,
        max_length: int | None = None,
        chat: bool = True,
        share_context: bool = True,
        add_bos: bool | None = None,
        thinking: str = "template-default",
    ):
        if add_bos not in (None, True, False):
            raise ValueError(f"LocalModel: add_bos must be None, True or False, got {add_bos!r}")
        if thinking not in THINKING:  # before the model is loaded; set_thinking checks the template
            raise ValueError(f"LocalModel: thinking must be one of {', '.join(THINKING)}, not {thinking!r}")
        self.loaded = LoadedModel(
            path, device=device, dtype=dtype, max_batch_size=max_batch_size, max_length=max_length
        )
        self.encoder = Encoder(self.loaded.tokenizer, add_bos)
        self.generator = Generator(self.loaded, chat, thinking)
        self.scorer = LoglikelihoodScorer(self.loaded, self.encoder, share_context)
        self.texts = TokenScorer(self.loaded, self.encoder)

    # -- what it is -------------------------------------------------------------------------

    @property
    def name(self) -> str:
        """The model's name in reports: its directory's name."""
        return self.loaded.name

    def describe(self) -> dict[str, Any]:
        """What identifies the model and how it runs: ``model`` (``NAME@REVISION``:
        :func:`~wikiorigin.evaluators.signature.model_revision`), ``dtype``, ``device``,
        ``max_length``; for generation the ``template`` (``chat@`` its hash, or ``raw``), the
        ``thinking`` switch (a template that has one) and ``bos`` (``template``: the chat
        template writes the special tokens; ``tokenizer``: a raw prompt gets the tokenizer's);
        for log-likelihoods ``bos`` (from ``add_bos``) and ``split`` (``whole``); for token
        log-probabilities ``bos`` ``always``."""
        loaded = self.loaded
        config = getattr(loaded.model, "config", None)
        revision = model_revision(loaded.path, getattr(config, "_commit_hash", None))
        template = self.tokenizer.chat_template
        if self.chat and template:
            shown = f"chat@{text_hash(template if isinstance(template, str) else json.dumps(template))}"
        else:
            shown = "raw"
        thinking = {"thinking": self.thinking_mode} if self.thinking_mode else {}
        return {
            "model": f"{self.name}@{revision}",
            "dtype": str(loaded.model.dtype).removeprefix("torch."),
            "device": str(loaded.device),
            "max_length": loaded.max_length,
            "generate": {"template": shown, **thinking, "bos": "template" if self.chat else "tokenizer"},
            "loglikelihood": {"bos": context_bos(self.add_bos), "split": "whole"},
            "token_logprobs": {"bos": "always"},
        }

    # -- the loaded model's state, as it was read before the parts were apart -------------------

    @property
    def tokenizer(self) -> Any:
        return self.loaded.tokenizer

    @property
    def model(self) -> Any:
        return self.loaded.model

    @property
    def device(self) -> str:
        return self.loaded.device

    @property
    def path(self):
        return self.loaded.path

    @property
    def max_length(self) -> int:
        return self.loaded.max_length

    @property
    def batch_size(self) -> int:
        """The rows a batch starts with (halved, and remembered, on out-of-memory)."""
        return self.loaded.batch_size

    @property
    def add_bos(self) -> bool | None:
        return self.encoder.add_bos

    @property
    def share_context(self) -> bool:
        return self.scorer.share_context

    @property
    def cut_inside_token(self) -> int:
        """Requests whose context ended inside a token (see
        :func:`~wikiorigin.evaluators.loglikelihood.split_many`)."""
        return self.scorer.cut_inside_token

    # -- generation ---------------------------------------------------------------------------

    @property
    def chat(self) -> bool:
        return self.generator.chat

    @property
    def thinking(self) -> str:
        return self.generator.thinking

    @property
    def can_think(self) -> bool:
        """Whether the chat template in use takes ``enable_thinking``."""
        return self.generator.can_think

    @property
    def thinking_mode(self) -> str | None:
        """The ``thinking`` switch as runs record it: None for a template without one."""
        return self.generator.thinking_mode

    def set_thinking(self, mode: str) -> None:
        """Switch the chat template's reasoning (:meth:`Generator.set_thinking`)."""
        self.generator.set_thinking(mode)

    def format_prompt(self, prompt: str, system: str | None = None) -> str:
        """``prompt`` as the model sees it (:meth:`Generator.format_prompt`)."""
        return self.generator.format_prompt(prompt, system)

    def generate(
        self,
        prompts: list[str],
        *,
        max_new_tokens: int = 128,
        temperature: float = 0.1,
        top_p: float = 1.0,
        seed: int = 0,
        system: str | None = None,
        batch_size: int | None = None,
    ) -> list[Response]:
        """One :class:`~wikiorigin.evaluators.generation.Response` per prompt
        (:meth:`Generator.generate`)."""
        return self.generator.generate(
            prompts,
            max_new_tokens=max_new_tokens,
            temperature=temperature,
            top_p=top_p,
            seed=seed,
            system=system,
            batch_size=batch_size,
        )

    # -- scoring ------------------------------------------------------------------------------

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text``, without special tokens."""
        return self.encoder.encode(text)

    def encode_many(self, texts: list[str]) -> list[list[int]]:
        """Token ids of many texts, without special tokens."""
        return self.encoder.encode_many(texts)

    def encode_contexts(self, texts: list[str]) -> list[list[int]]:
        """Token ids of texts that begin a scored sequence (:meth:`Encoder.encode_contexts`)."""
        return self.encoder.encode_contexts(texts)

    def loglikelihood(
        self, requests: list[tuple[str, str]], *, batch_size: int | None = None
    ) -> list[tuple[float, bool]]:
        """``(sum of log-probabilities, greedy)`` of each continuation given its context
        (:meth:`LoglikelihoodScorer.loglikelihood`)."""
        return self.scorer.loglikelihood(requests, batch_size=batch_size)

    def loglikelihood_tokens(
        self, pairs: list[tuple[list[int], list[int]]], *, batch_size: int | None = None
    ) -> list[tuple[float, bool]]:
        """:meth:`loglikelihood` on token ids (``(context ids, continuation ids)`` pairs)."""
        return self.scorer.loglikelihood_tokens(pairs, batch_size=batch_size)

    def token_logprobs(
        self, texts: list[str], *, windows: str = "disjoint", stride: int | None = None, batch_size: int | None = None
    ) -> list[list[float]]:
        """Each text's tokens' log-probabilities (:meth:`TokenScorer.token_logprobs`)."""
        return self.texts.token_logprobs(texts, windows=windows, stride=stride, batch_size=batch_size)

    def _split_many(self, requests: list[tuple[str, str]]) -> list[tuple[list[int], list[int]]]:
        return self.scorer.split_many(requests)

    def _split(self, context: str, continuation: str) -> tuple[list[int], list[int]]:
        return self.scorer.split_many([(context, continuation)])[0]

    def _prefix(self) -> int:
        return self.encoder.prefix()


class EndpointModel(EchoScoring):
    """An OpenAI-compatible chat endpoint (or any :class:`~wikiorigin.llm.LLMClient`) as the
    model under evaluation; answers are cached like the builders' calls. A request that failed
    after its retries gives ``None``.

    ``loglikelihood`` and ``token_logprobs`` ask the server's ``/v1/completions`` with ``echo``
    and ``logprobs`` (:mod:`~wikiorigin.evaluators.completions`), cached per prompt,
    ``batch_size`` prompts a request: with ``tokenizer`` (the served model's,
    :func:`~wikiorigin.evaluators.completions.load_tokenizer`) prompts are token ids cut as
    :class:`LocalModel` cuts them (``add_bos`` as its; ``max_length``: its truncation and
    windows; by default the server's ``max_model_len`` less 2), else texts cut at the
    server's text offsets (each must fit ``max_length``)."""

    def describe(self) -> dict[str, Any]:
        """What identifies the model and how it runs: ``model`` (``NAME@HOST``), ``base_url``
        (normalised: one server however it is typed), ``max_length`` where it is known (the
        context its texts are scored in); for generation ``template`` ``server`` and the
        ``reasoning_effort`` asked; for log-probabilities the ``tokenizer`` the prompts were
        cut with, or the server's special tokens (``bos`` ``server``) and its text offsets
        (``split`` ``offsets``)."""
        described = self.client.describe()
        effort = described.pop("reasoning_effort", None)
        if self.max_length:
            described["max_length"] = self.max_length
        return {
            **described,
            "generate": {"template": "server", **({"reasoning_effort": effort} if effort else {})},
            **self.scoring_description(),
        }

    def generate(
        self,
        prompts: list[str],
        *,
        max_new_tokens: int = 128,
        temperature: float = 0.1,
        top_p: float = 1.0,
        seed: int = 0,
        system: str | None = None,
        batch_size: int | None = None,
    ) -> list:
        """One answer per prompt (in order) from the endpoint, through the client's cache, retries
        and limits; None for a request that failed. Each is a
        :class:`~wikiorigin.evaluators.generation.Response`: the message's ``content`` (a server
        that returns the reasoning apart, as ``reasoning_content``, leaves it out) and the
        server's ``finish_reason``; one stopped by the token limit (``length``) comes back
        ``truncated``, to be counted as no answer, not failed. ``system`` is an optional system
        message; ``batch_size`` is accepted for the interface of :class:`LocalModel` and not used."""
        from ..llm import ChatRequest

        params = {"temperature": temperature, "max_tokens": max_new_tokens, "top_p": top_p, "seed": seed}
        results = self.client.run(
            [
                ChatRequest(
                    ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": p}],
                    params,
                    "eval",
                    truncated_ok=True,
                )
                for p in prompts
            ]
        )
        return [None if r.error else Response(r.text or "", r.finish_reason) for r in results]
