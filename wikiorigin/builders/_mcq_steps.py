"""The steps of ``build mcq`` (:class:`~wikiorigin.builders.mcq.MCQBuilder`) one article at a
time: the requests of each step (generate, check, attribute, label) and their schemas, what an
answer must hold to go on, and the near-duplicates among the questions kept."""

from __future__ import annotations

import hashlib
import unicodedata

import numpy as np
from rapidfuzz import fuzz, process

from ..errors import WikioriginError
from ..labels import WIKIDATA, Labels, join_regions
from ..llm import ChatRequest, LLMClient
from .prompts import (
    label_prompt,
    label_schema,
    label_step_prompt,
    mcq_prompt,
    own_prompts,
    prompt_sha1,
    region_step_schema,
)
from .result import BuildReport, FailedRows

__all__ = ["near_duplicates"]


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


_ATTRIBUTE = {
    "type": "object",
    "required": ["refs"],
    "properties": {"refs": {"type": "array", "items": {"type": "integer"}}},
}


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
        config,  # the build's MCQConfig (mcq.py imports this module, never the reverse)
        report: BuildReport,
        language: str,
        labels: Labels,
    ):
        self.generator, self.checker, self.config, self.report = generator, checker, config, report
        self.language, self.labels = language, labels
        self.own = own_prompts(language, labels)  # a culture's own prompts, when the labels ask
        self.answer_label = self.own.answer_label if self.own else "answer"  # in the attribute request
        self.version = prompt_sha1(
            language,
            labels.region_source,
            self.own,
            label_steps=config.label_steps,
            abstain=config.checker_abstains,
        )
        self.failed = FailedRows(report)

    def prompt(self, step: str, **fields) -> str:
        """The system prompt of ``step`` in this build's language (the paper's check when the
        checker may not abstain)."""
        paper = step == "check" and not self.config.checker_abstains
        return mcq_prompt(self.language, step, self.labels.subject, own=self.own, paper=paper, **fields)

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
                self.report.generated = (self.report.generated or 0) + 1
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
                    _article_text(a, limit) + "\n\n" + _question_block(q) + f"\n{self.answer_label}: {q['answer']}"
                    for a, _, q in todo
                ],
                _ATTRIBUTE,
            )
        )
        kept: list[tuple] = []
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
        (``max_article_chars``): where a subject is told of is often said well into it."""
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
        article alone (one call per article; several regions joined by :data:`~wikiorigin.labels.REGION_SEPARATOR`)."""
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
            key: Exception(result.error) if result.error else join_regions(result.data["regions"], order)
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
