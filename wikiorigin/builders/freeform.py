"""WikiOriginQA-style free-form questions whose answer is an item's name.

From an origin corpus (``wikiorigin corpus origin``): for each article, a question in the
item's language (``question_source``) is generated from the article, refined over ``rounds``
passes (each sees the article and the current question), translated to English (``question``,
with the model's English rendering of the answer), scored 1-5 on the paper's seven criteria
(only questions with 5 on every criterion are kept) and, last, checked by the model for giving
its answer away. The answers are the source title, the English Wikipedia title, the model's
English rendering and the Wikidata names and aliases. A question (in the item's language or in
English) that holds one of its answers as a word (:mod:`~wikiorigin.builders.leaks`: word
boundaries in spaced scripts, substrings of two or more characters in scripts without spaces)
is dropped before scoring (``leak``), counted by which name and which question in the report's
``reasons``.

Generation and refinement are instructed in the item's language, as in the paper
(:mod:`~wikiorigin.builders.freeform_prompts`): the package's instruction file for the
language, else the English ones translated once by the generator model (one call, cached; the
translation is written beside the output as ``OUT.instructions.json``), or English throughout
with ``instructions="en"``. The provenance records which were used.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from ..files import read_input, write_text
from ..llm import ChatRequest, LLMClient
from ..llm.client import REASONING_EFFORTS, parse_json
from ..schemas import FREEFORM
from ._freeform_steps import CHECK_PARAMS, _data, _language, _Run, article_url
from .freeform_prompts import (
    Instructions,
    bundled_instructions,
    freeform_sha1,
    translated_instructions,
    translation_request,
    translation_schema,
)
from .presets import configured
from .result import (
    BuildReport,
    BuildResult,
    RequestCount,
    check_instructions,
    input_file,
    saved_run,
    screen_inputs,
    sibling_path,
)

__all__ = ["FreeformConfig", "FreeformBuilder", "build_freeform", "plan_freeform", "instructions_path", "article_url"]


@dataclass(slots=True)
class FreeformConfig:
    """Settings of :func:`build_freeform` that change the questions, all recorded in the
    output's provenance.

    ``rounds``: refinement passes per question, 3 by default: the paper refined each question
    several times, and each pass costs one call per question (a pass that gives a question back
    unchanged makes the next pass's request the same one, a cache hit). ``cutoff`` (``YYYY-MM``):
    the knowledge cut-off a question must be answerable by. ``max_article_chars``: the article
    length sent to generation and refinement (0: the whole article; the paper states no cut).
    ``params``: the sampling of generation and refinement (temperature 0.7, our choice: the
    paper states none, its GPT-5 took a reasoning effort and no temperature); the other steps
    are greedy (temperature 0). With a reasoning effort no sampling parameter is sent at all,
    and the provenance records what was sent.
    ``instructions``: ``"auto"`` (in the item's language: bundled, else translated once by the
    generator) or ``"en"`` (English). ``reasoning_effort``: the generator's, given to a client
    that has none of its own (None: the client's). :meth:`from_preset` makes one with a paper's
    settings (``wikioriginqa``: effort low, 3 rounds, the whole article), recorded as ``preset``."""

    rounds: int = 3
    cutoff: str = "2023-12"
    max_article_chars: int = 6000
    params: dict = field(default_factory=lambda: {"temperature": 0.7})
    instructions: str = "auto"
    reasoning_effort: str | None = None
    _preset: str | None = field(default=None, init=False, repr=False)  # set by from_preset only

    @classmethod
    def from_preset(cls, name: str, **overrides) -> FreeformConfig:
        """The settings of the preset ``name`` (:data:`~wikiorigin.builders.presets.PRESETS`:
        ``wikioriginqa``), the ``overrides`` (any field) winning; a ``ValueError`` for another
        builder's preset or an unknown name."""
        return configured(cls, "freeform", name, overrides)

    @property
    def preset(self) -> str | None:
        """The preset this configuration was made from (:meth:`from_preset`), else None."""
        return self._preset

    def check(self) -> None:
        """Raise ``ValueError`` for a setting out of range."""
        if self.reasoning_effort is not None and self.reasoning_effort not in REASONING_EFFORTS:
            raise ValueError(
                f"FreeformConfig: reasoning_effort is one of {', '.join(REASONING_EFFORTS)}, "
                f"not {self.reasoning_effort!r}"
            )
        if self.instructions not in ("auto", "en"):
            raise ValueError(f"FreeformConfig: instructions must be 'auto' or 'en', not {self.instructions!r}")
        if self.rounds < 0 or self.max_article_chars < 0:
            raise ValueError(
                f"FreeformConfig: rounds must be >= 0 and max_article_chars >= 0 (0: the whole article), not "
                f"{self.rounds} and {self.max_article_chars}"
            )


def instructions_path(out) -> Path:
    """Where :func:`build_freeform` writes the instructions the generator translated:
    ``OUT.instructions.json`` beside ``OUT.parquet`` (one of the build's
    :data:`~wikiorigin.builders.result.SIBLINGS`)."""
    return sibling_path(out, "instructions")


def _same_item(row: dict) -> list[tuple]:
    """What makes two rows of an origin corpus one: the same item (a question's id is its item's)."""
    return [(f"item ({row['qid']})", ("qid", row["qid"]))]


def _translation(language: str) -> ChatRequest:
    messages, version = translation_request(language)
    return ChatRequest(messages, dict(CHECK_PARAMS), version, translation_schema())


def _english(language: str) -> Instructions:
    """The English instructions, for questions in ``language``."""
    english = bundled_instructions("en")
    if english is None:
        raise RuntimeError("the package's English instructions are missing: reinstall wikiorigin")
    return Instructions(language, "en", english.generate, english.refine, english.name, english.note)


def _offline(language: str, config: FreeformConfig) -> Instructions | None:
    """The instructions that need no call: English when asked, else the bundled file."""
    return _english(language) if config.instructions == "en" else bundled_instructions(language)


def _instructions(languages, config: FreeformConfig, generator: LLMClient) -> tuple[dict, dict]:
    """The instructions for each language, and the error of each whose translation failed.
    The languages without a file are translated in one batch of calls (cached)."""
    found = {lang: _offline(lang, config) for lang in languages}
    todo = [lang for lang, s in found.items() if s is None]
    errors = {}
    for lang, result in zip(todo, generator.run([_translation(lang) for lang in todo]) if todo else []):
        if result.error:
            errors[lang] = result.error
        else:
            found[lang] = translated_instructions(lang, _data(result), generator.backend.model)
    return {k: v for k, v in found.items() if v is not None}, errors


def _cached_translation(language: str, generator: LLMClient) -> Instructions | None:
    """The translation a run would use when the cache holds a valid one (a dry run makes no call)."""
    import jsonschema

    request = _translation(language)
    hit = generator.cache.get(generator.key(request)) if generator.cache is not None else None
    if hit is None or not isinstance(hit.get("text"), str):  # none, or a damaged row: the run asks again
        return None
    try:
        data = parse_json(hit["text"])
        jsonschema.validate(data, request.schema)
    except (ValueError, jsonschema.ValidationError):
        return None
    if not isinstance(data, dict):
        return None
    return translated_instructions(language, data, generator.backend.model)


# What the builder reads of an origin corpus (``wikiorigin corpus origin``'s articles), and
# what it reads where the corpus has it (the names of the answers, the article's url).
ORIGIN_ARTICLE_COLUMNS = ("wiki", "page_id", "title", "qid", "revision_id", "text", "origin_wiki", "n_wikis")
_OPTIONAL = ("url", "anchor", "label_en", "aliases", "enwiki_title")


def read_origin_articles(path) -> list[dict]:
    """The rows of an origin corpus, checked (columns, types, nulls) before any call is paid for."""
    return read_input(path, ORIGIN_ARTICLE_COLUMNS, "wikiorigin corpus origin", optional=_OPTIONAL).to_pylist()


def _prompt_sha1(versions: dict[str, str]) -> str:
    """The prompt hash of a build: its one language's, or a hash of each language's."""
    if not versions:
        return freeform_sha1()
    if len(versions) == 1:
        return next(iter(versions.values()))
    return hashlib.sha1("\x00".join(f"{k}={v}" for k, v in sorted(versions.items())).encode()).hexdigest()


def _write_instructions(out, sets: dict[str, Instructions]) -> dict[str, str]:
    """``OUT.instructions.json``: the translated sets by language, as instruction files hold
    them (a stale one from an earlier run is removed); returns each translated set's file name."""
    path = instructions_path(out)
    check_instructions(path)
    translated = {lang: s for lang, s in sorted(sets.items()) if s.source.startswith("translated")}
    if not translated:
        path.unlink(missing_ok=True)
        return {}
    write_text(
        path, json.dumps({lang: s.as_file() for lang, s in translated.items()}, ensure_ascii=False, indent=2) + "\n"
    )
    return {lang: path.name for lang in translated}


def _use_effort(llm: LLMClient, effort: str | None) -> None:
    """Give ``llm`` the configuration's reasoning ``effort`` when it has none of its own (a
    client's own effort wins)."""
    if effort is not None and llm.reasoning_effort is None:
        llm.reasoning_effort = effort


class FreeformBuilder:
    """The free-form builder: ``FreeformBuilder(config).run(articles, llm)`` writes questions
    for the origin corpus ``articles`` (``wikiorigin corpus origin``'s) with the chat model
    ``llm`` (an :class:`~wikiorigin.llm.LLMClient`) in the steps of the module's docstring,
    and returns a :class:`~wikiorigin.builders.result.BuildResult` that saves itself (with the
    instructions the generator translated beside the set: ``OUT.instructions.json``).
    ``config``: :class:`FreeformConfig` (default: the builder's defaults; the paper's:
    ``FreeformConfig.from_preset("wikioriginqa")``)."""

    def __init__(self, config: FreeformConfig | None = None):
        self.config = config or FreeformConfig()
        self.config.check()

    def run(self, articles, llm: LLMClient, *, out=None) -> BuildResult:
        """Build the set; dropped items carry their step (``instructions``, ``generate``,
        ``translate``, ``leak``, ``score``, ``giveaway``) and reason. ``out``: the set saved
        there, the whole run under ``OUT.lock`` (:func:`~wikiorigin.builders.result.saved_run`:
        checked before any call is paid for)."""
        if out is not None:
            check_instructions(instructions_path(out))  # someone's file of that name: before any call
            return saved_run(lambda: self.run(articles, llm), out, [articles], [llm], names=["articles"])
        config = self.config
        _use_effort(llm, config.reasoning_effort)
        rows = read_origin_articles(articles)
        report = BuildReport("freeform", articles=len(rows))
        count, screened = RequestCount([llm]), []
        rows = screen_inputs(rows, lambda *dropped: screened.append(dropped), _same_item)  # before any call
        sets, errors = _instructions(sorted({_language(r) for r in rows}), config, llm)
        run = _Run(llm, config, sets, report)
        for dropped in screened:
            run.fail(*dropped)
        for row in rows:
            if _language(row) in errors:
                run.fail(
                    row,
                    "instructions",
                    f"no {_language(row)} instructions: the translation failed: {errors[_language(row)]}",
                )
        live = run.generate([r for r in rows if _language(r) in sets])
        report.generated = len(live)
        for _ in range(config.rounds):
            run.refine(live)
        out_rows = run.giveaway(run.score(run.translate(live)))
        report.kept = len(out_rows)
        count.settle(report)
        report.usage = {"generator": llm.usage.as_dict()}
        meta = dict(
            articles=input_file(articles),
            rounds=config.rounds,
            cutoff=config.cutoff,
            max_article_chars=config.max_article_chars,
            params=llm.params(config.params),  # as sent: no sampling with a reasoning effort
            check_params=llm.params(CHECK_PARAMS),
            generator=llm.backend.model,
            prompt_sha1=_prompt_sha1(run.versions),
            usage=report.usage,
            preset=config.preset,
            llm={"generator": llm.settings()},
        )

        def beside(path) -> dict:  # the translated instructions, and which the build used
            files = _write_instructions(path, sets)
            return {
                "instructions": [
                    {**s.provenance(), **({"file": files[lang]} if lang in files else {})}
                    for lang, s in sorted(sets.items())
                ]
            }

        return BuildResult(
            "freeform", out_rows, FREEFORM, run.failed, report, meta, {"generator": llm}, beside, inputs=(articles,)
        )

    def plan(self, articles, llm: LLMClient) -> dict:
        """A dry run: the calls not in the cache that come first (the translation of the
        instructions of each language without a file, when not cached, and the generation calls)
        and their input tokens (for a language still to be translated, estimated with the English
        instructions); each question then costs ``rounds`` + 3 more calls (refine, translate,
        score, giveaway)."""
        config = self.config
        _use_effort(llm, config.reasoning_effort)
        rows = screen_inputs(read_origin_articles(articles), lambda *dropped: None, _same_item)
        sets: dict[str, Instructions] = {}
        todo = []
        for lang in sorted({_language(r) for r in rows}):
            found = _offline(lang, config) or _cached_translation(lang, llm)
            if found is None:
                todo.append(lang)
                found = _english(lang)  # the estimate of the translation's size
            sets[lang] = found
        run = _Run(llm, config, sets, BuildReport("freeform"))
        plan = llm.dry_run([_translation(lang) for lang in todo] + [run.writing("generate", r) for r in rows])
        plan["later_calls_at_most"] = (config.rounds + 3) * len(rows)
        return plan


def build_freeform(articles, out, generator: LLMClient, config: FreeformConfig | None = None) -> dict:
    """Questions for the origin corpus ``articles`` into ``out`` (the ``freeform`` schema);
    dropped ones with their reason and step into ``<out>.failed.parquet``; instructions the
    generator translated into ``OUT.instructions.json`` (:func:`instructions_path`), under
    ``OUT.lock``: :class:`FreeformBuilder` run and saved. Returns counts: ``articles``, those
    dropped at each step, ``kept`` (its report's, as a dict)."""
    report = FreeformBuilder(config).run(articles, generator, out=out).report
    return {"articles": report.articles, **report.dropped, "kept": report.kept}


def plan_freeform(articles, generator: LLMClient, config: FreeformConfig | None = None) -> dict:
    """:meth:`FreeformBuilder.plan`: the calls a build would make first, and their input tokens."""
    return FreeformBuilder(config).plan(articles, generator)
