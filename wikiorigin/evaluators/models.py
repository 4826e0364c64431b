"""Models under evaluation: a local causal LM (transformers + torch) or an OpenAI-compatible
endpoint, behind the same ``generate`` call.

:class:`LocalModel` loads a model from a local path; the device is CUDA, then MPS, then CPU
(bf16 on CUDA, float32 elsewhere). It does three things in batches:

- ``generate(prompts)``: left-padded batched generation, the prompt wrapped in the model's chat
  template when it has one (``chat=False`` sends the raw prompt);
- ``loglikelihood([(context, continuation), ...])``: the summed log-probability of each
  continuation and whether greedy decoding would produce it, as lm-evaluation-harness computes
  it (requests sorted by length, one forward pass per batch); continuations that share a
  context (a question's options) share one pass over it, its key/value cache reused;
- ``token_logprobs(texts)``: every token's log-probability under a sliding window, for texts
  longer than the model's context (perplexity, Min-K%).

The batch size starts at ``max_batch_size`` and halves on out-of-memory until a batch fits.
torch and transformers are imported when a model is loaded, never on import of this module.
"""

from __future__ import annotations

import inspect
from pathlib import Path

from ..errors import WikioriginError

__all__ = ["LocalModel", "EndpointModel", "pick_device"]


def pick_device(device: str | None = None) -> str:
    import torch

    if device and device != "auto":
        return device
    if torch.cuda.is_available():
        return "cuda"
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def _is_oom(exc: BaseException) -> bool:
    return "out of memory" in str(exc).lower()


def _unsort(order: list[int], results: list) -> list:
    """Results computed in ``order`` put back in the requests' order."""
    out: list = [None] * len(order)
    for i, result in zip(order, results):
        out[i] = result
    return out


class LocalModel:
    """A causal LM from a local directory (a transformers checkpoint)."""

    def __init__(self, path, *, device: str | None = "auto", dtype: str = "auto",
                 max_batch_size: int = 32, max_length: int | None = None, chat: bool = True,
                 share_context: bool = True):
        try:
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError as exc:
            raise ImportError("running a local model needs: pip install 'wikiorigin[eval]'") from exc
        path = Path(path)
        if not path.exists():
            raise WikioriginError(f"{path}: no such model directory (models are loaded from local paths)")
        self.path = path
        self.device = pick_device(device)
        if dtype == "auto":
            dtype = torch.bfloat16 if self.device == "cuda" else torch.float32
        elif isinstance(dtype, str):
            dtype = getattr(torch, dtype)
        self.tokenizer = AutoTokenizer.from_pretrained(path)
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.model = AutoModelForCausalLM.from_pretrained(path, dtype=dtype).to(self.device).eval()
        config = self.model.config
        self.max_length = max_length or getattr(config, "max_position_embeddings", None) \
            or getattr(config, "n_positions", None) or 2048
        self.batch_size = max_batch_size
        self.chat = chat and self.tokenizer.chat_template is not None
        self.share_context = share_context
        accepted = inspect.signature(self.model.forward).parameters
        self._keeps_logits = "logits_to_keep" in accepted
        self._takes_positions = "position_ids" in accepted or any(
            p.kind is inspect.Parameter.VAR_KEYWORD for p in accepted.values())
        self._head = None  # see _output_layer
        self._torch = torch

    @property
    def name(self) -> str:
        return self.path.name

    def _prefix(self) -> int:
        tok = self.tokenizer
        return tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id

    def encode(self, text: str) -> list[int]:
        return self.encode_many([text])[0]

    def encode_many(self, texts: list[str]) -> list[list[int]]:
        """Token ids of many texts in one tokenizer call (a fast tokenizer works on the batch)."""
        return self.tokenizer(texts, add_special_tokens=False)["input_ids"] if texts else []

    def _batched(self, items: list, run, batch_size: int | None = None, rows_per_item: int = 1) -> list:
        """``run`` over ``items`` in batches; a batch that runs out of memory is split in half
        (and the model's batch size, counted in rows, remembered)."""
        size, out, start = batch_size or max(1, self.batch_size // rows_per_item), [], 0
        while start < len(items):
            chunk = items[start:start + size]
            try:
                with self._torch.inference_mode():
                    out.extend(run(chunk))
            except RuntimeError as exc:
                if not _is_oom(exc) or size == 1:
                    raise
                if self.device == "cuda":
                    self._torch.cuda.empty_cache()
                size = max(1, size // 2)
                self.batch_size = min(self.batch_size, size * rows_per_item)
                continue
            start += len(chunk)
        return out

    def _call(self, **inputs):
        if not self._takes_positions:  # a model without positions (recurrent) works them out itself
            inputs.pop("position_ids", None)
        return self.model(**inputs)

    def _forward(self, ids, mask):
        return self._call(input_ids=ids, attention_mask=mask, use_cache=False).logits

    def _pad(self, rows: list[list[int]], left: bool = False):
        """Token ids and attention mask of ``rows``, padded on the right (or the left)."""
        torch = self._torch
        width = max(len(r) for r in rows)
        pad = self.tokenizer.pad_token_id
        if left:
            ids = [[pad] * (width - len(r)) + r for r in rows]
            mask = [[0] * (width - len(r)) + [1] * len(r) for r in rows]
        else:
            ids = [r + [pad] * (width - len(r)) for r in rows]
            mask = [[1] * len(r) + [0] * (width - len(r)) for r in rows]
        return (torch.tensor(ids, dtype=torch.long, device=self.device),
                torch.tensor(mask, dtype=torch.long, device=self.device))

    # -- log-likelihood -------------------------------------------------------------------
    def _split_many(self, requests: list[tuple[str, str]]) -> list[tuple[list[int], list[int]]]:
        """Context and continuation ids as lm-evaluation-harness splits them: the whole text is
        encoded and the context's tokens cut off; trailing spaces of the context go with the
        continuation; a token that would span the boundary makes the two be encoded apart."""
        parts = []
        for context, continuation in requests:
            stripped = context.rstrip()
            parts.append((stripped, context[len(stripped):] + continuation))
        distinct = list(dict.fromkeys(h for h, _ in parts if h))
        heads = dict(zip(distinct, self.encode_many(distinct)))
        wholes = iter(self.encode_many([h + c for h, c in parts if h]))
        pairs, apart = [], []
        for n, (head_text, tail_text) in enumerate(parts):
            if not head_text:
                pairs.append(([self._prefix()], None))
                apart.append(n)
                continue
            head, whole = heads[head_text], next(wholes)
            if whole[:len(head)] == head and len(whole) > len(head):
                pairs.append((head, whole[len(head):]))
            else:  # a token spans the boundary: encode the continuation apart
                pairs.append((head, None))
                apart.append(n)
        for n, tail in zip(apart, self.encode_many([parts[n][1] for n in apart])):
            pairs[n] = (pairs[n][0], tail)
        return pairs

    def _split(self, context: str, continuation: str) -> tuple[list[int], list[int]]:
        return self._split_many([(context, continuation)])[0]

    def loglikelihood(self, requests: list[tuple[str, str]], *, batch_size: int | None = None
                      ) -> list[tuple[float, bool]]:
        """``(sum of log-probabilities, greedy)`` of each continuation given its context."""
        pairs = self._split_many(requests)
        for (context, _), (_, tail) in zip(requests, pairs):
            if not tail:
                raise ValueError(f"empty continuation for context {context[-40:]!r}")
        return self.loglikelihood_tokens(pairs, batch_size=batch_size)

    def loglikelihood_tokens(self, pairs: list[tuple[list[int], list[int]]], *,
                             batch_size: int | None = None) -> list[tuple[float, bool]]:
        """:meth:`loglikelihood` on token ids: ``(context ids, continuation ids)`` pairs.
        Continuations that share a context (a question's options) are scored on one pass over
        that context: its key/value cache is reused for each continuation."""
        out: list = [None] * len(pairs)
        groups: dict[tuple, list[int]] = {}
        for i, (head, tail) in enumerate(pairs):
            groups.setdefault(tuple(head), []).append(i)
        shared = [g for head, g in groups.items()
                  if self.share_context and len(g) > 1 and all(len(head) + len(pairs[i][1]) <= self.max_length for i in g)]
        alone = sorted(set(range(len(pairs))) - {i for g in shared for i in g})
        if shared:
            try:
                self._score_shared(pairs, shared, out, batch_size)
            except (TypeError, ValueError, AttributeError, NotImplementedError):
                self.share_context = False  # a model without a usable cache: score them apart
                alone = [i for i, result in enumerate(out) if result is None]
            except RuntimeError as exc:  # one context's options do not fit together
                if not _is_oom(exc):
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
        torch = self._torch
        steps = steps.float()
        chosen = steps.gather(1, wanted[:, None]).squeeze(1)
        picked = chosen - torch.logsumexp(steps, -1)
        missed = (chosen < steps.max(-1).values).float()
        sums = torch.zeros(n_rows, device=steps.device).index_add_(0, rows, picked)
        return sums, torch.zeros(n_rows, device=steps.device).index_add_(0, rows, missed)

    def _output_layer(self):
        """The output layer as a function of the last hidden states, when applying it to them
        gives the model's own logits (checked once on a short input); else None. It lets the
        continuations' logits be computed at their real steps only, not at padding."""
        if self._head is None:
            self._head = False
            layer = self.model.get_output_embeddings()
            if layer is not None:
                ids = self._torch.tensor([[self._prefix()] + self.encode("check 確認")], device=self.device)
                with self._torch.inference_mode():
                    out = self._call(input_ids=ids, output_hidden_states=True, use_cache=False)
                    same = self._torch.allclose(layer(out.hidden_states[-1]).float(), out.logits.float(),
                                                atol=1e-3, rtol=1e-3)
                self._head = layer if same else False
        return self._head or None

    def _score_apart(self, pairs, batch_size) -> list[tuple[float, bool]]:
        encoded = [((head + tail)[-(self.max_length + 1):][:-1], tail) for head, tail in pairs]
        order = sorted(range(len(encoded)), key=lambda i: (-len(encoded[i][0]), i))

        def run(chunk):  # left-padded, so every row's continuation ends at the last position
            ids, mask = self._pad([encoded[i][0] for i in chunk], left=True)
            tails, tail_mask = self._pad([encoded[i][1] for i in chunk], left=True)
            keep = tails.shape[1]
            logits = self._call(input_ids=ids, attention_mask=mask, position_ids=(mask.cumsum(-1) - 1).clamp(min=0),
                                use_cache=False, **({"logits_to_keep": keep} if self._keeps_logits else {})).logits
            return self._pick_rows(logits[:, -keep:], tails, tail_mask)

        return _unsort(order, self._batched(order, run, batch_size))

    def _score_shared(self, pairs, groups: list[list[int]], out: list, batch_size) -> None:
        """Contexts left-padded in one pass with the cache kept; then every continuation of
        each context, right-padded, on a copy of its context's cache."""
        torch = self._torch
        order = sorted(range(len(groups)), key=lambda g: (-len(pairs[groups[g][0]][0]), g))
        per_group = max(len(g) for g in groups)

        def run(chunk):
            heads = [pairs[groups[g][0]][0] for g in chunk]
            ids, mask = self._pad(heads, left=True)
            positions = (mask.cumsum(-1) - 1).clamp(min=0)
            keep = {"logits_to_keep": 1} if self._keeps_logits else {}
            first = self._call(input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=True, **keep)
            rows = [(c, i) for c, g in enumerate(chunk) for i in groups[g]]
            owner = torch.tensor([c for c, _ in rows], device=ids.device)
            cache = first.past_key_values
            cache.batch_select_indices(owner)
            tail_ids, tail_mask = self._pad([pairs[i][1] for _, i in rows])
            inputs = {"input_ids": tail_ids, "attention_mask": torch.cat([mask[owner], tail_mask], 1),
                      "position_ids": mask.sum(1)[owner][:, None] + torch.arange(tail_ids.shape[1], device=ids.device),
                      "past_key_values": cache, "use_cache": True}
            # tail token 0 is predicted by its context's last logits (normalized once per context)
            last = first.logits[:, -1].float()
            lse, best = torch.logsumexp(last, -1), last.max(-1).values
            chosen = last[owner, tail_ids[:, 0]]
            sums, misses = chosen - lse[owner], (chosen < best[owner]).float()
            # tail token j by the tail's step j-1, at the real steps only
            valid = tail_mask[:, 1:].bool()
            head = self._output_layer()
            if head is not None:
                hidden = self._call(output_hidden_states=True, **keep, **inputs).hidden_states[-1]
                steps = head(hidden[:, :-1][valid])
            else:
                steps = self._call(**inputs).logits[:, :-1][valid]
            more, more_misses = self._score_steps(steps, tail_ids[:, 1:][valid], valid.nonzero()[:, 0], len(rows))
            sums, misses = (sums + more).tolist(), (misses + more_misses).tolist()
            return [(i, (total, miss == 0)) for (_, i), total, miss in zip(rows, sums, misses)]

        size = max(1, batch_size // per_group) if batch_size else None
        for i, result in self._batched(order, run, size, rows_per_item=per_group):
            out[i] = result

    # -- per-token log-probabilities ------------------------------------------------------
    def token_logprobs(self, texts: list[str], *, stride: int | None = None,
                       batch_size: int | None = None) -> list[list[float]]:
        """Each text's tokens' log-probabilities (the first token given the BOS/EOS token).
        Texts longer than the context are scored in windows: each window predicts at most
        ``stride`` new tokens (default half the context) and sees the tokens before them."""
        length = self.max_length
        stride = min(stride or length // 2, length - 1)
        windows = []  # (text index, input ids, number of predicted tokens at its end)
        for t, ids in enumerate(self.encode_many(texts)):
            seq = [self._prefix()] + ids
            for a in range(1, len(seq), stride):
                b = min(a + stride, len(seq))
                start = max(0, b - length)
                windows.append((t, seq[start:b], b - a, seq[a:b]))
        order = sorted(range(len(windows)), key=lambda i: (-len(windows[i][1]), i))

        def run(chunk):
            ids, mask = self._pad([windows[i][1][:-1] for i in chunk])
            logits = self._forward(ids, mask)
            results = []
            for row, i in enumerate(chunk):
                _, inputs, n, targets = windows[i]
                end = len(inputs) - 1
                logp = logits[row, end - n:end].float().log_softmax(-1)
                target = self._torch.tensor(targets, device=logp.device)
                results.append(logp.gather(1, target[:, None]).squeeze(1).tolist())
            return results

        per_window = _unsort(order, self._batched(order, run, batch_size))
        out: list[list[float]] = [[] for _ in texts]
        for (t, *_), values in zip(windows, per_window):
            out[t].extend(values)
        return out

    # -- generation -----------------------------------------------------------------------
    def format_prompt(self, prompt: str, system: str | None = None) -> str:
        if not self.chat:
            return prompt
        messages = ([{"role": "system", "content": system}] if system else []) + \
            [{"role": "user", "content": prompt}]
        return self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)

    def generate(self, prompts: list[str], *, max_new_tokens: int = 128, temperature: float = 0.1,
                 top_p: float = 1.0, seed: int = 0, system: str | None = None,
                 batch_size: int | None = None) -> list[str]:
        """One response per prompt (sampling when ``temperature`` > 0, greedy at 0)."""
        torch = self._torch
        texts = [self.format_prompt(p, system) for p in prompts]
        special = not self.chat  # a chat template writes its own special tokens
        encoded = [self.tokenizer(t, add_special_tokens=special)["input_ids"] for t in texts]
        for i, ids in enumerate(encoded):
            if len(ids) + max_new_tokens > self.max_length:
                raise WikioriginError(f"prompt {i}: {len(ids)} tokens + {max_new_tokens} new exceed "
                                      f"the model's {self.max_length} positions")
        order = sorted(range(len(encoded)), key=lambda i: (-len(encoded[i]), i))
        options = {"max_new_tokens": max_new_tokens, "do_sample": temperature > 0,
                   "pad_token_id": self.tokenizer.pad_token_id}
        if temperature > 0:
            options.update(temperature=temperature, top_p=top_p)

        def run(chunk):
            torch.manual_seed(seed)
            ids, mask = self._pad([encoded[i] for i in chunk], left=True)
            output = self.model.generate(input_ids=ids, attention_mask=mask, **options)
            return [self.tokenizer.decode(row[ids.shape[1]:], skip_special_tokens=True) for row in output]

        return _unsort(order, self._batched(order, run, batch_size))


class EndpointModel:
    """An OpenAI-compatible chat endpoint (or any :class:`~wikiorigin.llm.LLMClient`) as the
    model under evaluation; answers are cached like the builders' calls. A request that failed
    after its retries gives ``None``."""

    def __init__(self, client):
        self.client = client
        self.name = client.backend.model

    def generate(self, prompts: list[str], *, max_new_tokens: int = 128, temperature: float = 0.1,
                 top_p: float = 1.0, seed: int = 0, system: str | None = None,
                 batch_size: int | None = None) -> list[str | None]:
        from ..llm import ChatRequest

        params = {"temperature": temperature, "max_tokens": max_new_tokens, "top_p": top_p, "seed": seed}
        results = self.client.run([ChatRequest(
            ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": p}],
            params, "eval") for p in prompts])
        return [None if r.error else r.text for r in results]

