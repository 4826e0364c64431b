"""Log-probabilities through an OpenAI-compatible server: the log-likelihood mode and the
leakage check of :class:`~wikiorigin.evaluators.models.EndpointModel`, asked of
``/v1/completions`` as lm-evaluation-harness's ``local-completions`` model asks.

Each prompt is sent with :data:`ECHO_PARAMS` (``echo``, ``logprobs=1``, ``max_tokens=1``,
``temperature=0``): the server answers with every prompt token's log-probability given the
tokens before it (``token_logprobs``, ``null`` for the first), the most likely token's at each
step (``top_logprobs``, for ``greedy``), each token's text and where it starts
(``text_offset``); the token generated after the prompt is dropped. A prompt is either

- **token ids**, with the served model's ``tokenizer`` loaded here (lm-eval's
  ``tokenized_requests=True``): context and continuation are cut by the code local mode uses
  (:func:`~wikiorigin.evaluators.loglikelihood.split_many` on
  :meth:`~wikiorigin.evaluators.runner.Encoder.encode_contexts`: the same special tokens,
  ``add_bos``, the same cut), texts get local mode's BOS and windows
  (:func:`~wikiorigin.evaluators.token_logprobs.window_jobs`) of the server's context
  (:meth:`EchoScoring.context`: ``max_length``, else the ``max_model_len`` that vLLM lists in
  ``/v1/models``, less 2; signed ``ctx``), so the numbers are local mode's for the same
  weights and context; or
- **text**, without a tokenizer: the server encodes the text with its own special tokens, and
  the continuation is its tokens from the one holding the (right-stripped) context's end: the
  first token that starts at or after it or reaches past it (a token spanning the cut is
  scored with the continuation, as local mode does, and counted in ``cut_inside_token``).
  Positions are ``text_offset`` counted back from the end of the prompt, so text a server
  shows before the prompt (``<s>``) moves nothing. The answer is checked: the tokens' texts
  must spell the prompt and the offsets follow the texts, else the run stops and asks for
  ``--tokenizer``. A whole text (the leakage check; a log-likelihood without context) is
  every token after the one the server puts before it, when it does (a BOS: Llama-style
  tokenizers), so as local mode scores it; a server that puts none gives the text's first
  token no log-probability: the leakage check scores from the second token on
  (``unscored_first`` counts them), and a log-likelihood without context is an error.

Prompts go ``batch_size`` to a request (the API takes a list) and ``concurrency`` requests at a
time, through the LLM client's cache, one entry per prompt (a re-run, with any batch size,
makes no request), its retries, timeouts and bounded waits, and its usage counters. Before
the first request the endpoint is checked and one prompt goes alone: a server that refuses
``echo`` or ``logprobs``, or answers without the prompt's log-probabilities (llama.cpp's own
server), is an :class:`~wikiorigin.llm.EndpointError` before anything is scored; a prompt
that gets no answer after its retries (an outage, a request refused) is left unscored (None:
its question or article a failed item, the run incomplete), the answers got being cached, so
that the next run asks only the unscored.

Every number is checked: a log-probability that is NaN, infinite, above 0 (beyond float
rounding) or missing after the first token, or such a most likely token's, or values whose sum
over the prompt is not finite (``-1e308`` a token), refuses that
answer (the model, the prompt's first characters and the token in one line), never retried
(a server at temperature 0 gives it again) and never cached (an impossible answer cached by
an earlier version is asked again). It is an :class:`~wikiorigin.llm.EndpointError`, exit 2,
not a failed item: a server that returns impossible numbers is the environment (a broken
model or dtype), every figure of the run would rest on it, and leaving its texts out would
change which texts are compared.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import ParameterError, WikioriginError
from ..llm.cache import request_key
from ._echo import _Impossible, _possible, _summed, _text_start, continuation_start  # the answer's checks and sums
from ._echo_calls import ECHO_PARAMS, fetch, in_order, run_sync, served_context
from .loglikelihood import split_many, warn_spanning
from .runner import Encoder
from .signature import context_bos
from .token_logprobs import WINDOWS, window_jobs, window_step

__all__ = ["ECHO_PARAMS", "EchoScoring", "load_tokenizer", "continuation_start"]

_in_order = in_order  # the name tests and callers knew
_VERSION = "completions-echo/1"  # the cache's prompt version of a scored prompt


def load_tokenizer(path):
    """The tokenizer in the local directory ``path`` (the served model's: its
    ``tokenizer.json`` and configuration), for prompts sent as token ids; a one-line
    :class:`~wikiorigin.errors.WikioriginError` when there is none."""
    from ..llm.hf import require_torch

    require_torch("a tokenizer for an endpoint model")
    from transformers import AutoTokenizer

    if not Path(path).is_dir():
        raise ParameterError(
            "tokenizer", "{tokenizer}: no such directory (the served model's tokenizer files)", str(path)
        )
    try:
        return AutoTokenizer.from_pretrained(path)
    except (ValueError, OSError, KeyError) as exc:
        first = next((line.strip() for line in str(exc).splitlines() if line.strip()), type(exc).__name__)
        raise ParameterError(
            "tokenizer", "{tokenizer}: transformers cannot load a tokenizer there (" + first + ")", str(path)
        ) from None


class EchoScoring:
    """The log-probabilities of :class:`~wikiorigin.evaluators.models.EndpointModel` (see the
    module docstring): on ``client`` (an :class:`~wikiorigin.llm.LLMClient` of an
    OpenAI-compatible backend), with ``tokenizer`` (None: prompts as text), ``add_bos`` (as
    :class:`~wikiorigin.evaluators.models.LocalModel`'s; token ids only), ``max_length`` (token
    ids: contexts cut and texts windowed as local mode does at that length; at most the
    server's context minus 2), ``batch_size`` prompts per request."""

    def __init__(
        self,
        client: Any,
        *,
        tokenizer: Any = None,
        add_bos: bool | None = None,
        max_length: int | None = None,
        batch_size: int = 16,
    ):
        who = type(self).__name__
        if add_bos not in (None, True, False):
            raise ValueError(f"{who}: add_bos must be None, True or False, got {add_bos!r}")
        if tokenizer is None and add_bos is not None:
            raise ValueError(
                f"{who}: add_bos needs a tokenizer (prompts as token ids); "
                "a text prompt gets the server's own special tokens"
            )
        if not isinstance(batch_size, int) or batch_size < 1 or (max_length is not None and max_length < 1):
            raise ValueError(
                f"{who}: batch_size and max_length must be whole numbers > 0, got {batch_size!r} and {max_length!r}"
            )
        self.client = client
        self.name: str = client.backend.model
        self.tokenizer, self.add_bos, self.max_length, self.batch_size = tokenizer, add_bos, max_length, batch_size
        self.encoder = None if tokenizer is None else Encoder(tokenizer, add_bos)
        self.cut_inside_token = 0  # text prompts whose context ended inside a token
        self.unscored_first = 0  # texts whose first token the server gave no log-probability
        self.checked = False  # the endpoint asked once (_echo_calls)

    def scoring_description(self) -> dict[str, dict]:
        """How log-probabilities are scored, by capability (the model's description): token
        ids name the ``tokenizer`` (its directory's name) and, for log-likelihoods, ``bos``
        from ``add_bos`` and ``split`` ``whole``; text prompts have the server's special
        tokens (``bos: server``) and, for log-likelihoods, the cut at the text offsets
        (``split: offsets``)."""
        if self.tokenizer is not None:
            named = {"tokenizer": Path(str(self.tokenizer.name_or_path)).name}
            return {
                "loglikelihood": {**named, "bos": context_bos(self.add_bos), "split": "whole"},
                "token_logprobs": {**named, "bos": "always"},
            }
        return {"loglikelihood": {"bos": "server", "split": "offsets"}, "token_logprobs": {"bos": "server"}}

    # -- log-likelihoods -------------------------------------------------------------------

    def loglikelihood(
        self, requests: list[tuple[str, str]], *, batch_size: int | None = None
    ) -> list[tuple[float, bool] | None]:
        """``(sum of log-probabilities, greedy)`` of each continuation given its context, as
        local mode computes them (see the module docstring for the two kinds of prompt); None
        for a request whose prompt got no answer after its retries (:meth:`echo`)."""
        if self.encoder is None:
            return self._loglikelihood_text(requests, batch_size)
        pairs, spanning = split_many(self.encoder, requests)
        if spanning:
            self.cut_inside_token += spanning
            warn_spanning(type(self).__name__, spanning, len(requests))
        length = self.context()
        prompts = []
        for i, ((context, continuation), (head, tail)) in enumerate(zip(requests, pairs)):
            if not tail:
                raise ValueError(
                    f"{type(self).__name__}.loglikelihood: request {i}: the continuation "
                    f"{continuation!r} has no tokens after the context ending {context[-40:]!r}"
                )
            whole = head + tail
            prompts.append(whole[-(length + 1) :])
        scored = self.echo(prompts, batch_size)
        return [
            None if s is None else _summed(s, max(1, len(p) - len(tail)), len(p))
            for s, p, (_, tail) in zip(scored, prompts, pairs)
        ]

    def _loglikelihood_text(self, requests, batch_size) -> list[tuple[float, bool] | None]:
        self.context()
        scored = self._fitting(self.echo([context + continuation for context, continuation in requests], batch_size))
        out: list[tuple[float, bool] | None] = []
        spanning = 0
        for i, ((context, continuation), s) in enumerate(zip(requests, scored)):
            if s is None:  # no answer after its retries
                out.append(None)
                continue
            cut = len(context.rstrip())
            first = continuation_start(s, cut) if cut else _text_start(s)  # no context: the whole text
            if first == len(s["text"]):
                raise ValueError(
                    f"{type(self).__name__}.loglikelihood: request {i}: the continuation "
                    f"{continuation!r} has no tokens after the context ending {context[-40:]!r}"
                )
            if s["logprob"][first] is None:
                raise ParameterError(
                    "tokenizer",
                    f"{self.name}: the server gives the first token of a text no "
                    f"log-probability (it puts no BOS before it), and request {i}'s continuation "
                    "starts there: give {tokenizer} (prompts as token ids, with local mode's BOS)",
                )
            spanning += s["start"][first] < cut
            out.append(_summed(s, first, len(s["text"])))
        if spanning:
            self.cut_inside_token += spanning
            warn_spanning(type(self).__name__, spanning, len(requests))
        return out

    # -- every token of a text -------------------------------------------------------------

    def token_logprobs(
        self, texts: list[str], *, windows: str = "disjoint", stride: int | None = None, batch_size: int | None = None
    ) -> list[list[float] | None]:
        """Each text's tokens' log-probabilities, as
        :meth:`~wikiorigin.evaluators.token_logprobs.TokenScorer.token_logprobs` gives them
        with token ids: the text after the BOS token (EOS where there is none), in ``windows``
        of ``max_length`` (:meth:`context`). As text: the server's own special tokens, each
        text whole (one longer than the context is an error asking for a tokenizer), its first token
        left out when the server gives it no log-probability (counted in ``unscored_first``).
        None for a text of which a prompt got no answer after its retries (:meth:`echo`)."""
        if windows not in WINDOWS:
            raise ValueError(f"{type(self).__name__}.token_logprobs: windows must be one of {WINDOWS}, got {windows!r}")
        if stride is not None and windows == "disjoint":
            raise ValueError(f"{type(self).__name__}.token_logprobs: stride is for windows='overlap' only")
        length, encoder = self.context(), self.encoder
        if encoder is None:
            return self._token_logprobs_text(texts, batch_size)
        sequences = [[encoder.prefix()] + ids for ids in encoder.encode_many(texts)]
        step = window_step(windows, stride, length, f"{type(self).__name__}.token_logprobs")
        jobs = window_jobs(sequences, step, length)
        prompts = [inputs + targets[-1:] for _, inputs, targets in jobs]
        out: list[list[float] | None] = [[] for _ in texts]
        for (t, _, targets), prompt, s in zip(jobs, prompts, self.echo(prompts, batch_size)):
            if s is None:  # a window unscored: the text is
                out[t] = None
                continue
            kept = out[t]
            if kept is not None:
                kept.extend(s["logprob"][len(prompt) - len(targets) :])
        return out

    def _token_logprobs_text(self, texts: list[str], batch_size: int | None) -> list[list[float] | None]:
        """Each text whole, as the server encodes it (its first token left out when the server
        gives it no log-probability)."""
        out: list[list[float] | None] = []
        for s in self._fitting(self.echo(list(texts), batch_size)):
            if s is None:
                out.append(None)
                continue
            values = s["logprob"][_text_start(s) :]
            if values and values[0] is None:
                values = values[1:]
                self.unscored_first += 1
            out.append(values)
        return out

    # -- the server's context ----------------------------------------------------------------

    def context(self) -> int:
        """``max_length``: as given, else the ``max_model_len`` the server lists for the model
        in ``/v1/models`` (vLLM) less 2 (a window's prompt is ``max_length`` + 1 tokens, and one
        token is generated), read once with the endpoint check. A server that lists none is
        a :class:`~wikiorigin.errors.ParameterError` asking for ``max_length``, before any
        prompt is scored: windows, truncation and the signature's ``ctx`` rest on it, and a
        text longer than the context sent whole gives another number or a refusal."""
        if self.max_length is None:
            served = run_sync(served_context(self))
            if served is None or served < 3:
                raise ParameterError(
                    "max_length",
                    f"{self.client.backend.url}: the server lists no context length for the model "
                    f"{self.name!r} (max_model_len in /models, as vLLM does): give {{max_length}} "
                    "(the model's context in tokens) so that long texts are scored in windows",
                )
            self.max_length = served - 2
        return self.max_length

    def _fitting(self, scored: list[dict | None]) -> list[dict | None]:
        """Scored text prompts, each checked to fit the context: a text cannot be cut into
        windows without the tokenizer (the server would refuse it, or score it past its context)."""
        length = self.context()
        for i, s in enumerate(scored):
            if s is not None and len(s["text"]) > length + 1:
                text = "".join(s["text"])
                raise ParameterError(
                    "tokenizer",
                    f"{self.name}: prompt {i} ({text[:40]!r}...) is {len(s['text'])} tokens, longer than the "
                    f"context of {self.max_length}: give {{tokenizer}} (prompts as token ids) to score it in windows",
                )
        return scored

    # -- the requests ----------------------------------------------------------------------

    def _key(self, prompt) -> str:
        backend = self.client.backend
        return request_key(backend.key, backend.model, [{"prompt": prompt}], ECHO_PARAMS, _VERSION)

    def echo(self, prompts: list, batch_size: int | None = None) -> list[dict | None]:
        """Each prompt (a text, or token ids) as the server scored it, through the cache: its
        tokens' ``text``, ``logprob`` (None for the first), ``best`` (the most likely token's
        log-probability at that step, None when not given) and ``start`` (where a token's text
        starts in a text prompt: counted from the prompt's end, so a token the server puts
        before the text starts before 0). A prompt that got no answer after its retries (the
        server down, a request refused) is None: counted in the client's ``usage.failures``
        (its first error in ``first_error``) and asked again by the next run, the answers got
        being cached."""
        client = self.client
        if not hasattr(client.backend, "base_url"):
            raise WikioriginError(
                f"{self.name}: log-probabilities need an OpenAI-compatible server "
                "(/v1/completions), not a local chat backend"
            )
        keys = [self._key(p) for p in prompts]
        found: dict[str, dict] = {}
        for key in dict.fromkeys(keys):
            hit = client.cache.get(key) if client.cache is not None else None
            if hit is not None and _possible(hit):
                found[key] = hit
            elif hit is not None:  # torn, or impossible (cached before): asked again, replaced
                client.cache.damaged(key, "not a whole answer of possible log-probabilities")
        client.usage.requests += len(prompts)
        client.usage.cache_hits += sum(k in found for k in keys)
        todo = {k: p for k, p in zip(keys, prompts) if k not in found}
        if todo:
            found.update(run_sync(fetch(self, todo, batch_size or self.batch_size)))
        return [found.get(k) for k in keys]

    def impossible(self, prompt, exc: _Impossible) -> str:
        """What a refused answer says: the model, the prompt (its first characters) and the
        token, and why no number of it is used."""
        text = self.tokenizer.decode(prompt[:40]) if isinstance(prompt, list) else prompt
        return (
            f"the model {self.client.backend.model!r} gave an impossible log-probability, {exc}, "
            f"for the prompt {text[:40]!r}{'...' if len(text) > 40 else ''}: log-probabilities are "
            "finite and at most 0 (a server in a broken state, or its dtype overflowing); "
            "nothing of that answer is kept or cached"
        )
