"""An echo answer of an OpenAI-compatible ``/v1/completions`` server (``echo`` and
``logprobs``): the prompt's part of it, checked before anything is scored or cached (a NaN, an
infinite or a positive log-probability is no probability), and the sums and token positions
that scoring reads off it. The requests themselves are :mod:`~wikiorigin.evaluators.completions`'."""

from __future__ import annotations

import math

__all__ = ["continuation_start"]


def continuation_start(scored: dict, cut: int) -> int:
    """The first token of a scored text prompt (``text`` and ``start`` of each token, as
    :meth:`EchoScoring.echo` gives them) that belongs to the continuation of a context ending
    at character ``cut``: the first that starts at or after it, or reaches past it. A token
    without text (bytes of a character that a later token completes) goes with that token."""
    texts, starts = scored["text"], scored["start"]
    spans: list[tuple[int, int]] = []
    after: tuple[int, int] | None = None
    for i in range(len(texts) - 1, -1, -1):
        if texts[i] or after is None:
            after = (starts[i], starts[i] + len(texts[i]))
        spans.append(after)
    spans.reverse()
    for i, (start, end) in enumerate(spans):
        if start >= cut or end > cut:
            return i
    return len(texts)


def _text_start(scored: dict) -> int:
    """The index of a scored text prompt's first own token: 1 when the server put a token
    before the text (its BOS), else 0. (Offsets cannot tell it: a Llama-style tokenizer's
    first token can be the ``▁`` it adds in front, shown as a space before the text.)"""
    return 1 if continuation_start(scored, 0) > 0 else 0


class _Unusable(Exception):
    """An answer that does not give a prompt's log-probabilities."""


class _Impossible(_Unusable):
    """An answer whose log-probabilities no model gives: NaN, infinite, above 0 (beyond
    :data:`_TOLERANCE`), or not a number after the first token."""


_TOLERANCE = 1e-4  # a log-probability above 0 by more than float rounding is no probability


def _impossible(value) -> bool:
    """Whether ``value`` cannot be a log-probability (None is checked by the caller)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return True
    return not math.isfinite(value) or value > _TOLERANCE


def _check_values(scored: dict) -> None:
    """Raise :class:`_Impossible` naming the first token of a scored prompt (as
    :func:`_prompt_part` gives it, or as the cache kept it) whose log-probability, or most
    likely token's, is impossible; the first token's may be None. Their sum over the prompt
    must be finite too (every sum over a part of it, a continuation or a window, then is: the
    values are at most 0): ``-1e308`` a token sums to ``-inf``, which no figure can use."""
    for i, (value, best) in enumerate(zip(scored["logprob"], scored["best"])):
        if (value is not None or i > 0) and _impossible(value):
            raise _Impossible(f"{value!r} at token {i} ({scored['text'][i]!r})")
        if best is not None and _impossible(best):
            raise _Impossible(f"{best!r} as the most likely token's at token {i} ({scored['text'][i]!r})")
    total = sum(v for v in scored["logprob"] if v is not None)
    if not math.isfinite(total):
        raise _Impossible(f"values that sum to {total!r} over the prompt's {len(scored['logprob'])} tokens")


def _prompt_tokens(prompt: str, tokens: list) -> int:
    """How many of the answer's tokens are the prompt's: all but the generated one, or all
    (a server that generated none); their texts must end with the prompt."""
    for n in (len(tokens) - 1, len(tokens)):
        if n > 0 and all(isinstance(t, str) for t in tokens[:n]) and "".join(tokens[:n]).endswith(prompt):
            return n
    raise _Unusable(f"its {len(tokens)} tokens do not spell the prompt of {len(prompt)} characters")


def _prompt_part(prompt, choice) -> dict:
    """The prompt's tokens from one choice of an echo answer: ``text``, ``logprob``, ``best``
    (the most likely token's log-probability at that step) and ``start`` (the character where
    the token's text starts in a text prompt; 0 for token ids)."""
    logprobs = choice.get("logprobs") if isinstance(choice, dict) else None
    if not isinstance(logprobs, dict):
        raise _Unusable("no logprobs in the answer")
    tokens, values = logprobs.get("tokens"), logprobs.get("token_logprobs")
    if not isinstance(tokens, list) or not isinstance(values, list) or len(tokens) != len(values):
        raise _Unusable("no tokens and token_logprobs of one length in the answer")
    tops = logprobs.get("top_logprobs") or [None] * len(values)
    if isinstance(prompt, list):
        n = len(prompt)
        if len(values) < n:
            raise _Unusable(f"{len(values)} log-probabilities for a prompt of {n} tokens")
        starts = [0] * n
    else:
        n = _prompt_tokens(prompt, tokens)
        offsets = logprobs.get("text_offset")
        if (
            not isinstance(offsets, list)
            or len(offsets) < n
            or any(offsets[i + 1] - offsets[i] != len(tokens[i]) for i in range(n - 1))
        ):
            raise _Unusable("its text_offset does not follow its tokens' texts")
        end = offsets[n - 1] + len(tokens[n - 1])
        starts = [offset - end + len(prompt) for offset in offsets[:n]]
    for i, top in enumerate(tops[:n]):
        for value in top.values() if isinstance(top, dict) else ():
            if _impossible(value):
                raise _Impossible(f"{value!r} among the most likely tokens' at token {i} ({tokens[i]!r})")
    best = [max(t.values()) if isinstance(t, dict) and t else None for t in tops[:n]]
    scored = {"text": list(tokens[:n]), "logprob": list(values[:n]), "best": best, "start": starts}
    _check_values(scored)
    return scored


def _possible(scored) -> bool:
    """Whether a cached answer is whole (``text``, ``logprob``, ``best``, ``start``: lists of one
    length) and its numbers are all possible (see :func:`_check_values`)."""
    parts = [scored.get(name) for name in ("text", "logprob", "best", "start")]
    if not all(isinstance(part, list) and len(part) == len(parts[0]) for part in parts):
        return False
    try:
        _check_values(scored)
    except _Impossible:
        return False
    return True


def _summed(scored: dict, first: int, end: int) -> tuple[float, bool]:
    """``(sum of log-probabilities, greedy)`` of the tokens ``first`` to ``end`` of a prompt."""
    values, best = scored["logprob"][first:end], scored["best"][first:end]
    return float(sum(values)), all(b is not None and v >= b for v, b in zip(values, best))
