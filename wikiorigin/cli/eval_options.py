"""The options of each ``eval`` command but ``compare`` (whose options are beside it), added
by :mod:`.eval`; the option groups several commands share are in :mod:`.options`."""

from __future__ import annotations

from .options import llm_options, model_options, positive, rating_scale

__all__ = ["add_mcq", "add_freeform", "add_judge", "add_leakage"]


def _max_length(e) -> None:
    """``--max-length``: the context log-probabilities are scored in (eval mcq, eval leakage)."""
    e.add_argument(
        "--max-length",
        type=positive(int),
        default=None,
        metavar="N",
        help="log-probabilities: the model's context in tokens, texts longer scored in windows (default: a "
        "local model's own; an endpoint's max_model_len in /v1/models less 2, as vLLM lists it)",
    )


def add_mcq(e) -> None:
    e.add_argument(
        "--questions",
        default=None,
        help="mcq.parquet or released YokaiEval rows (JSON/Parquet); with --responses, the rows "
        "the responses are joined to (type, region; questions without a response count "
        "as unanswered)",
    )
    e.add_argument(
        "--responses",
        default=None,
        help="recorded responses to score instead of asking a model: a released responses "
        "file, the released human answers, or rows with a `response`",
    )
    e.add_argument(
        "--mode",
        choices=("generate", "loglikelihood"),
        default="generate",
        help="generate: ask and read the answer; loglikelihood: score each option (a local model, or "
        "--endpoint with echo + logprobs on /v1/completions: vLLM, llama-cpp-python's server)",
    )
    e.add_argument(
        "--language",
        default=None,
        help="the language of the instruction line, answer cue and delimiter: the code of any open "
        "Wikipedia (default: the rows' own language, the released YokaiEval rows' from their wiki: ja; "
        "rows that say none need it; English lines where ours has none)",
    )
    e.add_argument(
        "--instruction",
        default=None,
        help="line after the options (default: ours for --language; '' for none, as released)",
    )
    e.add_argument(
        "--answer-cue",
        default=None,
        help="log-likelihood mode: what follows the options before each option (default: ours for "
        "--language, e.g. '\\n回答：', '\\nAnswer:'; \\n is a new line)",
    )
    e.add_argument("--judge-model", default=None, help="an LLM that reads the answers the parser cannot")
    e.add_argument(
        "--thinking",
        choices=("on", "off", "template-default"),
        default="template-default",
        help="generation with a local model whose chat template can think (Qwen3-style "
        "enable_thinking): switch its reasoning on or off (recorded in the signature); "
        "a thinking model needs a --max-new-tokens budget for its trace (the paper's 128 cuts "
        "it off: a cut response is no answer, counted as truncated). Endpoints: --reasoning-effort",
    )
    _max_length(e)
    model_options(e, required=False)
    llm_options(e)


def add_freeform(e) -> None:
    e.add_argument("--questions", required=True, help="freeform.parquet")
    e.add_argument("--source-language", action="store_true", help="ask in the item's language")
    model_options(e)
    llm_options(e)
    e.set_defaults(temperature=0.0, max_new_tokens=32)


def add_judge(e) -> None:
    e.add_argument("--questions", required=True, help="a CARE test file (or rows with a `response`)")
    e.add_argument("--judge-model", required=True, help="the LLM that rates each answer 1-10")
    e.add_argument(
        "--human-ratings",
        default=None,
        metavar="FILE",
        help="people's ratings of responses (JSON, JSON Lines, CSV or Parquet with question, model, "
        "response, rating): the judge's agreement with them (Pearson, Spearman, Kendall, with "
        "intervals); without --model or recorded responses, the judge rates these responses",
    )
    e.add_argument(
        "--rating-scale",
        type=rating_scale,
        default=None,
        metavar="LOW-HIGH",
        help="the scale of the --human-ratings (default: CARE's 1-10); a rating outside it is an error "
        "naming the file and row, before any request",
    )
    e.add_argument(
        "--max-tokens",
        type=positive(int),
        default=1024,
        help="the judge's output limit (default: 1024, CARE's judge); a reasoning judge "
        "(--reasoning-effort) spends part of it thinking, and a rating cut by it is no rating",
    )
    model_options(e, required=False)
    llm_options(e)
    e.set_defaults(temperature=0.7, max_new_tokens=512)


def add_leakage(e) -> None:
    e.add_argument("--articles", required=True, help="articles.parquet (title, text)")
    e.add_argument("--paraphrases", default=None, help="Parquet/JSON with title, paraphrase")
    e.add_argument("--paraphrase-model", default=None, help="an LLM that writes the paraphrases")
    e.add_argument("--max-chars", type=positive(int), default=1500, help="the passage of each article compared")
    chosen = e.add_mutually_exclusive_group()
    chosen.add_argument(
        "--sample",
        type=_sample_size,
        default=20,
        metavar="N",
        help="N articles drawn at random with --seed (default 20, as the YokaiEval paper; "
        "'all': every one), the same for the same N and seed whatever the rows' order; "
        "with --paraphrases, among the articles the file paraphrases",
    )
    chosen.add_argument(
        "--limit",
        type=positive(int),
        default=None,
        help="the first N articles in file order instead of a random sample",
    )
    e.add_argument(
        "--windows",
        choices=("overlap", "disjoint"),
        default="overlap",
        help="texts longer than the model's context: overlapping windows (default; every token "
        "after at least half a context) or lm-evaluation-harness's disjoint ones",
    )
    e.add_argument(
        "--stride",
        type=positive(int),
        default=None,
        help="tokens each overlapping window predicts (default half the model's context)",
    )
    _max_length(e)
    model_options(e)
    llm_options(e)


def _sample_size(text: str):
    """``--sample``: a whole number > 0, or ``all`` (None: every article)."""
    return None if text == "all" else positive(int)(text)
