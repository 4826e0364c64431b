"""The steps of the free-form builder, one pass over the items at a time (generate, refine,
translate, screen for leaks, score, check for giveaways), with the reason of every row dropped;
:mod:`~wikiorigin.builders.freeform` keeps the configuration, the instructions and the builder."""

from __future__ import annotations

import hashlib
from typing import Any
from urllib.parse import quote

from ..languages import language_name, lookup
from ..llm import ChatRequest, LLMClient
from ..schemas import FREEFORM_CRITERIA as CRITERIA
from .freeform_prompts import FREEFORM_PROMPTS, Instructions, freeform_sha1
from .leaks import find_leak
from .result import BuildReport, FailedRows

_QUESTION = {"type": "object", "required": ["question"], "properties": {"question": {"type": "string", "minLength": 1}}}
_TRANSLATE = {
    "type": "object",
    "required": ["question_en", "answer_en"],
    "properties": {"question_en": {"type": "string", "minLength": 1}, "answer_en": {"type": "string"}},
}
_SCORE = {
    "type": "object",
    "required": CRITERIA,
    "properties": {c: {"type": "integer", "minimum": 1, "maximum": 5} for c in CRITERIA},
}
_GIVEAWAY = {
    "type": "object",
    "required": ["gives_away"],
    "properties": {"gives_away": {"type": "boolean"}, "reason": {"type": "string"}},
}
# The steps that judge or convert (translate, score, giveaway, the instructions' translation):
# greedy, so that a re-run asks the same; the writing steps sample with FreeformConfig.params.
CHECK_PARAMS = {"temperature": 0}


def _data(result) -> dict[str, Any]:
    """The JSON object of an answered request (its schema checked it: an object)."""
    data = result.data
    if not isinstance(data, dict):
        raise TypeError(f"expected a JSON object, got {type(data).__name__}")
    return data


def _language(row: dict) -> str:
    return lookup(row["wiki"]).language


def _named(row: dict, english: str | None) -> dict[str, str]:
    """The answers, each with what it is (``title``, ``English title``, ...), the first of equals kept."""
    names = [
        ("title", row["title"]),
        ("English title", row.get("enwiki_title")),
        ("English answer", english),
        ("English label", row.get("label_en")),
        *(("alias", a) for a in row.get("aliases") or []),
    ]
    found: dict[str, str] = {}
    for what, name in names:
        if name and name.strip():
            found.setdefault(name.strip(), what)
    return found


def _answers(row: dict, english: str | None) -> list[str]:
    return list(_named(row, english))


def _request(system: str, user: str, version: str, schema: dict, params: dict) -> ChatRequest:
    return ChatRequest(
        [{"role": "system", "content": system}, {"role": "user", "content": user}], dict(params), version, schema
    )


def article_url(row: dict) -> str:
    """The url of the article a question was written from (attribution: the ``url`` column of
    ``freeform.parquet``): the corpus's ``url``, else made from its wiki and title as
    ``corpus origin`` makes it (:func:`wikiorigin.corpora.articles.page_url`)."""
    if row.get("url"):
        return row["url"]
    page = quote(row["title"].replace(" ", "_"), safe="/:()'!,*")
    anchor = "#" + quote(row["anchor"].replace(" ", "_")) if row.get("anchor") else ""
    return f"https://{lookup(row['wiki']).domain}/wiki/{page}{anchor}"


class _Run:
    def __init__(
        self,
        generator: LLMClient,
        config,  # the build's FreeformConfig (freeform.py imports this module, never the reverse)
        instructions: dict[str, Instructions],
        report: BuildReport,
    ):
        self.llm, self.config, self.sets = generator, config, instructions
        self.versions = {lang: freeform_sha1(s) for lang, s in instructions.items()}
        self.failed = FailedRows(report)
        self.questions: dict[str, str] = {}

    def fail(self, row, step, reason, question: dict | None = None) -> None:
        """Record a dropped item (the ``FAILED`` schema); ``question``: what was made of it so
        far, under the free-form schema's column names."""
        self.failed.add(
            step,
            reason,
            source=row["title"],
            wiki=row["wiki"],
            page_id=row["page_id"],
            qid=row["qid"],
            model=self.llm.backend.model,
            item=question,
        )

    def version(self, row) -> str:
        return self.versions[_language(row)]

    def writing(self, step: str, row: dict, **values) -> ChatRequest:
        """A ``generate`` or ``refine`` request: the instructions in the row's language, the article."""
        system = self.sets[_language(row)].prompt(step, title=row["title"], cutoff=self.config.cutoff, **values)
        text = row["text"][: self.config.max_article_chars or None]
        return _request(system, text, self.version(row), _QUESTION, self.config.params)

    def generate(self, rows: list[dict]) -> list[dict]:
        results = self.llm.run([self.writing("generate", r) for r in rows])
        for row, result in zip(rows, results):
            if result.error:
                self.fail(row, "generate", result.error)
            else:
                self.questions[row["qid"]] = _data(result)["question"]
        return [r for r in rows if r["qid"] in self.questions]

    def refine(self, rows: list[dict]) -> None:
        """One pass, with the article; a failed refinement keeps the question it had."""
        results = self.llm.run([self.writing("refine", r, question=self.questions[r["qid"]]) for r in rows])
        for row, result in zip(rows, results):
            if not result.error:
                self.questions[row["qid"]] = _data(result)["question"]

    def translate(self, rows: list[dict]) -> list[tuple]:
        results = self.llm.run(
            [
                _request(
                    FREEFORM_PROMPTS["translate"].format(title=r["title"]),
                    self.questions[r["qid"]],
                    self.version(r),
                    _TRANSLATE,
                    CHECK_PARAMS,
                )
                for r in rows
            ]
        )
        candidates = []
        for row, result in zip(rows, results):
            if result.error:
                self.fail(row, "translate", result.error, {"question_source": self.questions[row["qid"]]})
                continue
            named = _named(row, _data(result)["answer_en"])
            answers, question_en = list(named), _data(result)["question_en"]
            leak = find_leak(answers, [self.questions[row["qid"]], question_en])
            if leak:
                name, where = answers[leak[0]], ("question", "English question")[leak[1]]
                self.failed.add(
                    "leak",
                    f"the {where} holds the answer {name!r} ({named[name]})",
                    source=row["title"],
                    wiki=row["wiki"],
                    page_id=row["page_id"],
                    qid=row["qid"],
                    model=self.llm.backend.model,
                    item=self.made(row, question_en, answers),
                    kind=f"{named[name]} in the {where}",
                )
            else:
                candidates.append((row, question_en, answers))
        return candidates

    def score(self, candidates: list[tuple]) -> list[tuple]:
        """The candidates with 5 on every criterion, each with its scores."""
        prompt = FREEFORM_PROMPTS["score"].format(cutoff=self.config.cutoff)
        results = self.llm.run(
            [
                _request(prompt, f"Question: {q}\nAnswer: {answers[0]}", self.version(row), _SCORE, CHECK_PARAMS)
                for row, q, answers in candidates
            ]
        )
        kept = []
        for (row, question_en, answers), result in zip(candidates, results):
            if result.error:
                self.fail(row, "score", result.error, self.made(row, question_en, answers))
            elif any(_data(result)[c] != 5 for c in CRITERIA):
                low = ", ".join(f"{c}={_data(result)[c]}" for c in CRITERIA if _data(result)[c] != 5)
                self.fail(
                    row,
                    "score",
                    f"below 5 on {low}",
                    {**self.made(row, question_en, answers), "criteria": {c: _data(result)[c] for c in CRITERIA}},
                )
            else:
                kept.append((row, question_en, answers, result.data))
        return kept

    def giveaway(self, candidates: list[tuple]) -> list[dict]:
        """The output rows of the candidates whose question does not give its answer away."""
        results = self.llm.run(
            [
                _request(
                    FREEFORM_PROMPTS["giveaway"].format(),
                    f"Question ({language_name(_language(row))}): {self.questions[row['qid']]}\n"
                    f"Question in English: {question_en}\nAnswer: {' / '.join(answers)}",
                    self.version(row),
                    _GIVEAWAY,
                    CHECK_PARAMS,
                )
                for row, question_en, answers, _ in candidates
            ]
        )
        rows = []
        for (row, question_en, answers, score), result in zip(candidates, results):
            made = {**self.made(row, question_en, answers), "criteria": {c: score[c] for c in CRITERIA}}
            if result.error:
                self.fail(row, "giveaway", result.error, made)
            elif _data(result)["gives_away"]:
                why = (_data(result).get("reason") or "").strip()
                self.fail(row, "giveaway", "the question gives its answer away" + (f": {why}" if why else ""), made)
            else:
                rows.append(self.row(row, question_en, answers, score))
        return rows

    def made(self, row, question_en, answers) -> dict:
        """What a candidate is so far, under the free-form schema's names (for the failed file)."""
        return {"question_source": self.questions[row["qid"]], "question": question_en, "answers": answers}

    def row(self, row, question_en, answers, score) -> dict:
        return {
            "id": hashlib.sha1(f"{row['qid']}:{self.version(row)}".encode()).hexdigest()[:16],
            "question": question_en,
            "question_source": self.questions[row["qid"]],
            "answers": answers,
            "qid": row["qid"],
            "origin_wiki": row["origin_wiki"],
            "title": row["title"],
            "url": article_url(row),
            "n_wikis": row["n_wikis"],
            "has_enwiki": bool(row.get("enwiki_title")),
            "criteria": {c: score[c] for c in CRITERIA},
            "language": _language(row),
            "generator": self.llm.backend.model,
            "prompt_sha1": self.version(row),
            "source_revision_id": row["revision_id"],
        }
