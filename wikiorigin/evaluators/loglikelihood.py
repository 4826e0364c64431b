"""Log-likelihoods of continuations given contexts, with the numbers of lm-evaluation-harness's
``hf`` model (``HFLM.loglikelihood``, lm-eval 0.4) at its defaults: the same special tokens, the
same cut between context and continuation (:func:`split_many`), the same truncation.

Requests are sorted by length, one forward pass per batch. Continuations that share a context
(a question's options) share one pass over it, its key/value cache reused for each of them, when
the model's cache allows it (:meth:`LoglikelihoodScorer.reusable_cache`, decided once); the
output layer runs at the continuations' real steps only when that gives the model's own logits
(:meth:`LoglikelihoodScorer.output_layer`, checked once).
"""

from __future__ import annotations

import os.path
import warnings
from typing import Any

from ..llm.hf import is_oom
from .runner import Encoder, LoadedModel, unsort

__all__ = ["LoglikelihoodScorer", "common_prefix", "split_many", "warn_spanning"]

Pairs = list[tuple[list[int], list[int]]]


def common_prefix(a: list[int], b: list[int]) -> int:
    """How many tokens ``a`` and ``b`` share at their start."""
    return len(os.path.commonprefix([a, b]))


def warn_spanning(who: str, spanning: int, total: int) -> None:
    """The warning that ``spanning`` of ``total`` contexts ended inside a token."""
    warnings.warn(
        f"{who}: {spanning} of {total} contexts end inside a token of context + "
        "continuation: those continuations are scored from the token boundary before it "
        "(lm-evaluation-harness would drop the token's characters or stop)",
        stacklevel=4,
    )


def split_many(encoder: Encoder, requests: list[tuple[str, str]]) -> tuple[Pairs, int]:
    """Context and continuation ids as lm-evaluation-harness cuts them
    (``TemplateLM.loglikelihood`` and ``_encode_pair``, lm-eval 0.4):

    - an empty context: the continuation encoded without special tokens, given the BOS
      token (EOS where there is none); when it starts with that token, that token is the
      context;
    - else the context's trailing spaces go with the continuation, the context and the
      whole text (context + continuation) are encoded with the special tokens of
      :meth:`~wikiorigin.evaluators.runner.Encoder.encode_contexts`, and the continuation is the whole's tokens after the
      context's.

    Where a token of the whole text spans the cut (the whole does not start with the
    context's tokens, e.g. ``：空`` one token in ``回答：空家``), lm-eval still cuts the whole
    at the context's length: its continuation then lacks the characters of the spanning
    token (or is empty, and lm-eval stops on an assertion). We cut before the spanning
    token instead: the context is the whole's tokens before it, the continuation the rest
    (the whole's own tokens, every character scored; the context characters inside the
    spanning token are scored with it). Such requests are counted in
    the second value returned (the caller counts them and warns)."""
    parts, empty = [], []
    for n, (context, continuation) in enumerate(requests):
        if not context:
            empty.append(n)
        stripped = context.rstrip()
        parts.append((stripped, context[len(stripped) :] + continuation))
    full = [n for n in range(len(requests)) if requests[n][0]]
    distinct = list(dict.fromkeys(parts[n][0] for n in full))
    heads = dict(zip(distinct, encoder.encode_contexts(distinct)))
    wholes = dict(zip(full, encoder.encode_contexts([parts[n][0] + parts[n][1] for n in full])))
    pairs: list = [None] * len(requests)
    for n, tail in zip(empty, encoder.encode_many([requests[n][1] for n in empty])):
        pairs[n] = ([encoder.prefix()], tail) if tail[:1] != [encoder.prefix()] else (tail[:1], tail[1:])
    spanning = 0
    for n in full:
        head, whole = heads[parts[n][0]], wholes[n]
        cut = common_prefix(head, whole)
        spanning += cut < len(head)
        if cut == 0:  # nothing before the cut (an all-space context): the BOS token is the context
            pairs[n] = ([encoder.prefix()], whole)
        else:
            pairs[n] = (whole[:cut], whole[cut:])
    return pairs, spanning


class LoglikelihoodScorer:
    """The log-likelihoods of :class:`~wikiorigin.evaluators.models.LocalModel`: on the
    ``loaded`` model, contexts encoded by ``encoder``; continuations that share a context share
    its pass while ``share_context`` (turned off for a model whose cache cannot be reused)."""

    def __init__(self, loaded: LoadedModel, encoder: Encoder, share_context: bool = True):
        self.loaded, self.encoder, self.share_context = loaded, encoder, share_context
        self.cut_inside_token = 0  # requests whose context ended inside a token (see split_many)
        self._head: Any = None  # checked once, when first needed: see output_layer
        self._reusable: bool | None = None  # likewise: see reusable_cache

    def split_many(self, requests: list[tuple[str, str]]) -> Pairs:
        """:func:`split_many` with this encoder; the contexts that ended inside a token counted
        in ``cut_inside_token`` and warned of."""
        pairs, spanning = split_many(self.encoder, requests)
        if spanning:
            self.cut_inside_token += spanning
            warn_spanning("LocalModel", spanning, len(requests))
        return pairs

    def loglikelihood(
        self, requests: list[tuple[str, str]], *, batch_size: int | None = None
    ) -> list[tuple[float, bool]]:
        """``(sum of log-probabilities, greedy)`` of each continuation given its context."""
        pairs = self.split_many(requests)
        for i, ((context, continuation), (_, tail)) in enumerate(zip(requests, pairs)):
            if not tail:
                raise ValueError(
                    f"LocalModel.loglikelihood: request {i}: the continuation {continuation!r} "
                    f"has no tokens after the context ending {context[-40:]!r}"
                )
        return self.loglikelihood_tokens(pairs, batch_size=batch_size)

    def loglikelihood_tokens(
        self, pairs: list[tuple[list[int], list[int]]], *, batch_size: int | None = None
    ) -> list[tuple[float, bool]]:
        """:meth:`loglikelihood` on token ids: ``(context ids, continuation ids)`` pairs.
        Continuations that share a context (a question's options) are scored on one pass over
        that context: its key/value cache is reused for each continuation."""
        out: list = [None] * len(pairs)
        groups: dict[tuple, list[int]] = {}
        for i, (head, _) in enumerate(pairs):
            groups.setdefault(tuple(head), []).append(i)
        shared = [
            g
            for head, g in groups.items()
            if self.share_context
            and len(g) > 1
            and all(len(head) + len(pairs[i][1]) <= self.loaded.max_length for i in g)
        ]
        if shared and not self.reusable_cache():
            self.share_context = False  # a model without a reusable cache: score them apart
            shared = []
        alone = sorted(set(range(len(pairs))) - {i for g in shared for i in g})
        if shared:
            try:
                self._score_shared(pairs, shared, out, batch_size)
            except RuntimeError as exc:  # one context's options do not fit together
                if not is_oom(exc):
                    raise
                alone = [i for i, result in enumerate(out) if result is None]
        for i, result in zip(alone, self._score_apart([pairs[i] for i in alone], batch_size)):
            out[i] = result
        return out

    def _pick_rows(self, logits, targets, mask) -> list[tuple[float, bool]]:
        """Summed log-probabilities of ``targets`` (rows × steps, padding where ``mask`` is 0)
        and whether each row's targets are all the most likely tokens. Only the real steps are
        normalized (log-probability = logit - logsumexp)."""
        valid = mask.bool()
        sums, misses = self._score_steps(logits[valid], targets[valid], valid.nonzero()[:, 0], len(mask))
        return list(zip(sums.tolist(), (misses == 0).tolist()))

    def _score_steps(self, steps, wanted, rows, n_rows):
        """Per row: the sum of log-probabilities of ``wanted`` under ``steps`` (N × vocab
        logits) and the count of steps where another token is more likely."""
        torch = self.loaded.torch
        steps = steps.float()
        chosen = steps.gather(1, wanted[:, None]).squeeze(1)
        picked = chosen - torch.logsumexp(steps, -1)
        missed = (chosen < steps.max(-1).values).float()
        sums = torch.zeros(n_rows, device=steps.device).index_add_(0, rows, picked)
        return sums, torch.zeros(n_rows, device=steps.device).index_add_(0, rows, missed)

    def output_layer(self):
        """The output layer as a function of the last hidden states, when applying it to them
        gives the model's own logits (checked once on a short input); else None. It lets the
        continuations' logits be computed at their real steps only, not at padding."""
        if self._head is None:
            self._head = False
            layer = self.loaded.model.get_output_embeddings()
            if layer is not None:
                ids = self.loaded.torch.tensor(
                    [[self.encoder.prefix()] + self.encoder.encode("check 確認")], device=self.loaded.device
                )
                with self.loaded.torch.inference_mode():
                    out = self.loaded.call(input_ids=ids, output_hidden_states=True, use_cache=False)
                    same = self.loaded.torch.allclose(
                        layer(out.hidden_states[-1]).float(), out.logits.float(), atol=1e-3, rtol=1e-3
                    )
                self._head = layer if same else False
        return self._head or None

    def reusable_cache(self) -> bool:
        """Whether the model's key/value cache can be cut to rows and continued, as
        :meth:`_score_shared` does (checked once on a two-token input): a transformers
        ``Cache`` whose layers all hold keys and values (``DynamicLayer``, sliding windows
        included) or nothing; not a recurrent or linear-attention state, a static cache, or
        the tuples of a model without cache classes."""
        if self._reusable is None:
            from transformers.cache_utils import Cache, DummyLayer, DynamicLayer, LinearAttentionCacheLayerMixin

            torch = self.loaded.torch
            ids = torch.tensor([[self.encoder.prefix()] * 2], device=self.loaded.device)
            with torch.inference_mode():
                cache = getattr(self.loaded.model(input_ids=ids, use_cache=True), "cache", None)
            layers = (getattr(cache, "layers", None) if isinstance(cache, Cache) else None) or []
            self._reusable = bool(layers) and all(
                isinstance(layer, DummyLayer)
                or (isinstance(layer, DynamicLayer) and not isinstance(layer, LinearAttentionCacheLayerMixin))
                for layer in layers
            )
        return self._reusable

    def _score_apart(self, pairs, batch_size) -> list[tuple[float, bool]]:
        encoded = [((head + tail)[-(self.loaded.max_length + 1) :][:-1], tail) for head, tail in pairs]
        order = sorted(range(len(encoded)), key=lambda i: (-len(encoded[i][0]), i))

        def run(chunk):  # left-padded, so every row's continuation ends at the last position
            ids, mask = self.loaded.pad([encoded[i][0] for i in chunk], left=True)
            tails, tail_mask = self.loaded.pad([encoded[i][1] for i in chunk], left=True)
            keep = tails.shape[1]
            logits = self.loaded.call(
                input_ids=ids,
                attention_mask=mask,
                position_ids=(mask.cumsum(-1) - 1).clamp(min=0),
                use_cache=False,
                **({"logits_to_keep": keep} if self.loaded.keeps_logits else {}),
            ).logits
            return self._pick_rows(logits[:, -keep:], tails, tail_mask)

        return unsort(order, self.loaded.batched(order, run, batch_size, desc="log-likelihoods"))

    def _score_shared(self, pairs, groups: list[list[int]], out: list, batch_size) -> None:
        """Contexts left-padded in one pass with the cache kept; then every continuation of
        each context, right-padded, on a copy of its context's cache."""
        torch = self.loaded.torch
        order = sorted(range(len(groups)), key=lambda g: (-len(pairs[groups[g][0]][0]), g))
        per_group = max(len(g) for g in groups)

        def run(chunk):
            heads = [pairs[groups[g][0]][0] for g in chunk]
            ids, mask = self.loaded.pad(heads, left=True)
            positions = (mask.cumsum(-1) - 1).clamp(min=0)
            keep = {"logits_to_keep": 1} if self.loaded.keeps_logits else {}
            first = self.loaded.call(input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=True, **keep)
            rows = [(c, i) for c, g in enumerate(chunk) for i in groups[g]]
            owner = torch.tensor([c for c, _ in rows], device=ids.device)
            cache = first.cache
            cache.batch_select_indices(owner)
            tail_ids, tail_mask = self.loaded.pad([pairs[i][1] for _, i in rows])
            inputs = {
                "input_ids": tail_ids,
                "attention_mask": torch.cat([mask[owner], tail_mask], 1),
                "position_ids": mask.sum(1)[owner][:, None] + torch.arange(tail_ids.shape[1], device=ids.device),
                "cache": cache,
                "use_cache": True,
            }
            # tail token 0 is predicted by its context's last logits (normalized once per context)
            last = first.logits[:, -1].float()
            lse, best = torch.logsumexp(last, -1), last.max(-1).values
            chosen = last[owner, tail_ids[:, 0]]
            sums, misses = chosen - lse[owner], (chosen < best[owner]).float()
            # tail token j by the tail's step j-1, at the real steps only
            valid = tail_mask[:, 1:].bool()
            head = self.output_layer()
            if head is not None:
                hidden = self.loaded.call(output_hidden_states=True, **keep, **inputs).hidden_states[-1]
                steps = head(hidden[:, :-1][valid])
            else:
                steps = self.loaded.call(**inputs).logits[:, :-1][valid]
            more, more_misses = self._score_steps(steps, tail_ids[:, 1:][valid], valid.nonzero()[:, 0], len(rows))
            sums, misses = (sums + more).tolist(), (misses + more_misses).tolist()
            return [(i, (total, miss == 0)) for (_, i), total, miss in zip(rows, sums, misses)]

        size = max(1, batch_size // per_group) if batch_size else None
        for i, result in self.loaded.batched(order, run, size, rows_per_item=per_group, desc="questions' options"):
            out[i] = result
