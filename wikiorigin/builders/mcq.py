"""YokaiEval-style 4-option questions from ``articles.parquet``.

Steps, each with a reason for every row it drops (kept in the ``failed`` file):

1. **generate** ``per_article`` questions per article (JSON), under the paper's conditions,
   with five example questions of our own in the prompt;
2. **validate**: four distinct non-empty options, the answer among them;
3. **check**: a checker model answers with the article; only questions it gets right stay
   (the paper's checker was a separate, smaller model: give one as ``checker``);
4. **attribute**: the model names the footnotes that back the answer; numbers the article does
   not have are dropped, and a question with none left is dropped;
   (``keep_unreferenced``: a question of an article without any footnote is kept with none);
5. **label** type and region into the classes of a labels file (:mod:`wikiorigin.labels`;
   ``yokai-ja``, the paper's 6 types and our 11 regions, is the default for Japanese list-page
   articles), enforced by an enum schema, from the article up to ``max_article_chars`` (as
   generation sees it: the region is often told far into the article); with Wikidata regions
   (the ``origin`` preset, the default for an origin corpus) the region is the corpus's own
   ``region`` column and only the type is asked. ``label_steps=2`` labels the paper's way, in
   two calls: the type from the question alone, the regions from the article alone;
6. **duplicate**: near-duplicates across the whole set (:func:`near_duplicates` on the
   question and its answer: a character-level similarity, so Japanese needs no word
   segmentation); the earlier question in article order is kept, and the dropped one's reason
   names it (id and text). Done on the questions that passed every other step, so that the
   question a dropped one repeats is in the output (a duplicate's check, attribute and label
   calls are paid for: few, 4 of the 810 released questions at the default threshold);
7. **place** the answer: by default the options are shuffled with a seeded RNG so that the
   correct position is balanced over the set (0, 1, 2, 3 in turn over a seeded order);
   ``answer_positions="as-generated"`` leaves them where the model put them, as the paper's
   released set has them (278/395/120/17 answers at A-D).

Every step samples at the paper's settings (``MCQConfig.params``: temperature 0.7, top_p 1.0,
200 output tokens); the generation step's output limit is ``max_tokens`` times
``per_article`` (its JSON holds that many questions).

Any language with an open Wikipedia (``language``, a registry code; default: the articles'
wiki's): Japanese questions with labels that ask for them (``yokai-ja``) keep the paper's
Japanese yokai prompts; every other build (any other language, or Japanese with other labels,
such as ``origin``) gets one set of English instructions that name the language the question, options and answer are written in
(as the free-form builder does) and speak of the article's subject, not of "this creature",
unless the labels file's ``subject`` says so. The language is in every row, in the prompts
(hence the request cache key, and ``prompt_sha1``) and in the provenance the dataset card reads.

Every LLM call goes through :class:`~wikiorigin.llm.LLMClient`: a re-run pays for nothing
twice, and a run killed half-way resumes from the cache.
"""

from __future__ import annotations

import hashlib
import random
import unicodedata
from dataclasses import dataclass, field

import numpy as np
from rapidfuzz import fuzz, process

from ..errors import ParameterError, WikioriginError
from ..files import input_schema, read_input
from ..labels import WIKIDATA, Labels, load_labels
from ..languages import language_parameter, wiki_language
from ..llm import ChatRequest, LLMClient
from ..schemas import MCQ
from .prompts import (
    label_prompt,
    label_schema,
    label_step_prompt,
    mcq_prompt,
    prompt_sha1,
    region_step_schema,
    yokai_prompts,
)
from .result import BuildReport, BuildResult, FailedRows, RequestCount, check_build_output, input_file, screen_inputs

__all__ = [
    "MCQConfig",
    "MCQBuilder",
    "MCQReport",
    "build_mcq",
    "plan_mcq",
    "balance_positions",
    "place_answers",
    "near_duplicates",
    "POSITIONS",
]

_GENERATE = {
    "type": "object",
    "required": ["questions"],
    "properties": {
        "questions": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["question", "choices", "answer"],
                "properties": {
                    "question": {"type": "string"},
                    "choices": {"type": "array", "items": {"type": "string"}},
                    "answer": {"type": "string"},
                },
            },
        }
    },
}
_CHECK = {"type": "object", "required": ["answer_index"], "properties": {"answer_index": {"type": ["integer", "null"]}}}
_CHECK_FIRM = {  # the paper's checker: an option, no way out
    "type": "object",
    "required": ["answer_index"],
    "properties": {"answer_index": {"type": "integer", "enum": [0, 1, 2, 3]}},
}
POSITIONS = ("balanced", "as-generated")
"""The ways of placing the answer among the options (:class:`MCQConfig` ``answer_positions``)."""
_ATTRIBUTE = {
    "type": "object",
    "required": ["refs"],
    "properties": {"refs": {"type": "array", "items": {"type": "integer"}}},
}


@dataclass(slots=True)
class MCQConfig:
    """Settings of :func:`build_mcq` that change the questions: the ``language`` of the
    questions (a registry code; None: the articles' wiki's), the ``labels`` (a preset's name,
    a labels file's path or :class:`~wikiorigin.labels.Labels`; None: ``origin`` for an origin
    corpus, ``yokai-ja`` for Japanese list-page articles, else an error), questions
    ``per_article``, where the answer goes among the options (``answer_positions``:
    ``"balanced"``, 0-3 in turn over a seeded order, the ``seed``; ``"as-generated"``, where the
    generator put it, as the paper's released set has it), the article length sent to every
    step (``max_article_chars``; 0: the whole article), the similarity (0-1, :func:`near_duplicates`) from which a question
    is a near duplicate of an earlier one (``duplicate_threshold``), the sampling ``params`` of
    every step, and whether a question from an article with no footnotes at all is kept
    without attribution (``keep_unreferenced``; the paper's condition, the default, drops it),
    how labels are asked (``label_steps``: 1, type and region in one call from the article and
    the question; 2, the paper's way: the type from the question alone, the regions from the
    article alone, one or more, joined by ", ") and whether the checker may answer "null" and
    so drop a question (``checker_abstains``; the paper's checker could not). They are recorded
    in the output's provenance.

    ``params`` defaults to the paper's settings (temperature 0.7, top_p 1.0, 200 output
    tokens) for generate, check, attribute and label alike; generation's ``max_tokens`` is
    multiplied by ``per_article``, its JSON holding that many questions. The threshold 0.9
    calls 4 pairs of the 810 released YokaiEval questions duplicates, all four one question
    asked twice of one article (0.85: 10 pairs, 4 of them only the same question pattern about
    two different yokai; 0.8: 44 pairs)."""

    language: str | None = None
    labels: Labels | str | None = None
    per_article: int = 1
    seed: int = 0
    max_article_chars: int = 12_000
    duplicate_threshold: float = 0.9
    params: dict = field(default_factory=lambda: {"temperature": 0.7, "top_p": 1.0, "max_tokens": 200})
    keep_unreferenced: bool = False
    answer_positions: str = "balanced"
    label_steps: int = 1
    checker_abstains: bool = True
    preset: str | None = None  # the paper's settings asked for by name (builders.presets), for the provenance

    def check(self) -> None:
        """A :class:`~wikiorigin.errors.WikioriginError` naming the setting out of range."""
        _check_threshold(self.duplicate_threshold, "MCQConfig")
        if self.answer_positions not in POSITIONS:
            raise WikioriginError(
                f"MCQConfig: answer_positions is one of {', '.join(POSITIONS)}, not {self.answer_positions!r}"
            )
        if self.label_steps not in (1, 2) or self.max_article_chars < 0:
            raise WikioriginError(
                f"MCQConfig: label_steps is 1 or 2 and max_article_chars >= 0 (0: the whole article), "
                f"not {self.label_steps!r} and {self.max_article_chars!r}"
            )

    def generation_params(self) -> dict:
        """The generation step's ``params``: ``max_tokens`` (when set) times ``per_article``."""
        if "max_tokens" not in self.params:
            return dict(self.params)
        return {**self.params, "max_tokens": self.params["max_tokens"] * self.per_article}


def _articles_language(rows: list[dict], path) -> str:
    """The language of the articles' wikis, for a build that names none; a
    :class:`~wikiorigin.errors.ParameterError` asking for ``language=`` when it cannot be told,
    the wikis are of several languages, or there are no articles to tell it by."""
    wikis = sorted({r["wiki"] for r in rows})
    languages = {wiki: wiki_language(wiki) for wiki in wikis}
    unknown = [wiki for wiki, code in languages.items() if code is None]
    if unknown:
        raise ParameterError("language", f"{path}: cannot tell the language of wiki {unknown[0]!r}: give {{language}}")
    if len(set(languages.values())) > 1:
        mixed = ", ".join(f"{wiki}: {code}" for wiki, code in languages.items())
        raise ParameterError(
            "language",
            f"{path}: the articles are from wikis of several languages ({mixed}): "
            "give {language} for the language of the questions",
        )
    if not languages:
        raise ParameterError(
            "language", f"{path}: no articles to tell the language of the questions by: give {{language}}"
        )
    return next(iter(languages.values()))


MCQReport = BuildReport
"""The report of a multiple-choice build: the one report type of every builder
(:class:`~wikiorigin.builders.result.BuildReport`), under its older name."""


def _same_article(row: dict) -> list[tuple]:
    """What makes two article rows one article: the same page, or the same title and text (the
    same requests)."""
    return [
        (f"page ({row['wiki']} {row['page_id']})", ("page", row["wiki"], row["page_id"])),
        ("title and text", ("text", row["title"], row["text"].strip())),
    ]


def _article_text(row: dict, limit: int) -> str:
    """The article as the steps see it: its title, and its text up to ``limit`` (0: whole)."""
    return f"{row['title']}\n\n{row['text'][: limit or None]}"


def _question_block(q: dict) -> str:
    return q["question"] + "\n" + "\n".join(f"{i}. {c}" for i, c in enumerate(q["choices"]))


def _valid(q: dict) -> str | None:
    choices = [c.strip() for c in q["choices"]]
    if len(choices) != 4:
        return f"{len(choices)} options, not 4"
    if any(not c for c in choices):
        return "an empty option"
    if len(set(choices)) != 4:
        return "options that repeat"
    if q["answer"].strip() not in choices:
        return "the answer is not among the options"
    if not q["question"].strip():
        return "an empty question"
    return None


def _comparable(text: str) -> str:
    """A text as it is compared: NFKC (full-width and half-width forms alike), case folded,
    each run of white space one space."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def _check_threshold(threshold: float, name: str) -> None:
    if not 0 < threshold <= 1:
        raise WikioriginError(f"{name}: the duplicate threshold is a similarity in (0, 1], not {threshold!r}")


def near_duplicates(texts: list[str], threshold: float) -> dict[int, tuple[int, float]]:
    """The near duplicates among ``texts``: ``{index: (earlier, similarity)}`` for each text
    whose similarity to an earlier kept text is at least ``threshold``, ``earlier`` being the
    most similar such text (the first of equals). Deterministic: the earlier text is kept.

    The similarity is rapidfuzz's ``fuzz.ratio`` / 100 (1 - the Indel distance over the two
    lengths) of the texts after NFKC, case folding and white-space runs as one space: a
    character-level measure, so texts without spaces (Japanese) need no segmentation. Every
    pair is compared (``rapidfuzz.process.cdist``, in blocks of rows to bound memory)."""
    _check_threshold(threshold, "near_duplicates")
    texts = [_comparable(t) for t in texts]
    cutoff = round(threshold * 100, 9)  # 0.9 * 100 is 90.00000000000001
    kept = np.zeros(len(texts), dtype=bool)
    found: dict[int, tuple[int, float]] = {}
    block = max(1, (1 << 24) // max(len(texts), 1))
    for start in range(0, len(texts), block):
        stop = min(start + block, len(texts))
        scores = process.cdist(
            texts[start:stop], texts[:stop], scorer=fuzz.ratio, score_cutoff=cutoff, dtype=np.float32, workers=-1
        )
        for i in range(start, stop):
            row = np.where(kept[:i], scores[i - start, :i], 0)
            j = int(np.argmax(row)) if i else 0
            if i and row[j] >= cutoff:
                found[i] = (j, round(float(row[j]) / 100, 4))
            else:
                kept[i] = True
    return found


def balance_positions(rows: list[dict], seed: int) -> None:
    """Put each answer at 0, 1, 2, 3 in turn over a seeded order of the rows; the wrong options
    are shuffled too. Deterministic for a seed; the positions are balanced to within one."""
    rng = random.Random(seed)
    order = sorted(range(len(rows)), key=lambda i: rows[i]["id"])
    rng.shuffle(order)
    for turn, i in enumerate(order):
        row = rows[i]
        wrong = [c for c in row["choices"] if c != row["answer"]]
        rng.shuffle(wrong)
        position = turn % 4
        row["choices"] = wrong[:position] + [row["answer"]] + wrong[position:]
        row["answer_index"] = position


def place_answers(rows: list[dict], how: str, seed: int) -> None:
    """Set each row's ``answer_index``: ``balanced`` (:func:`balance_positions`) or
    ``as-generated`` (the options in the generator's order)."""
    if how == "balanced":
        balance_positions(rows, seed)
        return
    for row in rows:
        row["answer_index"] = row["choices"].index(row["answer"])


def _footnotes(article: dict) -> set[int]:
    """The numbers of an article's own footnotes (not those of a named group)."""
    return {r["number"] for r in article["references"] or [] if not r["group"]}


def _messages(system: str, user: str) -> list[dict]:
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


class _Run:
    """One build: the clients, the prompts and the rows dropped so far, step by step."""

    def __init__(
        self,
        generator: LLMClient,
        checker: LLMClient,
        config: MCQConfig,
        report: BuildReport,
        language: str,
        labels: Labels,
    ):
        self.generator, self.checker, self.config, self.report = generator, checker, config, report
        self.language, self.labels = language, labels
        self.yokai = yokai_prompts(language, labels)
        self.version = prompt_sha1(
            language,
            labels.region_source,
            self.yokai,
            label_steps=config.label_steps,
            abstain=config.checker_abstains,
        )
        self.failed = FailedRows(report)

    def prompt(self, step: str, **fields) -> str:
        """The system prompt of ``step`` in this build's language (the paper's check when the
        checker may not abstain)."""
        paper = step == "check" and not self.config.checker_abstains
        return mcq_prompt(self.language, step, self.labels.subject, yokai=self.yokai, paper=paper, **fields)

    def fail(self, article, step, reason, question: dict | None = None) -> None:
        """Record a dropped article or question (the ``FAILED`` schema); ``question`` as the
        generator wrote it."""
        self.failed.add(
            step,
            reason,
            source=article["title"],
            wiki=article["wiki"],
            page_id=article["page_id"],
            qid=article.get("qid"),
            model=self.generator.backend.model,
            item=question,
        )

    def ask(self, client: LLMClient, prompt: str, users: list[str], schema, params: dict | None = None):
        """One request per user text, at the build's ``params`` unless others are given."""
        params = self.config.params if params is None else params
        return client.run([ChatRequest(_messages(prompt, user), dict(params), self.version, schema) for user in users])

    def generate(self, rows: list[dict]) -> list[tuple]:
        """Steps 1-2: generate, validate."""
        limit, n = self.config.max_article_chars, self.config.per_article
        asked = self.ask(
            self.generator,
            self.prompt("generate", n=n),
            [_article_text(a, limit) for a in rows],
            _GENERATE,
            self.config.generation_params(),
        )
        candidates = []
        for article, result in zip(rows, asked):
            if result.error:
                self.fail(article, "generate", result.error)
                continue
            for number, q in enumerate(result.data["questions"][:n]):
                self.report.generated += 1
                problem = _valid(q)
                if problem:
                    self.fail(article, "validate", problem, q)
                    continue
                q = {**q, "choices": [c.strip() for c in q["choices"]], "answer": q["answer"].strip()}
                candidates.append((article, number, q))
        return candidates

    def check(self, candidates: list[tuple]) -> list[tuple]:
        """Step 3: keep what the checker answers right with the article in front of it."""
        limit = self.config.max_article_chars
        checks = self.ask(
            self.checker,
            self.prompt("check"),
            [_article_text(a, limit) + "\n\n" + _question_block(q) for a, _, q in candidates],
            _CHECK if self.config.checker_abstains else _CHECK_FIRM,
        )
        kept = []
        for (article, number, q), result in zip(candidates, checks):
            if result.error:
                self.fail(article, "check", result.error, q)
            elif result.data["answer_index"] != q["choices"].index(q["answer"]):
                self.fail(article, "check", f"the checker chose {result.data['answer_index']}", q)
            else:
                kept.append((article, number, q))
        return kept

    def attribute(self, grounded: list[tuple]) -> list[tuple]:
        """Step 4: the footnotes that back the answer (only the article's own numbers). With
        ``keep_unreferenced``, a question of an article without any footnote is kept with none
        (no call). The questions stay in article order."""
        limit = self.config.max_article_chars
        unasked = [self.config.keep_unreferenced and not _footnotes(a) for a, _, _ in grounded]
        todo = [item for item, skip in zip(grounded, unasked) if not skip]
        answers = iter(
            self.ask(
                self.generator,
                self.prompt("attribute"),
                [
                    _article_text(a, limit) + "\n\n" + _question_block(q) + f"\n正解/answer: {q['answer']}"
                    for a, _, q in todo
                ],
                _ATTRIBUTE,
            )
        )
        kept = []
        for (article, number, q), skip in zip(grounded, unasked):
            if skip:
                kept.append((article, number, q, []))
                continue
            result, numbers = next(answers), _footnotes(article)
            refs = sorted({x for x in (result.data or {}).get("refs", []) if x in numbers})
            if result.error:
                self.fail(article, "attribute", result.error, q)
            elif not numbers:
                self.fail(
                    article,
                    "attribute",
                    "the article has no footnotes (keep_unreferenced keeps such questions without attribution)",
                    q,
                )
            elif not refs:
                self.fail(article, "attribute", "no footnote of the article backs it", q)
            else:
                kept.append((article, number, q, refs))
        return kept

    def label(self, backed: list[tuple]) -> list[dict]:
        """Step 5: type and region (the region from the corpus when it comes from Wikidata),
        then the output rows. The model reads the article as far as generation did
        (``max_article_chars``): where a yokai is told of is often said well into it."""
        if self.config.label_steps == 2:
            return self.label_apart(backed)
        limit = self.config.max_article_chars
        labels = self.ask(
            self.generator,
            label_prompt(self.language, self.labels),
            [_article_text(a, limit) + "\n\n" + _question_block(q) for a, _, q, _ in backed],
            label_schema(self.labels),
        )
        rows = []
        for (article, number, q, refs), label in zip(backed, labels):
            if label.error:
                self.fail(article, "label", label.error, q)
            else:
                rows.append(self.row(article, number, q, refs, label.data))
        return rows

    def label_apart(self, backed: list[tuple]) -> list[dict]:
        """Step 5 the paper's way: the type from the question alone, then the regions from the
        article alone (one call per article; several regions joined by ", ")."""
        types = self.ask(
            self.generator,
            label_step_prompt(self.language, self.labels, "label-type"),
            [_question_block(q) for _, _, q, _ in backed],
            {"type": "object", "required": ["type"], "properties": {"type": {"enum": self.labels.type_names}}},
        )
        regions = self.regions([a for a, _, _, _ in backed])
        rows = []
        for (article, number, q, refs), kind in zip(backed, types):
            region = regions.get((article["wiki"], article["page_id"]))
            if kind.error or isinstance(region, Exception):
                self.fail(article, "label", kind.error or str(region), q)
            else:
                rows.append(self.row(article, number, q, refs, {"type": kind.data["type"], "region": region}))
        return rows

    def regions(self, articles: list[dict]) -> dict:
        """``{(wiki, page_id): region}`` of each article (an ``Exception`` where the call
        failed); empty with Wikidata regions, which the rows take from the corpus."""
        if self.labels.region_source == WIKIDATA:
            return {}
        unique = list({(a["wiki"], a["page_id"]): a for a in articles}.items())
        asked = self.ask(
            self.generator,
            label_step_prompt(self.language, self.labels, "label-region"),
            [_article_text(a, self.config.max_article_chars) for _, a in unique],
            region_step_schema(self.labels),
        )
        order = self.labels.region_names
        return {
            key: Exception(result.error)
            if result.error
            else ", ".join(sorted(set(result.data["regions"]), key=order.index))
            for (key, _), result in zip(unique, asked)
        }

    def deduplicate(self, rows: list[dict]) -> list[dict]:
        """Step 6: drop each question (with its answer) too close to an earlier one of the
        set (:func:`near_duplicates`), naming the question it repeats."""
        found = near_duplicates([r["question"] + "\n" + r["answer"] for r in rows], self.config.duplicate_threshold)
        for i, (j, similarity) in found.items():
            row, kept = rows[i], rows[j]
            self.fail(
                row,
                "duplicate",
                f"a near-duplicate (similarity {similarity:.2f}) of question {kept['id']} "
                f"of {kept['title']!r}: {kept['question']} ({kept['answer']})",
                {k: row[k] for k in ("question", "choices", "answer")},
            )
        return [row for i, row in enumerate(rows) if i not in found]

    def row(self, article, number, q, refs, label) -> dict:
        details = {r["number"]: r["text"] for r in article["references"] if not r["group"]}
        key = f"{article['wiki']}:{article['page_id']}:{number}:{self.version}"
        return {
            "id": hashlib.sha1(key.encode()).hexdigest()[:16],
            "question": q["question"],
            "choices": q["choices"],
            "answer": q["answer"],
            "answer_index": None,
            "type": label["type"],
            "region": article.get("region") if self.labels.region_source == WIKIDATA else label["region"],
            "ref": refs,
            "refs_detail": [details[r] for r in refs],
            "url": article["url"],
            "title": article["title"],
            "qid": article.get("qid"),
            "wiki": article["wiki"],
            "page_id": article["page_id"],
            "language": self.language,
            "generator": self.generator.backend.model,
            "checker": self.checker.backend.model,
            "prompt_sha1": self.version,
            "source_revision_id": article["revision_id"],
        }


# What the builder reads of an article corpus (``wikiorigin corpus yokai`` or ``corpus origin``).
ARTICLE_COLUMNS = ("wiki", "page_id", "title", "revision_id", "url", "text", "references")
_ALSO_USED = ("qid", "region")  # read where the corpus has them
_STAGE = "wikiorigin corpus yokai (or corpus origin)"


def _check_regions(has_region: bool, path, labels: Labels) -> None:
    """With Wikidata regions, the corpus must carry ``region`` (``corpus origin``'s)."""
    if labels.region_source == WIKIDATA and not has_region:
        raise ParameterError(
            "labels",
            f"{path}: no region column, which the labels {labels.source} take from "
            "Wikidata (build the corpus with `wikiorigin corpus origin`, or give "
            "{labels} with region classes)",
        )


def _default_labels(rows: list[dict], has_region: bool, path, language: str | None = None) -> Labels:
    """The labels of a build that names none: ``origin`` for an origin corpus (it has Wikidata
    regions), ``yokai-ja`` for Japanese articles from a list page (``language``, else the
    articles' own); any other corpus needs its culture's own classes."""
    if has_region:
        return load_labels("origin")
    if (language or _articles_language(rows, path)) == "ja":
        return load_labels("yokai-ja")
    raise ParameterError(
        "labels",
        f"{path}: a list-page corpus of {rows[0]['wiki'] if rows else 'no wiki'} and no "
        "labels: give {labels} with its culture's type and region classes (a labels "
        "file, or a preset: yokai-ja, origin)",
    )


def _setup(articles, config: MCQConfig) -> tuple[list[dict], str, Labels]:
    """The articles, the language of the questions and the labels, all checked before any
    call is paid for."""
    config.check()
    language = language_parameter(config.language) if config.language else None
    labels = load_labels(config.labels) if isinstance(config.labels, str) else config.labels
    present = input_schema(articles, ARTICLE_COLUMNS, _STAGE).names
    used = [c for c in (*ARTICLE_COLUMNS, *_ALSO_USED) if c in present]  # not the sections, categories
    table = read_input(articles, ARTICLE_COLUMNS, _STAGE, columns=used)  # read once, checked before any call
    rows, has_region = table.to_pylist(), "region" in table.column_names
    labels = labels or _default_labels(rows, has_region, articles, language)
    _check_regions(has_region, articles, labels)
    return rows, language or _articles_language(rows, articles), labels


class MCQBuilder:
    """The multiple-choice builder: ``MCQBuilder(config).run(articles, llm)`` writes questions
    for the articles of ``articles.parquet`` with the chat model ``llm`` (an
    :class:`~wikiorigin.llm.LLMClient`; any function through
    :class:`~wikiorigin.llm.FunctionBackend`) in the steps of the module's docstring, and
    returns a :class:`~wikiorigin.builders.result.BuildResult` that saves itself. ``config``:
    :class:`MCQConfig` (default: the paper's settings)."""

    def __init__(self, config: MCQConfig | None = None):
        self.config = config or MCQConfig()

    def run(self, articles, llm: LLMClient, *, checker: LLMClient | None = None, out=None) -> BuildResult:
        """Build the set: ``checker`` answers each question with its article (default: ``llm``
        itself; the paper's was a separate, smaller model). ``out``: where the set will be saved,
        checked before any call is paid for. The articles, the language and the labels are
        checked before any call too."""
        config, checker = self.config, checker or llm
        rows, language, labels = _setup(articles, config)
        if out is not None:
            check_build_output(out, [articles])
        report = BuildReport("mcq", articles=len(rows), generated=0)
        run = _Run(llm, checker, config, report, language, labels)
        count = RequestCount([llm, checker])
        rows = screen_inputs(rows, run.fail, _same_article)  # empty and repeated articles: no call
        with llm.session(), checker.session():  # the steps on one loop and HTTP client
            out_rows = run.deduplicate(run.label(run.attribute(run.check(run.generate(rows)))))
        place_answers(out_rows, config.answer_positions, config.seed)  # step 7
        report.kept = len(out_rows)
        count.settle(report)
        report.usage = {"generator": llm.usage.as_dict(), "checker": checker.usage.as_dict()}
        meta = dict(
            articles=input_file(articles),
            language=language,
            labels=labels.name,
            labels_sha1=labels.sha1,
            keep_unreferenced=config.keep_unreferenced,
            per_article=config.per_article,
            seed=config.seed,
            answer_positions=config.answer_positions,
            label_steps=config.label_steps,
            checker_abstains=config.checker_abstains,
            params=llm.params(config.params),  # as sent: no sampling with a reasoning effort
            checker_params=checker.params(config.params),
            generation_params=llm.params(config.generation_params()),
            max_article_chars=config.max_article_chars,
            duplicate_threshold=config.duplicate_threshold,
            generator=llm.backend.model,
            checker=checker.backend.model,
            prompt_sha1=run.version,
            usage=report.usage,
            preset=config.preset,
            llm={"generator": llm.settings(), "checker": checker.settings()},
        )
        return BuildResult(
            "mcq",
            out_rows,
            MCQ,
            run.failed,
            report,
            meta,
            {"generator": llm, "checker": None if checker is llm else checker},
            inputs=(articles,),
        )

    def plan(self, articles, llm: LLMClient) -> dict:
        """A dry run: the generation calls not in the cache and their input tokens; each kept
        question then costs up to three more calls (check, attribute, label; four with the
        labels in two steps)."""
        config = self.config
        rows, language, labels = _setup(articles, config)
        run = _Run(llm, llm, config, BuildReport("mcq"), language, labels)
        rows = screen_inputs(rows, run.fail, _same_article)
        requests = [
            ChatRequest(
                _messages(run.prompt("generate", n=config.per_article), _article_text(a, config.max_article_chars)),
                config.generation_params(),
                run.version,
                _GENERATE,
            )
            for a in rows
        ]
        plan = llm.dry_run(requests)
        later = 3 if config.label_steps == 1 else 4  # check, attribute, label (type and region apart)
        plan["later_calls_at_most"] = later * config.per_article * len(rows)
        return plan


def build_mcq(
    articles, out, generator: LLMClient, checker: LLMClient | None = None, config: MCQConfig | None = None, failed=None
) -> BuildReport:
    """Questions for the articles in ``articles.parquet`` into ``out`` (the ``mcq`` schema);
    dropped rows with their reason into ``failed`` (default ``<out>.failed.parquet``), under
    ``OUT.lock``: :class:`MCQBuilder` run and saved. Returns its report."""
    result = MCQBuilder(config).run(articles, generator, checker=checker, out=out)
    result.save(out, failed=failed)
    return result.report


def plan_mcq(articles, generator: LLMClient, config: MCQConfig | None = None) -> dict:
    """:meth:`MCQBuilder.plan`: the calls a build would make first, and their input tokens."""
    return MCQBuilder(config).plan(articles, generator)
