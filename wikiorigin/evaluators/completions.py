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
  (:meth:`~wikiorigin.evaluators.loglikelihood.LoglikelihoodScoring._split_many` on
  :meth:`~wikiorigin.evaluators.runner.ModelRunner.encode_contexts`: the same special tokens,
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

import asyncio
import json
import os
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ..errors import ParameterError, WikioriginError
from ..llm.cache import request_key
from ..llm.openai_backend import EndpointError, RequestError, TransientError, _reason
from ..progress import Progress
from ..retry import Backoff, retry_after
from ._echo import (  # the answer's checks and sums
    _Impossible,
    _possible,
    _prompt_part,
    _summed,
    _text_start,
    _Unusable,
    continuation_start,
)
from .loglikelihood import LoglikelihoodScoring
from .runner import ModelRunner
from .token_logprobs import WINDOWS, TokenLogprobs, window_jobs

__all__ = ["ECHO_PARAMS", "EchoScoring", "load_tokenizer", "continuation_start"]

ECHO_PARAMS = {"echo": True, "logprobs": 1, "max_tokens": 1, "temperature": 0}
"""What each scoring request asks of ``/v1/completions`` besides the model and the prompts:
lm-evaluation-harness's ``local-completions`` payload (one token generated, then dropped)."""

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
    """The log-probability methods of :class:`~wikiorigin.evaluators.models.EndpointModel`
    (see the module docstring): on ``self.client`` (an :class:`~wikiorigin.llm.LLMClient` of
    an OpenAI-compatible backend), with the settings :meth:`_setup_scoring` records."""

    # local mode's encoding and cut, the same code on the tokenizer alone
    _prefix = ModelRunner._prefix
    encode = ModelRunner.encode
    encode_many = ModelRunner.encode_many
    encode_contexts = ModelRunner.encode_contexts
    _split_many = LoglikelihoodScoring._split_many
    _windows = TokenLogprobs._windows

    def _setup_scoring(self, tokenizer, add_bos: bool | None, max_length: int | None, batch_size: int) -> None:
        """Record how prompts are scored: ``tokenizer`` (None: as text), ``add_bos`` (as
        :class:`~wikiorigin.evaluators.models.LocalModel`'s; token ids only), ``max_length``
        (token ids: contexts cut and texts windowed as local mode does at that length; at most
        the server's context minus 2), ``batch_size`` prompts per request."""
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
        self.tokenizer, self.add_bos, self.max_length, self.batch_size = tokenizer, add_bos, max_length, batch_size
        self.cut_inside_token = 0  # text prompts whose context ended inside a token
        self.unscored_first = 0  # texts whose first token the server gave no log-probability
        self._checked = False

    def scoring_settings(self, task: str) -> dict:
        """The settings this endpoint's scoring changes in a run's record
        (:func:`~wikiorigin.evaluators.signature.mcq_settings`,
        :func:`~wikiorigin.evaluators.leakage.leakage_settings`), for ``task`` ``mcq`` or
        ``leakage``: token ids name the ``tokenizer`` (its directory's name); text prompts
        have the server's special tokens (``bos: server``) and, for ``mcq``, the cut at the
        text offsets (``split: offsets``)."""
        if task not in ("mcq", "leakage"):
            raise ValueError(f"{type(self).__name__}.scoring_settings: task is 'mcq' or 'leakage', not {task!r}")
        if self.tokenizer is not None:
            return {"tokenizer": Path(str(self.tokenizer.name_or_path)).name}
        return {"bos": "server", **({"split": "offsets"} if task == "mcq" else {})}

    # -- log-likelihoods -------------------------------------------------------------------

    def loglikelihood(
        self, requests: list[tuple[str, str]], *, batch_size: int | None = None
    ) -> list[tuple[float, bool] | None]:
        """``(sum of log-probabilities, greedy)`` of each continuation given its context, as
        local mode computes them (see the module docstring for the two kinds of prompt); None
        for a request whose prompt got no answer after its retries (:meth:`echo`)."""
        if self.tokenizer is None:
            return self._loglikelihood_text(requests, batch_size)
        pairs = self._split_many(requests)
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
        out, spanning = [], 0
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
            warnings.warn(
                f"{type(self).__name__}: {spanning} of {len(requests)} contexts end inside a token of "
                "context + continuation: those continuations are scored from the token boundary before it "
                "(lm-evaluation-harness would drop the token's characters or stop)",
                stacklevel=3,
            )
        return out

    # -- every token of a text -------------------------------------------------------------

    def token_logprobs(
        self, texts: list[str], *, windows: str = "disjoint", stride: int | None = None, batch_size: int | None = None
    ) -> list[list[float]]:
        """Each text's tokens' log-probabilities, as
        :meth:`~wikiorigin.evaluators.token_logprobs.TokenLogprobs.token_logprobs` gives them
        with token ids: the text after the BOS token (EOS where there is none), in ``windows``
        of ``max_length`` (:meth:`context`). As text: the server's own special tokens, each
        text whole (one longer than the context is an error asking for a tokenizer), its first token
        left out when the server gives it no log-probability (counted in ``unscored_first``).
        None for a text of which a prompt got no answer after its retries (:meth:`echo`)."""
        if windows not in WINDOWS:
            raise ValueError(f"{type(self).__name__}.token_logprobs: windows must be one of {WINDOWS}, got {windows!r}")
        if stride is not None and windows == "disjoint":
            raise ValueError(f"{type(self).__name__}.token_logprobs: stride is for windows='overlap' only")
        length = self.context()
        if self.tokenizer is None:
            out = []
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
        sequences = [[self._prefix()] + ids for ids in self.encode_many(texts)]
        jobs = window_jobs(sequences, self._windows(windows, stride), length)
        prompts = [inputs + targets[-1:] for _, inputs, targets in jobs]
        out: list[list[float] | None] = [[] for _ in texts]
        for (t, _, targets), prompt, s in zip(jobs, prompts, self.echo(prompts, batch_size)):
            if s is None or out[t] is None:  # a window unscored: the text is
                out[t] = None
                continue
            out[t].extend(s["logprob"][len(prompt) - len(targets) :])
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
            served = _run(self._served_context())
            if served is None or served < 3:
                raise ParameterError(
                    "max_length",
                    f"{self.client.backend.url}: the server lists no context length for the model "
                    f"{self.name!r} (max_model_len in /models, as vLLM does): give {{max_length}} "
                    "(the model's context in tokens) so that long texts are scored in windows",
                )
            self.max_length = served - 2
        return self.max_length

    async def _served_context(self) -> int | None:
        """The endpoint checked, then the model's ``max_model_len`` in ``/v1/models`` (None
        where the server lists none)."""
        import openai

        backend = self.client.backend
        sdk = openai.AsyncOpenAI(
            base_url=backend.base_url,
            api_key=os.environ.get("OPENAI_API_KEY") or "not-needed",
            timeout=backend.timeout,
            max_retries=0,
        )
        try:
            if not self._checked:
                await backend.check()
                self._checked = True
            listed = (await sdk.models.list()).data
        except (openai.APIError, ValueError):  # no model list: no context known
            return None
        finally:
            await sdk.close()
            if hasattr(backend, "aclose"):
                await backend.aclose()
        entry = next((m for m in listed if getattr(m, "id", None) == backend.model), None)
        length = getattr(entry, "max_model_len", None)
        return length if isinstance(length, int) and not isinstance(length, bool) else None

    def _fitting(self, scored: list[dict]) -> list[dict]:
        """Scored text prompts, each checked to fit the context: a text cannot be cut into
        windows without the tokenizer (the server would refuse it, or score it past its context)."""
        for i, s in enumerate(scored):
            if s is not None and len(s["text"]) > self.max_length + 1:
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

    def echo(self, prompts: list, batch_size: int | None = None) -> list[dict]:
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
        found = {}
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
            found.update(_run(self._fetch(todo, batch_size or self.batch_size)))
        return [found.get(k) for k in keys]

    async def _fetch(self, todo: dict, size: int) -> dict:
        """Answers of the prompts not in the cache: the endpoint checked (once), the first
        prompt alone (a server that cannot score prompts stops here; one that does not answer
        it after its retries leaves every prompt unscored, none sent), then the rest in
        batches of ``size``, at most ``concurrency`` requests at a time."""
        import openai

        client, backend = self.client, self.client.backend
        sdk = openai.AsyncOpenAI(
            base_url=backend.base_url,
            api_key=os.environ.get("OPENAI_API_KEY") or "not-needed",
            timeout=backend.timeout,
            max_retries=0,
        )
        items, found, failed, broken = list(todo.items()), {}, [], []
        bar = Progress(f"{self.name}: scored prompts", total=len(items), unit="prompt")
        try:
            if not self._checked:
                await backend.check()
                self._checked = True
            await self._first(sdk, items[0], found, failed)
            bar.update()
            gate = asyncio.Semaphore(client.concurrency)

            async def one(batch):
                async with gate:
                    try:
                        choices = await self._ask(sdk, [p for _, p in batch])
                    except (RequestError, TransientError) as exc:
                        failed.append(f"{exc}")
                        return
                for (key, prompt), choice in zip(batch, choices):
                    try:
                        found[key] = _prompt_part(prompt, choice)
                    except _Impossible as exc:
                        broken.append(self._impossible(prompt, exc))
                        continue
                    except _Unusable as exc:
                        broken.append(f"an answer without the prompt's log-probabilities: {exc}")
                        continue
                    if client.cache is not None:
                        await asyncio.to_thread(client.cache.put, key, found[key])
                bar.update(len(batch))

            if not failed:  # the first unanswered after its retries: the server is down, none sent
                await asyncio.gather(*(one(items[i : i + size]) for i in range(1, len(items), size)))
        finally:
            bar.close()
            await sdk.close()
            if hasattr(backend, "aclose"):
                await backend.aclose()
        if client.cache is not None:  # the answers written before the run goes on (a full disk: said here)
            await asyncio.to_thread(client.cache.flush)
        client.usage.failures += len(items) - len(found)
        if broken:
            raise EndpointError(
                f"{backend.url}: {len(items) - len(found)} of {len(items)} prompts were not scored; "
                f"the first: {broken[0]} (the {len(found)} scored are cached: run again to go on)",
                url=backend.url,
            )
        if failed:
            client.first_error = client.first_error or failed[0]
        return found

    async def _first(self, sdk, item, found: dict, failed: list) -> None:
        """The run's first prompt, alone: a server that refuses to score prompts, or answers
        without their log-probabilities, is an EndpointError before anything else is sent; one
        that gives no answer after the retries (an outage) leaves it unscored (in ``failed``)."""
        key, prompt = item
        backend, cache = self.client.backend, self.client.cache
        where = f"{backend.url}/completions for the model {backend.model!r}"
        try:
            found[key] = _prompt_part(prompt, (await self._ask(sdk, [prompt]))[0])
        except RequestError as exc:
            raise EndpointError(
                f"{where} refuses to score a prompt ({exc}): log-likelihoods need a server "
                "that takes echo with logprobs on /v1/completions (vLLM, llama-cpp-python's "
                "server)",
                url=backend.url,
            ) from None
        except TransientError as exc:
            failed.append(f"{exc}")
            return
        except _Impossible as exc:
            raise EndpointError(f"{backend.url}: {self._impossible(prompt, exc)}", url=backend.url) from None
        except _Unusable as exc:
            fix = "" if isinstance(prompt, list) else "; or give {tokenizer} to send token ids"
            raise EndpointError(
                f"{where} answers without the prompt's log-probabilities ({exc}): log-likelihoods "
                "need a server that echoes the prompt with logprobs (vLLM, llama-cpp-python's "
                "server; llama.cpp's own server gives the generated token's only)" + fix,
                also=("tokenizer",) if fix else (),
                url=backend.url,
            ) from None
        if cache is not None:
            await asyncio.to_thread(cache.put, key, found[key])

    def _impossible(self, prompt, exc: _Impossible) -> str:
        """What a refused answer says: the model, the prompt (its first characters) and the
        token, and why no number of it is used."""
        text = self.tokenizer.decode(prompt[:40]) if isinstance(prompt, list) else prompt
        return (
            f"the model {self.client.backend.model!r} gave an impossible log-probability, {exc}, "
            f"for the prompt {text[:40]!r}{'...' if len(text) > 40 else ''}: log-probabilities are "
            "finite and at most 0 (a server in a broken state, or its dtype overflowing); "
            "nothing of that answer is kept or cached"
        )

    async def _ask(self, sdk, prompts: list) -> list[dict]:
        """The choices (in the prompts' order) of one request, retried with backoff on 429,
        5xx, timeouts and bodies that are no answer; a refusal raises RequestError at once."""
        client, backend = self.client, self.client.backend
        backoff = Backoff(client.retries, client.backoff, client.max_wait, jitter=True)
        for attempt in backoff.tries:
            try:
                return await asyncio.wait_for(self._post(sdk, prompts), backend.timeout)
            except asyncio.TimeoutError:
                exc = TransientError(f"no answer within {backend.timeout:g} s (timeout)")
            except TransientError as error:
                exc = error
            if backoff.exhausted(attempt):
                raise TransientError(f"gave up after {attempt + 1} tries: {exc}")
            if backoff.refuses(exc.retry_after):
                raise TransientError(
                    f"the server asked to wait {exc.retry_after:,.0f} s, longer than max_wait "
                    f"{client.max_wait:g} s: {exc}"
                )
            client.usage.retries += 1
            delay = backoff.delay(attempt, exc.retry_after)
            client.usage.waited += delay
            await asyncio.sleep(delay)

    async def _post(self, sdk, prompts: list) -> list[dict]:
        """One request: the server's choices as it sent them (plain JSON), in prompt order."""
        import openai

        try:
            raw = await sdk.completions.with_raw_response.create(
                model=self.client.backend.model, prompt=prompts, **ECHO_PARAMS
            )
            body = json.loads(raw.text)
        except openai.RateLimitError as exc:
            raise TransientError(f"429: {_reason(exc)}", retry_after(exc.response.headers)) from None
        except openai.InternalServerError as exc:
            raise TransientError(f"{exc.status_code}: {_reason(exc)}", retry_after(exc.response.headers)) from None
        except (openai.APITimeoutError, openai.APIConnectionError) as exc:
            raise TransientError(f"cannot reach the server: {exc}") from None
        except openai.APIStatusError as exc:  # 400 (a parameter refused, a prompt too long), 404, ...
            if exc.status_code in (408, 409):
                raise TransientError(f"{exc.status_code}: {_reason(exc)}", retry_after(exc.response.headers)) from None
            raise RequestError(f"{exc.status_code}: {_reason(exc)}") from None
        except ValueError as exc:  # a body that is not JSON
            raise TransientError(f"a response body that is not JSON: {exc}") from None
        choices = body.get("choices") if isinstance(body, dict) else None
        if not isinstance(choices, list) or len(choices) != len(prompts):
            raise TransientError(
                f"an answer with {len(choices) if isinstance(choices, list) else 'no'} choices "
                f"for {len(prompts)} prompts"
            )
        usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
        self.client.usage.calls += 1
        self.client.usage.input_tokens += usage.get("prompt_tokens") or 0
        self.client.usage.output_tokens += usage.get("completion_tokens") or 0
        return _in_order(choices)


def _in_order(choices: list) -> list:
    """An answer's choices in the order of their ``index`` (as given where none has one); an
    index repeated or missing (which choice scores which prompt is then unknown) is a
    :class:`TransientError`."""
    indices = [c.get("index") if isinstance(c, dict) else None for c in choices]
    if all(i is None for i in indices):
        return choices
    whole = all(isinstance(i, int) and not isinstance(i, bool) for i in indices)
    if not whole or sorted(indices) != list(range(len(choices))):
        raise TransientError(f"an answer whose choices' indices {indices[:8]} are not 0 to {len(choices) - 1}")
    return sorted(choices, key=lambda c: c["index"])


def _run(coroutine):
    """Run ``coroutine`` to its end, also where an event loop is already running (a notebook):
    then on a loop of its own in another thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()
