"""Models under evaluation: a local causal LM (transformers + torch) or an OpenAI-compatible
endpoint, behind the same ``generate`` call.

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
"""

from __future__ import annotations

import inspect
import os.path
import warnings
from pathlib import Path

from ..errors import WikioriginError
from ..progress import Progress

__all__ = ["LocalModel", "EndpointModel", "pick_device", "WINDOWS"]

WINDOWS = ("disjoint", "overlap")  # the layouts of LocalModel.token_logprobs


def pick_device(device: str | None = None) -> str:
    import torch

    if device and device != "auto":
        kind = device.split(":", 1)[0]
        if kind == "cuda" and not torch.cuda.is_available():
            raise WikioriginError(f"--device {device}: CUDA is not available here (torch {torch.__version__}"
                                  + (" is a CPU build" if torch.version.cuda is None else ", no GPU visible") + ")")
        if kind == "mps" and not (getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()):
            raise WikioriginError(f"--device {device}: MPS (Apple GPU) is not available here")
        if kind not in ("cpu", "cuda", "mps"):
            raise WikioriginError(f"--device {device}: not a device (cpu, cuda, cuda:N, mps or auto)")
        return device
    if torch.cuda.is_available():
        return "cuda"
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def _is_oom(exc: BaseException) -> bool:
    return "out of memory" in str(exc).lower()


def _common_prefix(a: list[int], b: list[int]) -> int:
    """How many tokens ``a`` and ``b`` share at their start."""
    return len(os.path.commonprefix([a, b]))


def _unsort(order: list[int], results: list) -> list:
    """Results computed in ``order`` put back in the requests' order."""
    out: list = [None] * len(order)
    for i, result in zip(order, results):
        out[i] = result
    return out


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
    gets no second one (as in lm-eval)."""

    def __init__(self, path, *, device: str | None = "auto", dtype: str = "auto",
                 max_batch_size: int = 32, max_length: int | None = None, chat: bool = True,
                 share_context: bool = True, add_bos: bool | None = None):
        if add_bos not in (None, True, False):
            raise ValueError(f"LocalModel: add_bos must be None, True or False, got {add_bos!r}")
        try:
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError as exc:
            raise ImportError("running a local model needs: pip install -e '.[eval]' in the wikiorigin checkout") from exc
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
        self.add_bos = add_bos
        self.cut_inside_token = 0  # requests whose context ended inside a token (see _split_many)
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
        """Token ids of many texts in one tokenizer call (a fast tokenizer works on the batch),
        without special tokens."""
        return self.tokenizer(texts, add_special_tokens=False)["input_ids"] if texts else []

    def encode_contexts(self, texts: list[str]) -> list[list[int]]:
        """Token ids of texts that begin a scored sequence, with the special tokens ``add_bos``
        gives them (lm-eval's ``HFLM.tok_encode``: the tokenizer's own unless the text already
        starts with the BOS token's text)."""
        if self.add_bos is False or not texts:
            return self.encode_many(texts)
        start = self.tokenizer.decode([self._prefix()])
        marked = [bool(start) and t.startswith(start) for t in texts]
        plain = iter(self.encode_many([t for t, m in zip(texts, marked) if m]))
        special = [t for t, m in zip(texts, marked) if not m]
        full = iter(self.tokenizer(special)["input_ids"] if special else [])
        out = [next(plain) if m else next(full) for m in marked]
        if self.add_bos:
            prefix = self._prefix()
            out = [ids if ids[:1] == [prefix] else [prefix] + ids for ids in out]
        return out

    def _batched(self, items: list, run, batch_size: int | None = None, rows_per_item: int = 1,
                 desc: str = "batches") -> list:
        """``run`` over ``items`` in batches; a batch that runs out of memory is split in half
        (and the model's batch size, counted in rows, remembered). Progress goes to stderr."""
        size, out, start = batch_size or max(1, self.batch_size // rows_per_item), [], 0
        with Progress(f"{self.name}: {desc}", total=len(items), unit="item") as bar:
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
                bar.update(len(chunk))
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
        """Context and continuation ids as lm-evaluation-harness cuts them
        (``TemplateLM.loglikelihood`` and ``_encode_pair``, lm-eval 0.4):

        - an empty context: the continuation encoded without special tokens, given the BOS
          token (EOS where there is none); when it starts with that token, that token is the
          context;
        - else the context's trailing spaces go with the continuation, the context and the
          whole text (context + continuation) are encoded with the special tokens of
          :meth:`encode_contexts`, and the continuation is the whole's tokens after the
          context's.

        Where a token of the whole text spans the cut (the whole does not start with the
        context's tokens, e.g. ``：空`` one token in ``回答：空家``), lm-eval still cuts the whole
        at the context's length: its continuation then lacks the characters of the spanning
        token (or is empty, and lm-eval stops on an assertion). We cut before the spanning
        token instead: the context is the whole's tokens before it, the continuation the rest
        (the whole's own tokens, every character scored; the context characters inside the
        spanning token are scored with it). Such requests are counted in
        ``cut_inside_token`` and a warning says how many there were."""
        parts, empty = [], []
        for n, (context, continuation) in enumerate(requests):
            if not context:
                empty.append(n)
            stripped = context.rstrip()
            parts.append((stripped, context[len(stripped):] + continuation))
        full = [n for n in range(len(requests)) if requests[n][0]]
        distinct = list(dict.fromkeys(parts[n][0] for n in full))
        heads = dict(zip(distinct, self.encode_contexts(distinct)))
        wholes = dict(zip(full, self.encode_contexts([parts[n][0] + parts[n][1] for n in full])))
        pairs: list = [None] * len(requests)
        for n, tail in zip(empty, self.encode_many([requests[n][1] for n in empty])):
            pairs[n] = ([self._prefix()], tail) if tail[:1] != [self._prefix()] else (tail[:1], tail[1:])
        spanning = 0
        for n in full:
            head, whole = heads[parts[n][0]], wholes[n]
            cut = _common_prefix(head, whole)
            spanning += cut < len(head)
            if cut == 0:  # nothing before the cut (an all-space context): the BOS token is the context
                pairs[n] = ([self._prefix()], whole)
            else:
                pairs[n] = (whole[:cut], whole[cut:])
        if spanning:
            self.cut_inside_token += spanning
            warnings.warn(f"LocalModel: {spanning} of {len(requests)} contexts end inside a token of context + "
                          "continuation: those continuations are scored from the token boundary before it "
                          "(lm-evaluation-harness would drop the token's characters or stop)", stacklevel=3)
        return pairs

    def _split(self, context: str, continuation: str) -> tuple[list[int], list[int]]:
        return self._split_many([(context, continuation)])[0]

    def loglikelihood(self, requests: list[tuple[str, str]], *, batch_size: int | None = None
                      ) -> list[tuple[float, bool]]:
        """``(sum of log-probabilities, greedy)`` of each continuation given its context."""
        pairs = self._split_many(requests)
        for i, ((context, continuation), (_, tail)) in enumerate(zip(requests, pairs)):
            if not tail:
                raise ValueError(f"LocalModel.loglikelihood: request {i}: the continuation {continuation!r} "
                                 f"has no tokens after the context ending {context[-40:]!r}")
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

        return _unsort(order, self._batched(order, run, batch_size, desc="log-likelihoods"))

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
        for i, result in self._batched(order, run, size, rows_per_item=per_group, desc="questions' options"):
            out[i] = result

    # -- per-token log-probabilities ------------------------------------------------------
    def _windows(self, windows: str, stride: int | None) -> int:
        """How many tokens each window predicts."""
        if windows not in WINDOWS:
            raise ValueError(f"LocalModel.token_logprobs: windows must be one of {WINDOWS}, got {windows!r}")
        if windows == "disjoint":
            if stride is not None:
                raise ValueError("LocalModel.token_logprobs: stride is for windows='overlap' only")
            return self.max_length
        step = self.max_length // 2 if stride is None else stride
        if not 1 <= step <= self.max_length:
            raise ValueError(f"LocalModel.token_logprobs: stride must be 1 to {self.max_length}, got {stride}")
        return step

    def token_logprobs(self, texts: list[str], *, windows: str = "disjoint", stride: int | None = None,
                       batch_size: int | None = None) -> list[list[float]]:
        """Each text's tokens' log-probabilities: the text encoded without special tokens, its
        first token given the BOS token (EOS where there is none). A text longer than the
        model's context is scored in windows of at most ``max_length`` input tokens:

        - ``"disjoint"`` (default): lm-evaluation-harness's ``loglikelihood_rolling`` layout
          (``get_rolling_token_windows`` with ``context_len=1``, made disjoint): each window
          predicts the next ``max_length`` tokens, so a token right after a window's start sees
          only the tokens since then; the last window sees the ``max_length`` tokens before its end;
        - ``"overlap"``: each window predicts ``stride`` new tokens (default half the context)
          after up to ``max_length - stride`` tokens it has already scored, so every token but
          the first ones sees at least that many before it (twice the work at the default).

        The sums equal lm-eval's ``loglikelihood_rolling`` with ``add_bos_token=False``, and at
        its defaults for a tokenizer that adds no BOS (GPT-2-style). For a tokenizer that adds
        ``<s>`` (Llama-style), lm-eval 0.4 encodes the text with it and also gives the first
        window the BOS prefix, so it scores ``<s>`` itself given ``<s>`` and every token after
        two BOS tokens; we score the text's own tokens after one."""
        step, length = self._windows(windows, stride), self.max_length
        jobs = []  # (text index, input ids, predicted ids)
        for t, ids in enumerate(self.encode_many(texts)):
            seq = [self._prefix()] + ids
            for a in range(1, len(seq), step):
                b = min(a + step, len(seq))
                jobs.append((t, seq[max(0, b - 1 - length):b - 1], seq[a:b]))
        order = sorted(range(len(jobs)), key=lambda i: (-len(jobs[i][1]), i))

        def run(chunk):
            ids, mask = self._pad([jobs[i][1] for i in chunk])
            logits = self._forward(ids, mask)
            results = []
            for row, i in enumerate(chunk):
                _, inputs, targets = jobs[i]
                logp = logits[row, len(inputs) - len(targets):len(inputs)].float().log_softmax(-1)
                target = self._torch.tensor(targets, device=logp.device)
                results.append(logp.gather(1, target[:, None]).squeeze(1).tolist())
            return results

        per_window = _unsort(order, self._batched(order, run, batch_size, desc="text windows"))
        out: list[list[float]] = [[] for _ in texts]
        for (t, *_), values in zip(jobs, per_window):
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

        return _unsort(order, self._batched(order, run, batch_size, desc="generation"))


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

