"""Scoring free-form answers (WikiOriginQA): exact match and chrF against the item's names.

:func:`chrf` is sentence-level chrF (character n-grams 1-6, beta 2, whitespace ignored,
averaged over the orders both strings have), the same number as sacrebleu's
``CHRF().sentence_score`` (0-100); the statistics are kept apart from the arithmetic
(:func:`chrf_stats`, :func:`chrf_from_stats`) so they can be summed over a corpus.
:func:`score_answer` normalizes (NFKC, case-fold), checks an exact match against any answer,
and gives chrF against the answer nearest by edit distance and the best chrF over all.

:func:`evaluate_freeform` asks a model (local or an endpoint) each question for the name only,
reads the name from its response (:func:`answer_text`) and scores it, with an exact match
after romanization (unidecode) kept apart; :func:`summarize_freeform` reports overall, by
language and by whether the item has an English article (the paper's table layout).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

from ..errors import ParameterError, WikioriginError
from ..files import read_rows
from ..languages import wiki_language
from . import cues
from .report import bar_plot, markdown_table, write_results
from .signature import data_hash, run_settings, text_hash
from .stats import SMALL, mean_fields, proportion_fields

__all__ = [
    "chrf",
    "chrf_stats",
    "chrf_from_stats",
    "score_answer",
    "normalize",
    "levenshtein",
    "answer_text",
    "romanize",
    "read_freeform",
    "item_language",
    "source_prompt",
    "question_prompt",
    "evaluate_freeform",
    "summarize_freeform",
    "write_freeform_results",
    "freeform_settings",
    "SAMPLING",
    "ANSWER_READER_VERSION",
]

# chrF is our own, not sacrebleu's CHRF, by measurement: on 4,000 name pairs in 26 scripts
# (Wikidata labels and aliases, YokaiEval options, answers phrased as models phrase them) the two
# give the same score (within 3e-14) at the same speed (bench/bench_chrf.py: time ratio 1.0); sacrebleu
# would bring five packages (lxml, regex, portalocker, tabulate, colorama) into the core install
# for this arithmetic, and keeps its summable statistics private. The tests hold ours to its numbers.
CHAR_ORDER = 6
WORD_ORDER = 0  # chrF, not chrF++
BETA = 2.0


def _ngrams(text: str, n: int) -> Counter:
    return Counter(text[i : i + n] for i in range(len(text) - n + 1))


def chrf_stats(hypothesis: str, reference: str, order: int = CHAR_ORDER) -> list[int]:
    """``[hyp, ref, match]`` counts per order (whitespace removed), flattened. An order the
    reference is too short for counts no hypothesis n-grams either (as sacrebleu does)."""
    hyp, ref = "".join(hypothesis.split()), "".join(reference.split())
    stats = []
    for n in range(1, order + 1):
        h, r = _ngrams(hyp, n), _ngrams(ref, n)
        n_ref = sum(r.values())
        stats += [sum(h.values()) if n_ref else 0, n_ref, sum((h & r).values())]
    return stats


def chrf_from_stats(stats: list[int], beta: float = BETA) -> float:
    """chrF (0-100) from counts, averaging precision and recall over the effective orders."""
    factor = beta**2
    precision = recall = 0.0
    effective = 0
    for i in range(0, len(stats), 3):
        n_hyp, n_ref, n_match = stats[i : i + 3]
        if n_hyp > 0 and n_ref > 0:
            precision += n_match / n_hyp
            recall += n_match / n_ref
            effective += 1
    if effective == 0:
        return 0.0
    precision, recall = precision / effective, recall / effective
    if precision + recall == 0:
        return 0.0
    return 100 * (1 + factor) * precision * recall / (factor * precision + recall)


def chrf(hypothesis: str, reference: str) -> float:
    """The chrF score (0-100, sacrebleu's defaults: character 6-grams, beta 2) of
    ``hypothesis`` against one ``reference``."""
    return chrf_from_stats(chrf_stats(hypothesis, reference))


def normalize(text: str) -> str:
    """``text`` in NFKC, case-folded, with runs of white space made one space (for exact match)."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def levenshtein(a: str, b: str) -> int:
    """The edit distance of two strings (rapidfuzz's, in C)."""
    from rapidfuzz.distance import Levenshtein

    return Levenshtein.distance(a, b)


def score_answer(prediction: str, answers: list[str]) -> dict:
    """``exact`` (bool), ``chrf`` (against the answer nearest by edit distance), ``chrf_best``
    (the best over all answers) and ``matched`` (that nearest answer); strings are
    normalized (NFKC, case-fold, spaces) first."""
    if not answers:
        raise ValueError("score_answer: no answers to compare with")
    pred = normalize(prediction)
    names = [normalize(a) for a in answers]
    nearest = min(range(len(names)), key=lambda i: (levenshtein(pred, names[i]), i))
    return {
        "exact": pred in names,
        "chrf": chrf(pred, names[nearest]),
        "chrf_best": max(chrf(pred, n) for n in names),
        "matched": answers[nearest],
    }


# -- evaluation --------------------------------------------------------------------------

PROMPTS = {
    "en": "Answer the question with the name only, without explanation.\n\nQuestion: {question}",
    "source": "{question}\n\n{name_only}",
}
"""The prompts of a free-form question: in English (``en``), or in the item's language
(``source``: its question, then :func:`~wikiorigin.evaluators.cues.name_only` of its
language; :func:`source_prompt`)."""
SAMPLING = {"temperature": 0.0, "max_new_tokens": 32}  # greedy: the answer is a name
"""The sampling of a free-form answer: greedy, at most 32 new tokens (the answer is a name)."""
ANSWER_READER_VERSION = 1  # of answer_text's rules: raise it when they change what they read
"""The version of :func:`answer_text`'s rules: raised when they change what they read."""
_ANSWER_PREFIX = re.compile(r"^\s*(?:answer|a|final answer|回答|答え)\s*[:：]\s*", re.I)


def answer_text(response: str | None) -> str:
    """The name a response gives: its first non-empty line without an ``Answer:`` prefix,
    quotes or final punctuation."""
    for line in (response or "").splitlines():
        line = _ANSWER_PREFIX.sub("", line).strip().strip("\"'“”「」『』*").strip()
        line = line.rstrip(".。!！").strip()
        if line:
            return line
    return ""


def romanize(text: str) -> str:
    """``text`` normalized, transliterated to ASCII (unidecode) and normalized again: the
    romanization-aware exact match, reported apart."""
    from unidecode import unidecode

    return normalize(unidecode(normalize(text)))


def read_freeform(path) -> list[dict]:
    """Questions of ``freeform.parquet`` (or JSON rows with ``question`` and ``answers``)."""
    rows = read_rows(path)
    for i, row in enumerate(rows):
        if not isinstance(row, dict) or not row.get("question") or not row.get("answers"):
            raise WikioriginError(f"{path}: row {i} has no question or no answers")
    return rows


def item_language(row: dict) -> str | None:
    """The language a free-form item is written in: its ``language``, else that of its
    ``origin_wiki``; None when neither says."""
    return row.get("language") or (wiki_language(row["origin_wiki"]) if row.get("origin_wiki") else None)


def source_prompt(language: str) -> str:
    """The prompt template of a question asked in ``language`` (``{question}`` to fill)."""
    return PROMPTS["source"].replace("{name_only}", cues.name_only(language))


def _source_language(row: dict, language: str | None) -> str:
    found = language or item_language(row)
    if found is None:
        raise ParameterError(
            "language",
            f"free-form item {row.get('id') or row.get('qid') or row['question'][:40]!r} "
            "says no language (no `language` or `origin_wiki`), so it cannot be asked in "
            "its own: give {language}",
        )
    return found


def question_prompt(row: dict, source_language: bool = False, language: str | None = None) -> str:
    """The prompt a free-form question is asked with: in English, or with ``source_language``
    in the item's language (``question_source``, the English question where it has none,
    ending with :func:`~wikiorigin.evaluators.cues.name_only` of ``language``, by default the
    item's own: :func:`item_language`)."""
    if source_language:
        template = source_prompt(_source_language(row, language))
        return template.format(question=row.get("question_source") or row["question"])
    return PROMPTS["en"].format(question=row["question"])


def evaluate_freeform(
    rows: list[dict], model, *, source_language: bool = False, language: str | None = None, **sampling
) -> list[dict]:
    """Ask each question (in English, or with ``source_language`` in the item's language:
    :func:`question_prompt`) and score the answer: exact match, chrF (nearest answer), best
    chrF, and an exact match after romanization (unidecode), kept apart. A request that failed
    after its retries is ``failed``, its scores None: no answer, neither right nor wrong."""
    sampling = {**SAMPLING, **sampling}
    prompts = [question_prompt(r, source_language, language) for r in rows]
    responses = model.generate(prompts, **sampling)
    items = []
    for row, prompt, response in zip(rows, prompts, responses):
        answer = answer_text(response)
        scores = score_answer(answer, list(row["answers"]))
        romanized = romanize(answer)
        exact_romanized: bool | None = bool(romanized) and romanized in {romanize(a) for a in row["answers"]}
        if response is None:  # the request failed: nothing to score
            scores = {**scores, "exact": None, "chrf": None, "chrf_best": None, "matched": None}
            exact_romanized = None
        items.append(
            {
                "id": row.get("id") or row.get("qid"),
                "model": model.name,
                "qid": row.get("qid"),
                "language": row.get("origin_wiki") or row.get("language") or "",
                "has_enwiki": bool(row.get("has_enwiki")),
                "question": prompt,
                "response": response,
                "answer": answer,
                **scores,
                "exact_romanized": exact_romanized,
                "failed": response is None,
            }
        )
    return items


def freeform_settings(
    model, *, source_language: bool = False, rows: list[dict] | None = None, language: str | None = None, **sampling
) -> dict:
    """The settings of :func:`evaluate_freeform` with these arguments (see
    :mod:`~wikiorigin.evaluators.signature`); ``rows``: the questions (hashed, and, asked in
    their own languages, the prompts of those languages hashed as ``instruction``)."""
    if source_language:
        if rows is None and language is None:
            raise ParameterError(
                "language",
                "freeform_settings: the questions asked in their own language, without "
                "their rows: give {language} (or rows=)",
            )
        languages = sorted({_source_language(r, language) for r in rows}) if rows is not None else [language or ""]
        instruction = text_hash("\x00".join(source_prompt(code) for code in languages))
    else:
        instruction = text_hash(PROMPTS["en"])
    return run_settings(
        "freeform",
        model,
        capability="generate",
        sampling={**SAMPLING, **sampling},
        language="source" if source_language else "en",
        instruction=instruction,
        parser=ANSWER_READER_VERSION,
        chrf=f"c{CHAR_ORDER}w{WORD_ORDER}b{BETA:g}",
        data=data_hash(rows, ("id", "question", "question_source", "answers")) if rows is not None else None,
    )


def summarize_freeform(items: list[dict]) -> dict:
    """Means of exact match, chrF, best chrF and romanized exact match: overall, by language,
    by whether an English article exists, and by both (the paper's table layout). Each has
    ``<name>_ci95`` and ``<name>_stderr`` (exact matches: Wilson interval; chrF: Student t;
    :mod:`~wikiorigin.evaluators.stats`); a block of fewer than 30 questions is ``small``.
    Questions whose request failed (``failed``) are left out of every figure and group: they are
    over the ``answered`` ones (``n`` counts them all)."""
    if not items:
        raise WikioriginError("no items to summarize")
    everything, items = items, [i for i in items if not i["failed"]]

    def block(part):
        fields = {}
        for key in ("exact", "chrf", "chrf_best", "exact_romanized"):
            values = [i[key] for i in part]
            fields.update(
                proportion_fields(key, values) if key.startswith("exact") else mean_fields(key, values, (0.0, 100.0))
            )  # chrF's interval clipped to its scale
        return {"n": len(part), **fields, "small": len(part) < SMALL}

    def groups(key):
        out: dict = {}
        for item in items:
            out.setdefault(key(item), []).append(item)
        return {k: block(v) for k, v in sorted(out.items())}

    return {
        "model": everything[0]["model"],
        "mode": "freeform",
        **block(items),
        "n": len(everything),
        "answered": len(items),
        "failed": len(everything) - len(items),
        "by_language": groups(lambda i: i["language"]),
        "by_enwiki": groups(lambda i: "with English article" if i["has_enwiki"] else "without"),
        "by_language_enwiki": groups(lambda i: f"{i['language']} / {'en' if i['has_enwiki'] else 'no en'}"),
    }


def _report_lines(summary: dict) -> list[str]:
    """The lines of a free-form run's report: the figures, by language and English article,
    and the romanization-aware exact match."""
    by_lang = summary["by_language"]
    table = []
    for lang in by_lang:
        row = [lang, by_lang[lang]["n"]]
        for flag in ("en", "no en"):
            cell = summary["by_language_enwiki"].get(f"{lang} / {flag}")
            row += [cell["exact"], cell["chrf"]] if cell else [float("nan")] * 2
        table.append(row + [by_lang[lang]["exact"], by_lang[lang]["chrf"]])
    return [
        f"# Free-form answers: {summary['model']}",
        "",
        markdown_table(
            ["questions", "exact", "chrF", "best chrF", "failed"],
            [[summary["n"], summary["exact"], summary["chrf"], summary["chrf_best"], summary["failed"]]],
        ),
        "",
        "## By language and English article",
        "",
        markdown_table(
            [
                "language",
                "n",
                "EM (en article)",
                "chrF (en article)",
                "EM (no en article)",
                "chrF (no en article)",
                "EM",
                "chrF",
            ],
            table,
        ),
        "",
        "## Romanization-aware exact match (unidecode; reported apart)",
        "",
        markdown_table(
            ["language", "exact", "exact after romanization"],
            [[k, v["exact"], v["exact_romanized"]] for k, v in by_lang.items()],
        ),
        "",
        "chrF is against the answer nearest by edit distance; best chrF is the best over all answers.",
        "Plot: `chrf_by_language.png`.",
    ]


def write_freeform_results(
    out, items: list[dict], summary: dict, meta: dict | None = None, settings: dict | None = None
):
    """Write a free-form run to directory ``out``: ``items.parquet``, ``summary.json``, ``report.md``
    (by language, with and without an English article, then every figure's 95% interval, groups
    under 30 marked) and ``chrf_by_language.png`` (with error bars); ``summary``
    is :func:`summarize_freeform`'s, ``meta`` goes into the provenance, ``settings`` into the
    signature. Returns what :func:`~wikiorigin.evaluators.report.write_results` returns."""
    by_lang = summary["by_language"]
    lines = _report_lines(summary)
    plots = [
        (
            "chrf_by_language.png",
            lambda path: bar_plot(
                path,
                list(by_lang),
                [v["chrf"] for v in by_lang.values()],
                f"{summary['model']}: chrF by language",
                "chrF",
                counts=[v["n"] for v in by_lang.values()],
                intervals=[v.get("chrf_ci95") for v in by_lang.values()],
            ),
        )
    ]
    return write_results(out, items, summary, "\n".join(lines), plots=plots, meta=meta, settings=settings)
