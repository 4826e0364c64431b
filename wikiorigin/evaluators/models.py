"""Models under evaluation: a local causal LM (transformers + torch) or an OpenAI-compatible
endpoint, behind the same ``generate``, ``loglikelihood`` and ``token_logprobs`` calls (an
endpoint's log-probabilities from ``/v1/completions`` with ``echo``:
:mod:`~wikiorigin.evaluators.completions`).

:class:`LocalModel` loads a model from a local path; the device is CUDA, then MPS, then CPU
(bf16 on CUDA, float32 elsewhere). It does three things in batches:

- ``generate(prompts)``: left-padded batched generation, the prompt wrapped in the model's chat
  template when it has one (``chat=False`` sends the raw prompt);
- ``loglikelihood([(context, continuation), ...])``: the summed log-probability of each
  continuation and whether greedy decoding would produce it, with the numbers of
  lm-evaluation-harness's ``hf`` model (``HFLM.loglikelihood``, lm-eval 0.4) at its defaults:
  the same special tokens (the tokenizer's own, so a Llama-style tokenizer's ``<s>``; see
  ``add_bos``), the same cut between context and continuation, the same truncation (see
  :meth:`LocalModel._split_many` for the one case where we differ: a token spanning the cut).
  Requests are sorted by length, one forward pass per batch; continuations that share a
  context (a question's options) share one pass over it, its key/value cache reused, and the
  output layer runs at the continuations' real steps only;
- ``token_logprobs(texts)``: every token's log-probability, texts longer than the model's
  context in windows: lm-eval's disjoint windows (``loglikelihood_rolling``) or overlapping
  ones (perplexity, Min-K%).

The batch size starts at ``max_batch_size`` and halves on out-of-memory until a batch fits.
torch and transformers are imported when a model is loaded, never on import of this module.

:class:`LocalModel` is put together from one module per concern: loading and batching
(:mod:`~wikiorigin.evaluators.runner`, on the loader it shares with the transformers chat
backend, :mod:`wikiorigin.llm.hf`), log-likelihoods (:mod:`~wikiorigin.evaluators.loglikelihood`),
per-token log-probabilities (:mod:`~wikiorigin.evaluators.token_logprobs`) and generation
(:mod:`~wikiorigin.evaluators.generation`).
"""

from __future__ import annotations

from ..llm.hf import pick_device
from .completions import EchoScoring
from .generation import Generation
from .loglikelihood import LoglikelihoodScoring
from .runner import ModelRunner
from .token_logprobs import WINDOWS, TokenLogprobs

__all__ = ["LocalModel", "EndpointModel", "pick_device", "WINDOWS"]


class LocalModel(LoglikelihoodScoring, TokenLogprobs, Generation, ModelRunner):
    """A causal LM from a local directory (a transformers checkpoint).

    ``add_bos`` says which special tokens begin a scored context (log-likelihood mode):
    ``None`` (default) the tokenizer's own, as lm-evaluation-harness's ``hf`` model does by
    default (``add_special_tokens`` left to the tokenizer: ``<s>`` for Llama-style tokenizers,
    nothing for GPT-2-style ones); ``False`` none (lm-eval's ``add_bos_token=False``);
    ``True`` the tokenizer's, and the BOS token (EOS where there is none) in front if they do
    not begin with it. lm-eval's ``add_bos_token=True`` only asks the tokenizer for its special
    tokens, which is ``None`` here for every tokenizer that adds ``<s>`` by itself and adds
    nothing for a GPT-2-style one. A context that already starts with the BOS token's text
    gets no second one (as in lm-eval)."""


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

    def __init__(
        self,
        client,
        *,
        tokenizer=None,
        add_bos: bool | None = None,
        max_length: int | None = None,
        batch_size: int = 16,
    ):
        self.client = client
        self.name = client.backend.model
        self._setup_scoring(tokenizer, add_bos, max_length, batch_size)

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
        from .generation import Response

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
