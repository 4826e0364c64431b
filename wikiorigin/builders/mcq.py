"""YokaiEval-style 4-option questions from ``articles.parquet``.

Steps, each with a reason for every row it drops (kept in the ``failed`` file):

1. **generate** ``per_article`` questions per article (JSON), under the paper's conditions;
2. **validate**: four distinct non-empty options, the answer among them;
3. **deduplicate** near-identical questions of one article (character-bigram Jaccard);
4. **check**: a checker model answers with the article; only questions it gets right stay;
5. **attribute**: the model names the footnotes that back the answer; numbers the article does
   not have are dropped, and a question with none left is dropped;
6. **label** type (the paper's 6) and region (11 classes) into clean values (enum schema);
7. **shuffle** the options with a seeded RNG so that the correct position is balanced over
   the set (0, 1, 2, 3 in turn over a seeded order), not left where the model put it.

Every LLM call goes through :class:`~wikiorigin.llm.LLMClient`: a re-run pays for nothing
twice, and a run killed half-way resumes from the cache.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from dataclasses import dataclass, field

import pyarrow as pa

from ..files import ParquetSink, check_output, provenance, read_input
from ..llm import ChatRequest, LLMClient
from ..schemas import FAILED, MCQ
from .prompts import MCQ_PROMPTS, REGIONS, TYPES, prompt_sha1

__all__ = ["MCQConfig", "MCQReport", "build_mcq", "plan_mcq", "balance_positions", "near_duplicates"]

_GENERATE = {"type": "object", "required": ["questions"], "properties": {"questions": {
    "type": "array", "items": {"type": "object", "required": ["question", "choices", "answer"],
                               "properties": {"question": {"type": "string"},
                                              "choices": {"type": "array", "items": {"type": "string"}},
                                              "answer": {"type": "string"}}}}}}
_CHECK = {"type": "object", "required": ["answer_index"],
          "properties": {"answer_index": {"type": ["integer", "null"]}}}
_ATTRIBUTE = {"type": "object", "required": ["refs"],
              "properties": {"refs": {"type": "array", "items": {"type": "integer"}}}}
_LABEL = {"type": "object", "required": ["type", "region"],
          "properties": {"type": {"enum": TYPES}, "region": {"enum": REGIONS}}}


@dataclass(slots=True)
class MCQConfig:
    """Settings of :func:`build_mcq` that change the questions: the prompt ``language``,
    questions ``per_article``, the ``seed`` of option shuffling, the article length sent
    (``max_article_chars``), the similarity above which a question is a near duplicate
    (``duplicate_threshold``) and the sampling ``params``. They are recorded in the output's
    provenance."""

    language: str = "ja"
    per_article: int = 1
    seed: int = 0
    max_article_chars: int = 12_000
    duplicate_threshold: float = 0.8
    params: dict = field(default_factory=lambda: {"temperature": 0.7})


@dataclass(slots=True)
class MCQReport:
    """What :func:`build_mcq` did: articles read, questions generated and kept, and the count
    dropped at each step (``dropped``; :meth:`drop` adds one)."""

    articles: int = 0
    generated: int = 0
    kept: int = 0
    dropped: dict = field(default_factory=dict)

    def drop(self, step: str) -> None:
        """Count one question dropped at ``step``."""
        self.dropped[step] = self.dropped.get(step, 0) + 1


def _article_text(row: dict, limit: int) -> str:
    return f"{row['title']}\n\n{row['text'][:limit]}"


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


def _bigrams(text: str) -> set[str]:
    text = re.sub(r"\s+", "", text)
    return {text[i : i + 2] for i in range(len(text) - 1)} or {text}


def near_duplicates(questions: list[str], threshold: float) -> list[int]:
    """Indexes of questions too similar (bigram Jaccard >= threshold) to an earlier one."""
    seen, drop = [], []
    for i, text in enumerate(questions):
        grams = _bigrams(text)
        if any(len(grams & g) / len(grams | g) >= threshold for g in seen):
            drop.append(i)
        else:
            seen.append(grams)
    return drop


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


def _deduplicate(candidates: list[tuple], threshold: float, fail) -> list[tuple]:
    """Drop near-identical questions of one article (before any more calls are paid for)."""
    by_article: dict[int, list] = {}
    for item in candidates:
        by_article.setdefault(item[0]["page_id"], []).append(item)
    kept = []
    for items in by_article.values():
        drop = set(near_duplicates([q["question"] for _, _, q in items], threshold))
        for i, item in enumerate(items):
            if i in drop:
                fail(item[0], "deduplicate", "a near-duplicate of another question", item[2])
            else:
                kept.append(item)
    return kept


def _messages(system: str, user: str) -> list[dict]:
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


class _Run:
    """One build: the clients, the prompts and the rows dropped so far, step by step."""

    def __init__(self, generator: LLMClient, checker: LLMClient, config: MCQConfig, report: MCQReport):
        self.generator, self.checker, self.config, self.report = generator, checker, config, report
        self.prompts = MCQ_PROMPTS[config.language]
        self.version = prompt_sha1(config.language)
        self.failures: list[dict] = []

    def fail(self, article, step, reason, question: dict | None = None) -> None:
        """Record a dropped article or question (the ``FAILED`` schema); ``question`` as the
        generator wrote it."""
        self.report.drop(step)
        self.failures.append({"step": step, "reason": reason, "source": article["title"], "wiki": article["wiki"],
                              "page_id": article["page_id"], "qid": article.get("qid"),
                              "model": self.generator.backend.model,
                              "item": None if question is None else json.dumps(question, ensure_ascii=False)})

    def ask(self, client: LLMClient, prompt: str, users: list[str], schema, params=None):
        return client.run([ChatRequest(_messages(prompt, user), dict(params or {"temperature": 0}),
                                       self.version, schema) for user in users])

    def generate(self, rows: list[dict]) -> list[tuple]:
        """Steps 1-3: generate, validate, drop near-duplicates."""
        limit, n = self.config.max_article_chars, self.config.per_article
        asked = self.ask(self.generator, self.prompts["generate"].format(n=n),
                         [_article_text(a, limit) for a in rows], _GENERATE, self.config.params)
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
        return _deduplicate(candidates, self.config.duplicate_threshold, self.fail)

    def check(self, candidates: list[tuple]) -> list[tuple]:
        """Step 4: keep what the checker answers right with the article in front of it."""
        limit = self.config.max_article_chars
        checks = self.ask(self.checker, self.prompts["check"],
                          [_article_text(a, limit) + "\n\n" + _question_block(q) for a, _, q in candidates],
                          _CHECK)
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
        """Step 5: the footnotes that back the answer (only the article's own numbers)."""
        limit = self.config.max_article_chars
        answers = self.ask(self.generator, self.prompts["attribute"],
                           [_article_text(a, limit) + "\n\n" + _question_block(q) + f"\n正解/answer: {q['answer']}"
                            for a, _, q in grounded], _ATTRIBUTE)
        kept = []
        for (article, number, q), result in zip(grounded, answers):
            numbers = {r["number"] for r in article["references"] if not r["group"]}
            refs = sorted({x for x in (result.data or {}).get("refs", []) if x in numbers})
            if result.error:
                self.fail(article, "attribute", result.error, q)
            elif not refs:
                self.fail(article, "attribute", "no footnote of the article backs it", q)
            else:
                kept.append((article, number, q, refs))
        return kept

    def label(self, backed: list[tuple]) -> list[dict]:
        """Step 6: type and region, then the output rows."""
        prompt = self.prompts["label"].format(types=", ".join(TYPES), regions=", ".join(REGIONS))
        labels = self.ask(self.generator, prompt,
                          [_article_text(a, 2000) + "\n\n" + _question_block(q) for a, _, q, _ in backed], _LABEL)
        rows = []
        for (article, number, q, refs), label in zip(backed, labels):
            if label.error:
                self.fail(article, "label", label.error, q)
            else:
                rows.append(self.row(article, number, q, refs, label.data))
        return rows

    def row(self, article, number, q, refs, label) -> dict:
        details = {r["number"]: r["text"] for r in article["references"] if not r["group"]}
        key = f"{article['wiki']}:{article['page_id']}:{number}:{self.version}"
        return {
            "id": hashlib.sha1(key.encode()).hexdigest()[:16],
            "question": q["question"], "choices": q["choices"], "answer": q["answer"],
            "answer_index": None, "type": label["type"], "region": label["region"],
            "ref": refs, "refs_detail": [details[r] for r in refs], "url": article["url"],
            "title": article["title"], "qid": article.get("qid"), "wiki": article["wiki"],
            "page_id": article["page_id"], "language": self.config.language,
            "generator": self.generator.backend.model, "checker": self.checker.backend.model,
            "prompt_sha1": self.version, "source_revision_id": article["revision_id"],
        }


# What the builder reads of an article corpus (``wikiorigin corpus yokai`` or ``corpus origin``).
ARTICLE_COLUMNS = ("wiki", "page_id", "title", "revision_id", "url", "text", "references")


def read_articles(path) -> list[dict]:
    """The rows of an article corpus, checked before any call is paid for."""
    return read_input(path, ARTICLE_COLUMNS, "wikiorigin corpus yokai (or corpus origin)").to_pylist()


def build_mcq(articles, out, generator: LLMClient, checker: LLMClient | None = None,
              config: MCQConfig | None = None, failed=None) -> MCQReport:
    """Questions for the articles in ``articles.parquet`` into ``out`` (the ``mcq`` schema);
    dropped rows with their reason into ``failed`` (default ``<out>.failed.parquet``)."""
    config = config or MCQConfig()
    checker = checker or generator
    rows = read_articles(articles)
    check_output(out)
    report = MCQReport(articles=len(rows))
    run = _Run(generator, checker, config, report)
    out_rows = run.label(run.attribute(run.check(run.generate(rows))))
    balance_positions(out_rows, config.seed)  # step 7
    report.kept = len(out_rows)
    usage = {"generator": generator.usage.as_dict(), "checker": checker.usage.as_dict()}
    meta = provenance(stage="build", builder="mcq", articles=str(articles), language=config.language,
                      per_article=config.per_article, seed=config.seed, generator=generator.backend.model,
                      checker=checker.backend.model, prompt_sha1=run.version, usage=usage)
    with ParquetSink(out, MCQ, meta) as sink:
        sink.write(pa.Table.from_pylist(out_rows, schema=MCQ))
    failed = failed or str(out).removesuffix(".parquet") + ".failed.parquet"
    with ParquetSink(failed, FAILED, meta) as sink:
        sink.write(pa.Table.from_pylist(run.failures, schema=FAILED))
    return report


def plan_mcq(articles, generator: LLMClient, config: MCQConfig | None = None) -> dict:
    """A dry run: the generation calls not in the cache and their input tokens; each kept
    question then costs up to three more calls (check, attribute, label)."""
    config = config or MCQConfig()
    rows = read_articles(articles)
    run = _Run(generator, generator, config, MCQReport())
    requests = [ChatRequest(_messages(run.prompts["generate"].format(n=config.per_article),
                                      _article_text(a, config.max_article_chars)),
                            dict(config.params), run.version, _GENERATE) for a in rows]
    plan = generator.dry_run(requests)
    plan["later_calls_at_most"] = 3 * config.per_article * len(rows)
    return plan
