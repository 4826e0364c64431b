"""Training-data leakage check (as in the YokaiEval paper): is a model's likelihood of an
article's own wording clearly higher than of a paraphrase that says the same?

For each article, a passage of the original and of its paraphrase, both cut by one rule
(:func:`passage`: the first ``max_chars`` characters of each, so that a paraphrase of the whole
article is cut where the original is), are scored under the local model: negative
log-likelihood per character (comparable across the two texts, whose tokenizations differ),
per-token perplexity, Min-K% probability (the mean log-probability of the k% least likely
tokens) and the zlib ratio (log-perplexity over the zlib-compressed size). Across articles, a
paired Wilcoxon signed-rank test (scipy) on the per-character NLL, with the matched-pairs
rank-biserial correlation as effect size: a strongly negative effect (the originals much more
likely) hints that the articles were trained on.

Paraphrases come from a file (``title``, ``paraphrase``) or from an LLM through
:class:`~wikiorigin.llm.LLMClient` (cached, so a re-run pays for no paraphrase twice).

The paper compared 20 articles chosen at random; :func:`draw_sample` draws such a sample
reproducibly (each title ranked by a keyed hash of the seed and the title: the same seed draws
the same articles whatever the order of the rows), and :func:`leakage_check` records it.
"""

from __future__ import annotations

import hashlib
import math
import statistics
import zlib
from dataclasses import dataclass

from ..errors import ParameterError, WikioriginError
from ..files import read_rows
from ..protocols import TokenLogprobsModel, model_name
from .leakage_report import write_leakage_results
from .signature import client_name, data_hash, model_settings, run_settings, text_hash
from .token_logprobs import WINDOWS

__all__ = [
    "text_scores",
    "read_texts",
    "paraphrase",
    "passage",
    "Sample",
    "draw_sample",
    "leakage_check",
    "write_leakage_results",
    "PARAPHRASE_PROMPT",
    "SAMPLE",
    "leakage_settings",
]

SAMPLE = 20
"""How many articles the YokaiEval paper compared, chosen at random: ``eval leakage``'s
default ``--sample``."""

PARAPHRASE_PROMPT = (
    "task: paraphrase\n"
    "Rewrite the passage below in the same language so that it keeps every fact, name, number "
    "and its length, but shares as few word sequences with the original as you can: change "
    "sentence order and structure and choose other words. Reply with the rewritten passage only."
)
"""The instruction that asks a chat model for a paraphrase of a passage: same language,
facts and length, as few shared word sequences as it can."""


@dataclass(frozen=True, slots=True)
class Sample:
    """The articles a leakage check compares and how they were chosen: ``titles`` (in the
    order drawn) out of ``population`` candidates; ``n`` asked for (None: every one) and
    ``seed`` (None: not at random, the first ``n`` in the order given, as ``--limit``)."""

    titles: tuple[str, ...]
    population: int
    n: int | None = None
    seed: int | None = 0


def draw_sample(titles, n: int | None, seed: int | None = 0) -> Sample:
    """``n`` of ``titles`` at random, reproducibly: each title is ranked by the SHA-256 of the
    seed and the title, and the ``n`` lowest are drawn, so the same ``n`` and ``seed`` draw
    the same articles whatever the order of ``titles`` (and a title added to the file changes
    the sample only if it ranks among them). ``n`` None: every title, in the order given;
    ``seed`` None: the first ``n`` in the order given."""
    titles = list(dict.fromkeys(titles))
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
        raise WikioriginError(f"leakage sample: n must be a whole number > 0, got {n!r}")
    if n is None:
        chosen = titles
    elif seed is None:
        chosen = titles[:n]
    else:
        rank = lambda t: hashlib.sha256(f"{seed}\0{t}".encode()).digest()  # noqa: E731
        chosen = sorted(titles, key=rank)[:n]
    return Sample(tuple(chosen), len(titles), n, None if n is None else seed)


def passage(text: str, max_chars: int) -> str:
    """The part of a text a leakage check scores: its first ``max_chars`` characters (Unicode
    code points), the one rule for an article and for its paraphrase."""
    return text[:max_chars]


_LARGEST_EXP = 709.0  # math.exp of more overflows (the perplexity is then infinite)


def text_scores(logprobs: list[float], text: str, k: float = 0.2) -> dict:
    """Scores of one text from its tokens' log-probabilities."""
    if not logprobs or not text:
        raise WikioriginError("cannot score an empty text")
    n, nll = len(logprobs), -sum(logprobs)
    lowest = sorted(logprobs)[: max(1, math.ceil(k * n))]
    return {
        "tokens": n,
        "chars": len(text),
        "nll_per_char": nll / len(text),
        "nll_per_token": nll / n,
        "perplexity": math.exp(nll / n) if nll / n < _LARGEST_EXP else math.inf,
        "min_k": sum(lowest) / len(lowest),
        "zlib_ratio": (nll / n) / len(zlib.compress(text.encode("utf-8"))),
    }


def read_texts(path, field: str) -> dict[str, str]:
    """``{title: text}`` from Parquet or JSON rows with ``title`` and ``field``; a linked
    section of an article (an articles file's ``anchor``) is ``title#anchor``. A title given
    twice with other texts, or a blank paraphrase, is a :class:`WikioriginError` naming the row."""
    rows = read_rows(path, ["title", field, "anchor"])
    if not rows or not all(isinstance(r, dict) and r.get("title") and isinstance(r.get(field), str) for r in rows):
        raise WikioriginError(f"{path}: expected rows with `title` and `{field}`")
    texts: dict[str, str] = {}
    first: dict[str, int] = {}
    for row, r in enumerate(rows):
        title, text = r["title"] + (f"#{r['anchor']}" if r.get("anchor") else ""), r[field]
        if field == "paraphrase" and not text.strip():
            raise WikioriginError(
                f"{path}: row {row}: the paraphrase of {title!r} is blank: give one or leave the row out"
            )
        if title in texts and texts[title] != text:  # which one to score cannot be told
            raise WikioriginError(
                f"{path}: row {row}: {title!r} again with another {field} (first at row {first[title]}): give each once"
            )
        texts.setdefault(title, text)
        first.setdefault(title, row)
    return texts


def paraphrase(passages: dict[str, str], client) -> tuple[dict[str, str], dict[str, str]]:
    """Paraphrases by an LLM: ``({title: paraphrase}, {title: why it failed})``."""
    from ..llm import ChatRequest

    titles = list(passages)
    results = client.run(
        [
            ChatRequest(
                [{"role": "system", "content": PARAPHRASE_PROMPT}, {"role": "user", "content": passages[t]}],
                {"temperature": 0},
                "leakage-paraphrase",
            )
            for t in titles
        ]
    )
    done = {t: r.text.strip() for t, r in zip(titles, results) if r.error is None and r.text and r.text.strip()}
    failed = {t: r.error or "empty paraphrase" for t, r in zip(titles, results) if t not in done}
    return done, failed


def _rank_biserial(diffs: list[float]) -> float:
    """Matched-pairs rank-biserial correlation: (R+ - R-) / (R+ + R-), zero differences left out."""
    from scipy.stats import rankdata

    nonzero = [d for d in diffs if d != 0]
    if not nonzero:
        return 0.0
    ranks = rankdata([abs(d) for d in nonzero])
    plus = sum(r for r, d in zip(ranks, nonzero) if d > 0)
    minus = sum(r for r, d in zip(ranks, nonzero) if d < 0)
    return float((plus - minus) / (plus + minus))


def _check_windows(windows: str, stride: int | None) -> None:
    if windows not in WINDOWS:
        raise WikioriginError(f"leakage check: windows must be one of {WINDOWS}, got {windows!r}")
    if stride is not None and windows == "disjoint":
        raise ParameterError(
            "stride", "leakage check: {stride} is for overlapping windows (disjoint ones predict a whole context each)"
        )


def _items(titles: list[str], originals: list[str], others: list[str], logprobs: list, name: str, k: float):
    """The scored articles' items, and those whose texts' requests failed after their retries."""
    items, unscored = [], []
    n = len(titles)
    for i, title in enumerate(titles):
        if logprobs[i] is None or logprobs[n + i] is None:  # a request failed after its retries
            unscored.append({"title": title, "model": name, "failed": True})
            continue
        a = text_scores(logprobs[i], originals[i], k)
        b = text_scores(logprobs[n + i], others[i], k)
        items.append(
            {
                "title": title,
                "model": name,
                "failed": False,
                **{f"original_{x}": v for x, v in a.items()},
                **{f"paraphrase_{x}": v for x, v in b.items()},
                "difference": a["nll_per_char"] - b["nll_per_char"],
            }
        )
    return items, unscored


def leakage_check(
    articles: dict[str, str],
    paraphrases: dict[str, str],
    model: TokenLogprobsModel,
    *,
    max_chars: int = 1500,
    k: float = 0.2,
    windows: str = "overlap",
    stride: int | None = None,
    sample: Sample | None = None,
) -> tuple[list[dict], dict]:
    """Items (one per article with both texts) and the summary with the paired test.

    Both texts are cut by :func:`passage` (the first ``max_chars`` characters of each).
    ``sample`` (:func:`draw_sample`): compare only its titles, and record it in the summary
    (``sample``: ``n``, ``seed``, ``population``, ``titles``); without one, every article.

    Texts longer than the model's context are scored in ``windows`` (see
    :meth:`~wikiorigin.evaluators.models.LocalModel.token_logprobs`): ``"overlap"`` by
    default, each window predicting ``stride`` tokens (default half the context) after the
    ones before them, so that every token is predicted with at least half a context before it
    wherever the windows of the original and of its paraphrase happen to start;
    ``"disjoint"`` is lm-evaluation-harness's ``loglikelihood_rolling`` layout (a token just
    after a window's start is predicted from little more than itself). A text that fits in the
    context is one window either way, so both give the same numbers there."""
    _check_windows(windows, stride)
    candidates = list(sample.titles) if sample is not None else list(articles)
    titles = [
        t
        for t in candidates
        if passage(articles.get(t) or "", max_chars).strip() and passage(paraphrases.get(t) or "", max_chars).strip()
    ]
    if len(titles) < 2:
        raise WikioriginError(f"only {len(titles)} articles have a paraphrase: at least 2 are needed")
    originals = [passage(articles[t], max_chars) for t in titles]
    others = [passage(paraphrases[t], max_chars) for t in titles]
    logprobs = model.token_logprobs(originals + others, windows=windows, stride=stride)
    name = model_name(model)
    items, unscored = _items(titles, originals, others, logprobs, name, k)
    summary = {
        "model": name,
        "mode": "leakage",
        "n": len(titles),
        "answered": len(items),
        "max_chars": max_chars,
        "without_paraphrase": len(candidates) - len(titles),
        "k": k,
        "windows": windows,
        "sample": None
        if sample is None
        else {"n": sample.n, "seed": sample.seed, "population": sample.population, "titles": list(sample.titles)},
        **_figures(items),
    }
    return items + unscored, summary


_FIGURES = (
    "original_nll_per_char",
    "paraphrase_nll_per_char",
    "original_perplexity",
    "paraphrase_perplexity",
    "original_min_k",
    "paraphrase_min_k",
)


def _figures(items: list[dict]) -> dict:
    """The means of the scored articles' figures, their paired differences and the Wilcoxon
    test; None each where fewer than 2 articles were scored (requests that failed)."""
    if len(items) < 2:
        return dict.fromkeys(
            (*_FIGURES, "mean_difference", "median_difference", "original_more_likely")
            + ("wilcoxon_statistic", "p_value", "rank_biserial")
        )
    from scipy.stats import wilcoxon

    diffs = [i["difference"] for i in items]
    test = wilcoxon([i["original_nll_per_char"] for i in items], [i["paraphrase_nll_per_char"] for i in items])
    return {
        **{key: sum(i[key] for i in items) / len(items) for key in _FIGURES},
        "mean_difference": sum(diffs) / len(diffs),
        "median_difference": statistics.median(diffs),
        "original_more_likely": sum(d < 0 for d in diffs) / len(diffs),
        "wilcoxon_statistic": float(test.statistic),
        "p_value": float(test.pvalue),
        "rank_biserial": _rank_biserial(diffs),
    }


def leakage_settings(
    model,
    *,
    max_chars: int = 1500,
    k: float = 0.2,
    windows: str = "overlap",
    stride: int | None = None,
    articles: dict[str, str] | None = None,
    paraphrases: dict[str, str] | None = None,
    paraphraser=None,
    sample: Sample | None = None,
    **more,
) -> dict:
    """The settings of :func:`leakage_check` with these arguments (see
    :mod:`~wikiorigin.evaluators.signature`): ``articles`` and ``paraphrases`` as given to
    it (hashed; with a ``sample``, those of its titles only), the ``paraphraser`` LLM client if
    one wrote them, the ``sample``: ``sample`` (its ``n``, or ``all``) and ``sample_seed``,
    or ``limit`` for the first ``n``; ``more``: further options of the check, recorded as given."""

    def hashed(texts):
        if texts is not None and sample is not None:
            texts = {t: texts[t] for t in sample.titles if t in texts}
        return None if texts is None else data_hash([{"t": t, "x": x} for t, x in texts.items()], ("t", "x"))

    if sample is not None and sample.n is not None and sample.seed is None:
        more = {**more, "limit": sample.n}
    elif sample is not None:
        more = {**more, "sample": "all" if sample.n is None else sample.n, "sample_seed": sample.seed}

    length = model_settings(model).get("max_length") if model is not None else None
    if windows == "overlap" and length:  # what token_logprobs uses; disjoint windows predict max_length each
        stride = stride or length // 2
    return run_settings(
        "leakage",
        model,
        capability="token_logprobs",
        windows=windows,
        stride=stride,
        max_chars=max_chars,
        min_k=k,
        data=hashed(articles),
        paraphrases=hashed(paraphrases),
        paraphraser=None if paraphraser is None else f"{client_name(paraphraser)}#{text_hash(PARAPHRASE_PROMPT)}",
        **more,
    )
