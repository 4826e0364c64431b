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
   for list-page articles their culture's by default, :func:`wikiorigin.presets.list_labels`:
   ``yokai-ja`` for YokaiEval's), enforced by an enum schema, from the article up to ``max_article_chars`` (as
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
wiki's): questions whose labels ask for a culture's own prompts in their language keep them
(``yokai-ja``: YokaiEval's Japanese prompts, :mod:`wikiorigin.presets.yokaieval`); every other
build (any other language, or Japanese with other labels,
such as ``origin``) gets one set of English instructions that name the language the question, options and answer are written in
(as the free-form builder does) and speak of the article's subject, not of "this creature",
unless the labels file's ``subject`` says so. The language is in every row, in the prompts
(hence the request cache key, and ``prompt_sha1``) and in the provenance the dataset card reads.

Every LLM call goes through :class:`~wikiorigin.llm.LLMClient`: a re-run pays for nothing
twice, and a run killed half-way resumes from the cache.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from ..errors import ParameterError, WikioriginError
from ..files import input_schema, read_input
from ..labels import REGION_SEPARATOR, WIKIDATA, Labels, load_labels, presets
from ..languages import language_parameter, wiki_language
from ..llm import ChatRequest, LLMClient
from ..presets import list_labels
from ..schemas import MCQ
from ._mcq_steps import (  # the steps, one article at a time
    _GENERATE,
    _article_text,
    _check_threshold,
    _messages,
    _Run,
    near_duplicates,
)
from .presets import configured
from .result import BuildReport, BuildResult, RequestCount, input_file, saved_run, screen_inputs

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

POSITIONS = ("balanced", "as-generated")
"""The ways of placing the answer among the options (:class:`MCQConfig` ``answer_positions``)."""


@dataclass(slots=True)
class MCQConfig:
    """Settings of :func:`build_mcq` that change the questions: the ``language`` of the
    questions (a registry code; None: the articles' wiki's), the ``labels`` (a preset's name,
    a labels file's path or :class:`~wikiorigin.labels.Labels`; None: ``origin`` for an origin
    corpus, a list-page corpus's culture's (:func:`wikiorigin.presets.list_labels`), else an
    error), questions
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
    _preset: str | None = field(default=None, init=False, repr=False)  # set by from_preset only

    @classmethod
    def from_preset(cls, name: str, **overrides) -> MCQConfig:
        """The settings of the preset ``name`` (:data:`~wikiorigin.builders.presets.PRESETS`:
        ``yokaieval``), the ``overrides`` (any field) winning; a ``ValueError`` for another
        builder's preset or an unknown name."""
        return configured(cls, "mcq", name, overrides)

    @property
    def preset(self) -> str | None:
        """The preset this configuration was made from (:meth:`from_preset`), else None."""
        return self._preset

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
    return str(next(iter(languages.values())))  # each known: the unknown raised above


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


# What the builder reads of an article corpus (``wikiorigin corpus yokai`` or ``corpus origin``).
ARTICLE_COLUMNS = ("wiki", "page_id", "title", "revision_id", "url", "text", "references")
_ALSO_USED = ("qid", "region")  # read where the corpus has them
_STAGE = "wikiorigin corpus yokai (or corpus origin)"


def _check_regions(has_region: bool, path, labels: Labels, label_steps: int = 1) -> None:
    """With Wikidata regions, the corpus must carry ``region`` (``corpus origin``'s); labelled
    in two steps, no region class may hold the separator that joins a row's several regions."""
    if labels.region_source == WIKIDATA and not has_region:
        raise ParameterError(
            "labels",
            f"{path}: no region column, which the labels {labels.source} take from "
            "Wikidata (build the corpus with `wikiorigin corpus origin`, or give "
            "{labels} with region classes)",
        )
    joined = [n for n in labels.region_names if REGION_SEPARATOR in n] if label_steps == 2 else []
    if joined:
        raise ParameterError(
            "label_steps",
            f"{labels.source}: the region class {joined[0]!r} holds {REGION_SEPARATOR!r}, which joins "
            "the several regions of a row labelled in two steps: rename the class, or give {label_steps} 1",
            label_steps,
        )


def _default_labels(rows: list[dict], has_region: bool, path, language: str | None = None) -> Labels:
    """The labels of a build that names none: ``origin`` for an origin corpus (it has Wikidata
    regions); for articles from a list page, the labels of the culture whose list page is in
    their language (``language``, else the articles' own; :func:`wikiorigin.presets.list_labels`:
    ``yokai-ja`` for YokaiEval's Japanese); any other corpus needs its culture's own classes."""
    if has_region:
        return load_labels("origin")
    found = list_labels(language or _articles_language(rows, path))
    if found is not None:
        return load_labels(found)
    raise ParameterError(
        "labels",
        f"{path}: a list-page corpus of {rows[0]['wiki'] if rows else 'no wiki'} and no "
        "labels: give {labels} with its culture's type and region classes (a labels "
        f"file, or a preset: {', '.join(presets())})",
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
    _check_regions(has_region, articles, labels, config.label_steps)
    return rows, language or _articles_language(rows, articles), labels


class MCQBuilder:
    """The multiple-choice builder: ``MCQBuilder(config).run(articles, llm)`` writes questions
    for the articles of ``articles.parquet`` with the chat model ``llm`` (an
    :class:`~wikiorigin.llm.LLMClient`; any function through
    :class:`~wikiorigin.llm.FunctionBackend`) in the steps of the module's docstring, and
    returns a :class:`~wikiorigin.builders.result.BuildResult` that saves itself. ``config``:
    :class:`MCQConfig` (default: the builder's defaults; the paper's:
    ``MCQConfig.from_preset("yokaieval")``)."""

    def __init__(self, config: MCQConfig | None = None):
        self.config = config or MCQConfig()

    def run(self, articles, llm: LLMClient, *, checker: LLMClient | None = None, out=None) -> BuildResult:
        """Build the set: ``checker`` answers each question with its article (default: ``llm``
        itself; the paper's was a separate, smaller model). ``out``: the set saved there, the
        whole run under ``OUT.lock`` (:func:`~wikiorigin.builders.result.saved_run`: checked before
        any call is paid for). The articles, the language and the labels are checked before any
        call too."""
        if out is not None:
            build = lambda: self.run(articles, llm, checker=checker)  # noqa: E731
            return saved_run(build, out, [articles], [llm, checker], names=["articles"])
        config, checker = self.config, checker or llm
        rows, language, labels = _setup(articles, config)
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
    build = lambda: MCQBuilder(config).run(articles, generator, checker=checker)  # noqa: E731
    return saved_run(build, out, [articles], [generator, checker], failed=failed, names=["articles"]).report


def plan_mcq(articles, generator: LLMClient, config: MCQConfig | None = None) -> dict:
    """:meth:`MCQBuilder.plan`: the calls a build would make first, and their input tokens."""
    return MCQBuilder(config).plan(articles, generator)
