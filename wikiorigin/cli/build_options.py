"""The options of the ``build`` commands, by builder (added by :mod:`.build`, whose
``--preset`` and sampling options come after them); the option groups several stages share are
in :mod:`.options`."""

from __future__ import annotations

from .options import llm_options, positive, rating_scale

__all__ = [
    "dry_run",
    "max_article_chars",
    "mcq_inputs",
    "mcq_method",
    "freeform_options",
    "preference_inputs",
    "preference_pairs",
    "card_options",
]


def dry_run(b) -> None:
    """``--dry-run``: count the calls and tokens, send nothing."""
    b.add_argument("--dry-run", action="store_true", help="count the calls and tokens only")


def max_article_chars(b, default: int) -> None:
    """``--max-article-chars``: the characters of each article the steps read."""
    b.add_argument(
        "--max-article-chars",
        type=positive(int, zero=True),
        default=None,
        help=f"characters of each article sent to the steps that read it (default {default:,}; 0: the "
        "whole article, as the paper's preset sends it: the paper states no cut)",
    )


def mcq_inputs(b) -> None:
    """``build mcq``: its articles, output and models, the LLM options, the language and labels."""
    b.add_argument("--articles", required=True, help="articles.parquet")
    b.add_argument(
        "--out", required=True, help="mcq.parquet (dropped rows: OUT.failed.parquet; OUT.lock while it runs)"
    )
    b.add_argument("--model", required=True, help="the generator model")
    b.add_argument(
        "--checker-model",
        default=None,
        help="the model that answers each question with its article, to keep only those it gets right "
        "(default: the generator; the YokaiEval paper used a separate, smaller model, GPT-4o-mini "
        "checking GPT-4o)",
    )
    llm_options(b)
    b.add_argument(
        "--language",
        default=None,
        help="the language of the questions, options and answers: the code of any open Wikipedia "
        "(ja, en, el, ko, ga, ...; default: the articles' wiki's)",
    )
    b.add_argument(
        "--labels",
        default=None,
        help="the type and region classes: a preset (yokai-ja, origin) or a labels JSON file "
        "(default: origin for a `corpus origin` corpus, its region from Wikidata; yokai-ja for Japanese "
        "list-page articles)",
    )


def mcq_method(b) -> None:
    """``build mcq``: its method settings other than sampling (the preset's come after)."""
    b.add_argument(
        "--keep-unreferenced",
        action="store_true",
        help="keep questions from articles without any footnote (no attribution; default: drop them)",
    )
    b.add_argument(
        "--per-article", type=positive(int), default=None, help="questions asked of each article (default 1)"
    )
    b.add_argument("--seed", type=int, default=0, help="seed of the answer positions' balancing")
    max_article_chars(b, 12_000)
    b.add_argument(
        "--answer-positions",
        choices=("balanced", "as-generated"),
        default=None,
        help="balanced (default): each answer position 25%% of the set, seeded by --seed; as-generated: "
        "where the generator put the answer (the paper's released set: 278/395/120/17 at A-D)",
    )
    b.add_argument(
        "--label-steps",
        type=int,
        choices=(1, 2),
        default=None,
        help="1 (default): type and region in one call from the article and the question; 2: the paper's "
        "way, the type from the question alone and the regions from the article alone",
    )
    b.add_argument(
        "--checker-abstains",
        choices=("yes", "no"),
        default=None,
        help="yes (default): the checker may answer null when the article does not tell, which drops the "
        "question; no: it must choose an option, as the paper's checker did",
    )


def freeform_options(b) -> None:
    """``build freeform``: its articles, output and model, the LLM options, its method settings."""
    b.add_argument("--articles", required=True, help="articles.parquet of `corpus origin`")
    b.add_argument(
        "--out", required=True, help="freeform.parquet (dropped: OUT.failed.parquet; OUT.lock while it runs)"
    )
    b.add_argument("--model", required=True, help="the generator model")
    llm_options(b)
    b.add_argument(
        "--rounds",
        type=positive(int, zero=True),
        default=None,
        help="refinement passes (default 3: the paper refined each question several times; "
        "each pass is one call per question, and a question given back unchanged makes "
        "the next pass a cache hit)",
    )
    b.add_argument("--cutoff", default="2023-12", help="knowledge cut-off for the criteria")
    max_article_chars(b, 6_000)
    b.add_argument(
        "--instructions",
        choices=("auto", "en"),
        default=None,
        help="language of the generation and refinement instructions: auto (default) = the "
        "item's language, bundled for ja ps af ca sk et uk ka, else translated once by the "
        "generator (saved as OUT.instructions.json); en = English",
    )


def preference_inputs(b) -> None:
    """``build preference``: its questions, output, rated responses or models and judge."""
    b.add_argument(
        "--questions",
        required=True,
        help="CARE JSON, or Parquet/JSON with question, answer (each pair's culture and category)",
    )
    b.add_argument(
        "--out",
        required=True,
        help="preferences.parquet (failed answers and ratings: OUT.failed.parquet; OUT.lock while it runs)",
    )
    b.add_argument(
        "--rated",
        default=None,
        metavar="FILE",
        help="rated responses (JSON, JSON Lines, CSV or Parquet with question, model, response, rating): "
        "pairs of these very texts, no model called (--models, --judge-model and --dry-run are "
        "refused with it); a rated question not in --questions is left out, counted and listed "
        "in OUT.failed.parquet; a bad row is an error naming it, before anything is written",
    )
    b.add_argument("--models", default=None, help="comma-separated models that answer (without --rated)")
    b.add_argument("--judge-model", default=None, help="the model that rates the answers 1-10 (without --rated)")


def preference_pairs(b) -> None:
    """``build preference``: how pairs are made, the ratings' scale, the format and language."""
    b.add_argument(
        "--pairs",
        choices=("best-worst", "all"),
        default=None,
        help="best-worst: per question the highest- against the lowest-rated response (CARE's rule; "
        "among equal ratings the model whose name sorts first); all: every two responses whose "
        "ratings differ by --min-gap or more",
    )
    b.add_argument(
        "--min-gap",
        type=positive(float, zero=True),
        default=None,
        help="least rating gap of a pair (default: 2 with --pairs all, any gap with best-worst); "
        "equal ratings never make a pair",
    )
    b.add_argument(
        "--rating-scale",
        type=rating_scale,
        default=None,
        metavar="LOW-HIGH",
        help="the scale of the --rated ratings (default: CARE's 1-10); a rating outside it, or not a "
        "number, is an error naming the file and row, before anything is written",
    )
    b.add_argument(
        "--format",
        choices=("standard", "conversational"),
        default="standard",
        help="standard: prompt, chosen and rejected as strings; conversational: as lists of chat "
        "messages (TRL's conversational form, so the trainer applies the chat template)",
    )
    b.add_argument(
        "--language",
        default=None,
        help="the language of the questions and answers, written into every pair: the code of any open "
        "Wikipedia (default: the questions' own; CARE's files say none: give it, e.g. ja)",
    )


def card_options(b) -> None:
    """``build card``: the directory, kind, title and description, and the upload."""
    b.add_argument("directory", help="the directory of the dataset's Parquet files")
    b.add_argument(
        "--kind", choices=("mcq", "freeform", "preferences"), required=True, help="which dataset the directory holds"
    )
    b.add_argument("--title", required=True, help="the card's title")
    b.add_argument("--description", default="", help="a paragraph under the title")
    b.add_argument(
        "--force",
        action="store_true",
        help="replace a README.md that `build card` did not write (default: keep it, exit 2)",
    )
    b.add_argument(
        "--push",
        metavar="REPO",
        help="then upload the directory to the Hugging Face hub as the dataset repository REPO (owner/name; "
        "created if missing): its Parquet files, README.md and croissant.json. The token is HF_TOKEN's "
        "(or `hf auth login`'s), the endpoint HF_ENDPOINT's (default huggingface.co)",
    )
    b.add_argument("--private", action="store_true", help="with --push: a repository created is private")
