"""The Arrow schemas of the files that connect the stages (the file-schema reference lists them, with each file's columns)."""

from __future__ import annotations

import pyarrow as pa

__all__ = [
    "PAGES",
    "PAGE_COLUMNS",
    "QIDS",
    "ORIGINS",
    "EDITION",
    "EDITIONS",
    "TIMESTAMP",
    "ARTICLES",
    "SECTION",
    "REFERENCE",
    "ORIGIN_ARTICLES",
    "MCQ",
    "FREEFORM_CRITERIA",
    "FREEFORM",
    "PREFERENCES",
    "PREFERENCES_CONVERSATIONAL",
    "FAILED",
    "REVIEW",
    "INPUT_SCHEMAS",
    "COLUMN_TYPES",
    "NOT_NULL",
    "column_mismatch",
]

# Parquet has no unit of seconds: pyarrow stores timestamp[s] as milliseconds and reads back
# milliseconds. So the file schema says ms (values are whole seconds), and what we write is
# what every reader (pyarrow, DuckDB, datasets) sees. DESIGN.md's "timestamp(s, UTC)" is
# changed deliberately for this reason (see docs/reference/file-schemas.md).
TIMESTAMP = pa.timestamp("ms", tz="UTC")
"""The type of every time in the files: milliseconds in UTC (the values are whole seconds)."""

PAGES = pa.schema(
    [
        ("wiki", pa.string()),
        ("page_id", pa.int64()),
        ("namespace", pa.int32()),
        ("title", pa.string()),
        ("is_redirect", pa.bool_()),
        ("created_at", TIMESTAMP),
        ("first_revision_at", TIMESTAMP),
        ("created_revision_id", pa.int64()),
        ("revisions", pa.int32()),
        ("imported_revisions", pa.int32()),
    ]
)
"""``pages.parquet`` (``wikiorigin scan``): one row per page of one wiki with its creation."""

# The columns a scan produces; the writer adds ``wiki``.
PAGE_COLUMNS = pa.schema([f for f in PAGES if f.name != "wiki"])
"""The columns a scan produces: :data:`PAGES` less ``wiki``, which the writer adds."""

QIDS = pa.schema([("wiki", pa.string()), ("page_id", pa.int64()), ("qid", pa.string())])
"""``qids.parquet`` (``wikiorigin qids``): the Wikidata item of each page, from ``page_props``."""

EDITION = pa.struct(
    [
        ("wiki", pa.string()),
        ("page_id", pa.int64()),
        ("title", pa.string()),
        ("created_at", TIMESTAMP),
    ]
)
"""One edition of an item (a wiki's article about it), as listed in :data:`ORIGINS`."""

# editions/<wiki>.parquet: one wiki's earliest article about each item (the reduction's input)
EDITIONS = pa.schema(
    [
        ("wiki", pa.string()),
        ("qid", pa.string()),
        ("page_id", pa.int64()),
        ("title", pa.string()),
        ("created_at", TIMESTAMP),
    ]
)
"""``editions/<wiki>.parquet``: one wiki's earliest article about each item (the reduction's
input)."""

ORIGINS = pa.schema(
    [
        ("qid", pa.string()),
        ("origin_wiki", pa.string()),
        ("origin_created_at", TIMESTAMP),
        ("origin_title", pa.string()),
        ("n_wikis", pa.int32()),
        ("has_enwiki", pa.bool_()),
        ("runner_up_wiki", pa.string()),
        ("runner_up_created_at", TIMESTAMP),
        ("lead_days", pa.float64()),
        ("tied", pa.bool_()),
        ("editions", pa.list_(EDITION)),
    ]
)
"""``origins.parquet`` (``wikiorigin origins``): one row per item, the edition that wrote
about it first, the runner-up and the lead, and every edition."""

SECTION = pa.struct([("heading", pa.string()), ("level", pa.int32()), ("text", pa.string())])
"""One section of an article (a struct of :data:`ARTICLES`)."""
REFERENCE = pa.struct(
    [
        ("number", pa.int32()),
        ("name", pa.string()),
        ("group", pa.string()),
        ("text", pa.string()),
        ("template", pa.string()),
        ("authors", pa.list_(pa.string())),
        ("title", pa.string()),
        ("publisher", pa.string()),
        ("year", pa.string()),
        ("isbn", pa.string()),
        ("url", pa.string()),
        ("pages", pa.string()),
    ]
)
"""One reference of an article (a struct of :data:`ARTICLES`)."""

# articles.parquet: one row per article (or per linked section: ``anchor`` names it)
ARTICLES = pa.schema(
    [
        ("wiki", pa.string()),
        ("page_id", pa.int64()),
        ("title", pa.string()),
        ("anchor", pa.string()),
        ("qid", pa.string()),
        ("revision_id", pa.int64()),
        ("revision_timestamp", TIMESTAMP),
        ("url", pa.string()),
        ("text", pa.string()),
        ("sections", pa.list_(SECTION)),
        ("references", pa.list_(REFERENCE)),
        ("categories", pa.list_(pa.string())),
    ]
)
"""``articles.parquet``: one row per article (or per linked section: ``anchor`` names it),
its plain text, sections and references."""

# articles of an origin corpus: the articles columns plus what Wikidata says of the item
ORIGIN_ARTICLES = pa.schema(
    list(ARTICLES)
    + [
        ("label_en", pa.string()),
        ("aliases", pa.list_(pa.string())),
        ("enwiki_title", pa.string()),
        ("origin_wiki", pa.string()),
        ("n_wikis", pa.int32()),
        ("region", pa.string()),  # the item's first-level administrative division (its label)
        ("region_qid", pa.string()),  # that division's item
    ]
)
"""The articles of an origin corpus: the :data:`ARTICLES` columns plus what Wikidata says of
the item, with its region (the first-level administrative division, from P131)."""

# -- the datasets the builders write (and the evaluators and the lm-eval export read) --------

# mcq.parquet: a superset of the released YokaiEval rows
MCQ = pa.schema(
    [
        ("id", pa.string()),
        ("question", pa.string()),
        ("choices", pa.list_(pa.string())),  # 4 options
        ("answer", pa.string()),
        ("answer_index", pa.int8()),
        ("type", pa.string()),  # a class of the set's labels (wikiorigin.labels)
        ("region", pa.string()),  # a region class of its labels, or Wikidata's
        ("ref", pa.list_(pa.int32())),  # the footnotes that back the answer
        ("refs_detail", pa.list_(pa.string())),  # their texts
        ("url", pa.string()),
        ("title", pa.string()),
        ("qid", pa.string()),
        ("wiki", pa.string()),
        ("page_id", pa.int64()),
        ("language", pa.string()),
        ("generator", pa.string()),
        ("checker", pa.string()),
        ("prompt_sha1", pa.string()),
        ("source_revision_id", pa.int64()),
    ]
)
"""``mcq.parquet`` (``wikiorigin build mcq``): a superset of the released YokaiEval rows."""

# The names of the free-form schema's ``criteria`` (WikiOriginQA's seven filters, each scored
# 1-5; a kept question has 5 on all).
FREEFORM_CRITERIA = [
    "not_yes_no",
    "not_sentence_answer",
    "answer_not_in_question",
    "knowable_by_cutoff",
    "stable_over_time",
    "not_trivial",
    "self_contained",
]
"""The names of the free-form schema's ``criteria``: WikiOriginQA's seven filters, each
scored 1-5; a kept question has 5 on all."""

# freeform.parquet: a question whose answer is an item's name
FREEFORM = pa.schema(
    [
        ("id", pa.string()),
        ("question", pa.string()),  # English
        ("question_source", pa.string()),  # the item's language
        ("answers", pa.list_(pa.string())),
        ("qid", pa.string()),
        ("origin_wiki", pa.string()),
        ("title", pa.string()),
        ("url", pa.string()),  # the source article (attribution): the corpus's url, else made from wiki and title
        ("n_wikis", pa.int32()),
        ("has_enwiki", pa.bool_()),
        ("criteria", pa.struct([(c, pa.int8()) for c in FREEFORM_CRITERIA])),
        ("language", pa.string()),
        ("generator", pa.string()),
        ("prompt_sha1", pa.string()),
        ("source_revision_id", pa.int64()),
    ]
)
"""``freeform.parquet`` (``wikiorigin build freeform``): a question whose answer is an item's
name."""

# preferences.parquet: TRL's preference format, with CARE's category and culture
PREFERENCES = pa.schema(
    [
        ("prompt", pa.string()),
        ("chosen", pa.string()),
        ("rejected", pa.string()),
        ("score_chosen", pa.float32()),
        ("score_rejected", pa.float32()),
        ("culture", pa.string()),
        ("category", pa.string()),
        ("language", pa.string()),
        ("chosen_model", pa.string()),
        ("rejected_model", pa.string()),
    ]
)
"""``preferences.parquet`` (``wikiorigin build preference``): TRL's preference format, with
CARE's category and culture."""

_MESSAGE = pa.struct([("role", pa.string()), ("content", pa.string())])  # one chat message

# preferences.parquet with --format conversational: TRL's conversational preference format
PREFERENCES_CONVERSATIONAL = pa.schema(
    [("prompt", pa.list_(_MESSAGE)), ("chosen", pa.list_(_MESSAGE)), ("rejected", pa.list_(_MESSAGE))]
    + [f for f in PREFERENCES if f.name not in ("prompt", "chosen", "rejected")]
)
"""``preferences.parquet`` of ``wikiorigin build preference --format conversational``: TRL's
conversational preference format (``prompt`` the user's message, ``chosen`` and ``rejected``
the assistant's, each a list of messages, so a trainer applies the chat template), then the
columns of :data:`PREFERENCES`."""

# <out>.failed.parquet of every builder: one row per input or candidate that a step dropped.
# Columns a builder does not know are null: a CARE question has no wiki, page or item.
FAILED = pa.schema(
    [
        ("step", pa.string()),  # the step that dropped it (generate, validate, ..., answer, judge)
        ("reason", pa.string()),  # why, in words, or the LLM client's error
        ("source", pa.string()),  # what it came from: the article's title, or the question (CARE)
        ("wiki", pa.string()),  # the article's wiki
        ("page_id", pa.int64()),  # the article's page
        ("qid", pa.string()),  # the article's item
        ("model", pa.string()),  # the model that wrote, or failed to write, ``item``
        ("item", pa.string()),  # what had been made so far, as JSON text: the question, or the answer
    ]
)
"""``<out>.failed.parquet`` of every builder: one row per input or candidate that a step
dropped; columns a builder does not know are null."""

# -- human review (wikiorigin review export): the columns added to a reviewed dataset ---------

REVIEW = pa.schema(
    [
        ("review_decision", pa.string()),  # "accept": only accepted items are exported
        ("review_annotators", pa.list_(pa.string())),  # who decided the item (on its current content)
        ("review_accepts", pa.int32()),
        ("review_rejects", pa.int32()),
        ("review_edited", pa.list_(pa.string())),  # the fields the review's edits changed
    ]
)
"""The columns ``wikiorigin review export`` adds to the input's: the decision, who decided,
the counts of accepts and rejects, and the fields that edits changed."""

# -- what a stage's input is checked against before any work (files.input_schema, read_input) --

INPUT_SCHEMAS = [PAGES, QIDS, EDITIONS, ORIGINS, ARTICLES, ORIGIN_ARTICLES, MCQ, FREEFORM, PREFERENCES]
"""The schemas of the files that stages read (the conversational preference format and the
failed rows are outputs only): a column name means one type in all of them."""


def _column_types(schemas: list[pa.Schema]) -> dict[str, pa.DataType]:
    types: dict[str, pa.DataType] = {}
    for schema in schemas:
        for f in schema:
            if types.setdefault(f.name, f.type) != f.type:
                raise TypeError(f"schemas: column {f.name} is {types[f.name]} in one file and {f.type} in another")
    return types


COLUMN_TYPES = _column_types(INPUT_SCHEMAS)
"""Column name -> its Arrow type in every file of :data:`INPUT_SCHEMAS`. A stage's input is
checked against it (:func:`wikiorigin.files.input_schema`): each column the stage needs must be
of the same kind (string or large_string; an integer of any width; a float or an integer
for a float; a timestamp of any unit; lists and structs by their items and fields), never
bytes for text nor text for a number."""

NOT_NULL = frozenset(
    {
        "id",
        "wiki",
        "page_id",
        "title",
        "qid",
        "revision_id",
        "url",
        "text",
        "references",  # articles, items
        "origin_wiki",
        "n_wikis",
        "editions",  # origins
        "question",
        "choices",
        "answer",
        "answer_index",
        "answers",  # questions
        "prompt",
        "chosen",
        "rejected",  # preferences
    }
)
"""The columns that a stage needing them needs on every row: where one of them is null, the
input is refused before any work (:func:`wikiorigin.files.read_input`), naming the row. Other
columns may be null (an article's ``anchor``, an item's ``region``, a single edition's
``lead_days``, ...). A stage that does not need a column (``qid`` of a yokai article, for
``build mcq``) does not check it."""


def _kind(t: pa.DataType) -> str:
    """The kind of an Arrow type as :func:`column_mismatch` compares them."""
    kinds = (
        ("string", ("is_string", "is_large_string", "is_string_view")),
        ("binary", ("is_binary", "is_large_binary", "is_fixed_size_binary")),
        ("integer", ("is_integer",)),
        ("float", ("is_floating",)),
        ("bool", ("is_boolean",)),
        ("timestamp", ("is_timestamp",)),
        ("null", ("is_null",)),
        ("list", ("is_list", "is_large_list", "is_fixed_size_list")),
        ("struct", ("is_struct",)),
    )
    for kind, tests in kinds:
        if any(getattr(pa.types, test, lambda _: False)(t) for test in tests):
            return kind
    return str(t)


def _mismatch(found: pa.DataType, expected: pa.DataType, name: str) -> str | None:
    if pa.types.is_dictionary(found):  # dictionary-encoded: its values count
        found = found.value_type
    have, want = _kind(found), _kind(expected)
    if have == "null" or (have == "integer" and want == "float"):
        return None
    if have != want:
        return f"{name} is {found}, expected {expected}"
    if want == "list":
        return _mismatch(found.value_type, expected.value_type, f"{name}[]")
    if want == "struct":
        fields = {found.field(i).name: found.field(i).type for i in range(found.num_fields)}
        for f in (expected.field(i) for i in range(expected.num_fields)):
            wrong = _mismatch(fields[f.name], f.type, f"{name}.{f.name}") if f.name in fields else None
            if wrong:
                return wrong
    return None


def column_mismatch(name: str, found: pa.DataType) -> str | None:
    """Why a file's column ``name`` of type ``found`` is not what :data:`COLUMN_TYPES` says
    (``"title is binary, expected string"``, or the part of a nested type: ``"references[].number
    is string, expected int32"``), or None when it fits or the name is not a file column.

    The rule: the same kind, not the same type. ``string``, ``large_string`` and ``string_view``
    are text; integers of every width and sign are integers (an ``int32`` ``page_id`` fits
    ``int64``); an integer fits a float; timestamps of every unit and zone fit; a dictionary-
    encoded column counts by its values; lists and structs by their items and the fields both
    have. A column of nulls fits any type (its nulls are checked apart). Never bytes for text
    nor text for a number: those go wrong in prompts or after calls are paid for."""
    expected = COLUMN_TYPES.get(name)
    return None if expected is None else _mismatch(found, expected, name)


def __getattr__(name: str):
    """``MCQ_TYPES`` and ``MCQ_REGIONS``, YokaiEval's classes, kept importable from here:
    they live in :mod:`wikiorigin.presets.yokaieval` (a culture's, not a file contract)."""
    if name in ("MCQ_TYPES", "MCQ_REGIONS"):
        from .presets import culture

        found = culture("yokaieval")
        return list(found.types if name == "MCQ_TYPES" else found.regions)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
