"""Every token's log-probability of whole texts (perplexity, Min-K%, lm-eval's
``loglikelihood_rolling``), texts longer than the model's context scored in windows: lm-eval's
disjoint windows or overlapping ones."""

from __future__ import annotations

from .runner import Encoder, LoadedModel, unsort

__all__ = ["TokenScorer", "WINDOWS", "window_jobs", "window_step"]

WINDOWS = ("disjoint", "overlap")  # the layouts of LocalModel.token_logprobs
"""The layouts of ``LocalModel.token_logprobs`` for a text longer than the context:
``disjoint`` windows, or ``overlap``ping ones (each token scored with more context)."""


def window_jobs(sequences: list[list[int]], step: int, length: int) -> list[tuple[int, list[int], list[int]]]:
    """The windows over token sequences (each beginning with the token its first is predicted
    from): ``(sequence index, input ids, predicted ids)``, each window predicting the next
    ``step`` tokens from at most ``length`` input tokens (see :meth:`TokenScorer.token_logprobs`).
    The predicted ids are the last ones of ``input ids + [predicted ids[-1]]``."""
    jobs = []
    for t, seq in enumerate(sequences):
        for a in range(1, len(seq), step):
            b = min(a + step, len(seq))
            jobs.append((t, seq[max(0, b - 1 - length) : b - 1], seq[a:b]))
    return jobs


def window_step(windows: str, stride: int | None, max_length: int, who: str) -> int:
    """How many tokens each window over a long text predicts (``who`` names the caller in errors)."""
    if windows not in WINDOWS:
        raise ValueError(f"{who}: windows must be one of {WINDOWS}, got {windows!r}")
    if windows == "disjoint":
        if stride is not None:
            raise ValueError(f"{who}: stride is for windows='overlap' only")
        return max_length
    step = max_length // 2 if stride is None else stride
    if not 1 <= step <= max_length:
        raise ValueError(f"{who}: stride must be 1 to {max_length}, got {stride}")
    return step


class TokenScorer:
    """The token log-probabilities of :class:`~wikiorigin.evaluators.models.LocalModel`: on
    the ``loaded`` model, texts encoded by ``encoder``."""

    def __init__(self, loaded: LoadedModel, encoder: Encoder):
        self.loaded, self.encoder = loaded, encoder

    def token_logprobs(
        self, texts: list[str], *, windows: str = "disjoint", stride: int | None = None, batch_size: int | None = None
    ) -> list[list[float]]:
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
        loaded, encoder = self.loaded, self.encoder
        step = window_step(windows, stride, loaded.max_length, "LocalModel.token_logprobs")
        jobs = window_jobs([[encoder.prefix()] + ids for ids in encoder.encode_many(texts)], step, loaded.max_length)
        order = sorted(range(len(jobs)), key=lambda i: (-len(jobs[i][1]), i))

        def run(chunk):
            ids, mask = loaded.pad([jobs[i][1] for i in chunk])
            logits = loaded.forward(ids, mask)
            results = []
            for row, i in enumerate(chunk):
                _, inputs, targets = jobs[i]
                logp = logits[row, len(inputs) - len(targets) : len(inputs)].float().log_softmax(-1)
                target = loaded.torch.tensor(targets, device=logp.device)
                results.append(logp.gather(1, target[:, None]).squeeze(1).tolist())
            return results

        per_window = unsort(order, loaded.batched(order, run, batch_size, desc="text windows"))
        out: list[list[float]] = [[] for _ in texts]
        for (t, *_), values in zip(jobs, per_window):
            out[t].extend(values)
        return out
