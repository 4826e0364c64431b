"""WikiOriginQA-style free-form questions whose answer is an item's name.

From an origin corpus (``wikiorigin corpus origin``): for each article, a question in the
item's language (``question_source``) is generated, refined over ``rounds`` passes, translated
to English (``question``, with the model's English rendering of the answer) and scored 1-5 on
the paper's seven criteria; only questions with 5 on every criterion are kept. The answers are
the source title, the English Wikipedia title, the model's English rendering and the Wikidata
names and aliases. A question that contains one of its answers is dropped before scoring.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

import pyarrow as pa

from ..files import ParquetSink, check_output, provenance, read_input
from ..languages import language_name, lookup
from ..llm import ChatRequest, LLMClient
from ..schemas import FAILED, FREEFORM, FREEFORM_CRITERIA as CRITERIA
from .prompts import FREEFORM_PROMPTS, freeform_sha1

__all__ = ["FreeformConfig", "build_freeform", "plan_freeform"]

_QUESTION = {"type": "object", "required": ["question"], "properties": {"question": {"type": "string", "minLength": 1}}}
_TRANSLATE = {"type": "object", "required": ["question_en", "answer_en"],
              "properties": {"question_en": {"type": "string", "minLength": 1}, "answer_en": {"type": "string"}}}
_SCORE = {"type": "object", "required": CRITERIA,
          "properties": {c: {"type": "integer", "minimum": 1, "maximum": 5} for c in CRITERIA}}


@dataclass(slots=True)
class FreeformConfig:
    """Settings of :func:`build_freeform` that change the questions: ``rounds`` of generation
    per article, the knowledge ``cutoff`` (``YYYY-MM``) a question must be answerable by, the
    article length sent (``max_article_chars``) and the sampling ``params``. They are recorded in
    the output's provenance."""

    rounds: int = 1
    cutoff: str = "2023-12"
    max_article_chars: int = 6000
    params: dict = field(default_factory=lambda: {"temperature": 0.7})


def _language_name(wiki: str) -> str:
    """The English name of the wiki's language, as the MCQ builder names it (never a bare code)."""
    return language_name(lookup(wiki).language)


def _answers(row: dict, english: str | None) -> list[str]:
    names = [row["title"], row.get("enwiki_title"), english, row.get("label_en"), *(row.get("aliases") or [])]
    return list(dict.fromkeys(n.strip() for n in names if n and n.strip()))


def _request(system: str, user: str, version: str, schema: dict, params=None) -> ChatRequest:
    return ChatRequest([{"role": "system", "content": system}, {"role": "user", "content": user}],
                       dict(params or {"temperature": 0}), version, schema)


class _Run:
    def __init__(self, generator: LLMClient, config: FreeformConfig):
        self.llm, self.config, self.version = generator, config, freeform_sha1()
        self.counts: dict[str, int] = {}
        self.failures: list[dict] = []
        self.questions: dict[str, str] = {}

    def fail(self, row, step, reason, question: dict | None = None) -> None:
        """Record a dropped item (the ``FAILED`` schema); ``question``: what was made of it so
        far, under the free-form schema's column names."""
        self.counts[step] = self.counts.get(step, 0) + 1
        self.failures.append({"step": step, "reason": reason, "source": row["title"], "wiki": row["wiki"],
                              "page_id": row["page_id"], "qid": row["qid"], "model": self.llm.backend.model,
                              "item": None if question is None else json.dumps(question, ensure_ascii=False)})

    def generate(self, rows: list[dict]) -> list[dict]:
        prompt = FREEFORM_PROMPTS["generate"]
        results = self.llm.run([_request(prompt.format(language=_language_name(r["wiki"]), title=r["title"]),
                                         r["text"][: self.config.max_article_chars], self.version,
                                         _QUESTION, self.config.params) for r in rows])
        for row, result in zip(rows, results):
            if result.error:
                self.fail(row, "generate", result.error)
            else:
                self.questions[row["qid"]] = result.data["question"]
        return [r for r in rows if r["qid"] in self.questions]

    def refine(self, rows: list[dict]) -> None:
        """One pass; a failed refinement keeps the question it had."""
        prompt = FREEFORM_PROMPTS["refine"]
        results = self.llm.run([_request(prompt.format(language=_language_name(r["wiki"]), title=r["title"]),
                                         self.questions[r["qid"]], self.version, _QUESTION) for r in rows])
        for row, result in zip(rows, results):
            if not result.error:
                self.questions[row["qid"]] = result.data["question"]

    def translate(self, rows: list[dict]) -> list[tuple]:
        results = self.llm.run([_request(FREEFORM_PROMPTS["translate"].format(title=r["title"]),
                                         self.questions[r["qid"]], self.version, _TRANSLATE) for r in rows])
        candidates = []
        for row, result in zip(rows, results):
            if result.error:
                self.fail(row, "translate", result.error, {"question_source": self.questions[row["qid"]]})
                continue
            answers = _answers(row, result.data["answer_en"])
            asked = f"{self.questions[row['qid']]}\n{result.data['question_en']}".casefold()
            leak = next((a for a in answers if a.casefold() in asked), None)
            if leak:
                self.fail(row, "leak", f"the question contains the answer {leak!r}",
                          self.made(row, result.data["question_en"], answers))
            else:
                candidates.append((row, result.data["question_en"], answers))
        return candidates

    def score(self, candidates: list[tuple]) -> list[dict]:
        prompt = FREEFORM_PROMPTS["score"].format(cutoff=self.config.cutoff)
        results = self.llm.run([_request(prompt, f"Question: {q}\nAnswer: {answers[0]}", self.version, _SCORE)
                                for _, q, answers in candidates])
        rows = []
        for (row, question_en, answers), result in zip(candidates, results):
            if result.error:
                self.fail(row, "score", result.error, self.made(row, question_en, answers))
            elif any(result.data[c] != 5 for c in CRITERIA):
                low = ", ".join(f"{c}={result.data[c]}" for c in CRITERIA if result.data[c] != 5)
                self.fail(row, "score", f"below 5 on {low}",
                          {**self.made(row, question_en, answers), "criteria": {c: result.data[c] for c in CRITERIA}})
            else:
                rows.append(self.row(row, question_en, answers, result.data))
        return rows

    def made(self, row, question_en, answers) -> dict:
        """What a candidate is so far, under the free-form schema's names (for the failed file)."""
        return {"question_source": self.questions[row["qid"]], "question": question_en, "answers": answers}

    def row(self, row, question_en, answers, score) -> dict:
        return {
            "id": hashlib.sha1(f"{row['qid']}:{self.version}".encode()).hexdigest()[:16],
            "question": question_en, "question_source": self.questions[row["qid"]], "answers": answers,
            "qid": row["qid"], "origin_wiki": row["origin_wiki"], "title": row["title"],
            "n_wikis": row["n_wikis"], "has_enwiki": bool(row.get("enwiki_title")),
            "criteria": {c: score[c] for c in CRITERIA}, "language": lookup(row["wiki"]).language,
            "generator": self.llm.backend.model, "prompt_sha1": self.version,
            "source_revision_id": row["revision_id"],
        }


# What the builder reads of an origin corpus (``wikiorigin corpus origin``'s articles).
ORIGIN_ARTICLE_COLUMNS = ("wiki", "page_id", "title", "qid", "revision_id", "text", "origin_wiki", "n_wikis")


def read_origin_articles(path) -> list[dict]:
    """The rows of an origin corpus, checked before any call is paid for."""
    return read_input(path, ORIGIN_ARTICLE_COLUMNS, "wikiorigin corpus origin").to_pylist()


def build_freeform(articles, out, generator: LLMClient, config: FreeformConfig | None = None) -> dict:
    """Questions for the origin corpus ``articles`` into ``out`` (the ``freeform`` schema);
    dropped ones with their reason into ``<out>.failed.parquet``. Returns counts per step."""
    config = config or FreeformConfig()
    rows = read_origin_articles(articles)
    check_output(out, inputs=[articles])
    run = _Run(generator, config)
    live = run.generate(rows)
    for _ in range(config.rounds):
        run.refine(live)
    out_rows = run.score(run.translate(live))
    counts = {"articles": len(rows), **run.counts, "kept": len(out_rows)}
    meta = provenance(stage="build", builder="freeform", articles=str(articles), rounds=config.rounds,
                      cutoff=config.cutoff, generator=generator.backend.model, prompt_sha1=run.version,
                      usage=generator.usage.as_dict())
    with ParquetSink(out, FREEFORM, meta) as sink:
        sink.write(pa.Table.from_pylist(out_rows, schema=FREEFORM))
    with ParquetSink(str(out).removesuffix(".parquet") + ".failed.parquet", FAILED, meta) as sink:
        sink.write(pa.Table.from_pylist(run.failures, schema=FAILED))
    return counts


def plan_freeform(articles, generator: LLMClient, config: FreeformConfig | None = None) -> dict:
    """A dry run: the generation calls not in the cache and their input tokens; each question
    then costs ``rounds`` + 2 more calls (refine, translate, score)."""
    config = config or FreeformConfig()
    rows = read_origin_articles(articles)
    version = freeform_sha1()
    plan = generator.dry_run([
        _request(FREEFORM_PROMPTS["generate"].format(language=_language_name(r["wiki"]), title=r["title"]),
                 r["text"][: config.max_article_chars], version, _QUESTION, config.params) for r in rows])
    plan["later_calls_at_most"] = (config.rounds + 2) * len(rows)
    return plan
