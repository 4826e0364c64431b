"""The command line's words for the library's parameters (:data:`FLAGS`, :func:`flags`,
:func:`speaks_flags`), and, re-exported from where they are defined, the option groups several
commands share: the LLM options (:mod:`.clients`: :func:`llm_options`, :func:`llm_client`), the
options of a model under evaluation (:mod:`.models`: :func:`model_options`, :func:`model`), and
the argparse types checked at the edge (:mod:`.argtypes`)."""

from __future__ import annotations

import re
from collections.abc import Mapping

from .argtypes import memory_size, namespaces, positive, prices, rating_scale, temperature
from .clients import REASONING_EFFORTS, check_cache, llm_client, llm_options
from .models import model, model_options, sampling

__all__ = [
    "llm_options",
    "llm_client",
    "check_cache",
    "model_options",
    "model",
    "sampling",
    "positive",
    "rating_scale",
    "memory_size",
    "namespaces",
    "prices",
    "temperature",
    "REASONING_EFFORTS",
    "FLAGS",
    "flags",
    "in_flags",
    "speaks_flags",
]

FLAGS = {
    "language": "--language",
    "instruction": "--instruction",
    "cue": "--answer-cue",
    "judge": "--judge-model",
    "mode": "--mode",
    "labels": "--labels",
    "paraphrases": "--paraphrases FILE",
    "paraphraser": "--paraphrase-model NAME",
    "windows": "--windows",
    "stride": "--stride",
    "human_ratings": "--human-ratings FILE",
    "pairs": "--pairs",
    "min_gap": "--min-gap",
    "rating_scale": "--rating-scale",
    "force": "--force",
    "format": "--format",
    "source_language": "--source-language",
    "model": "--model",
    "articles": "--articles",
    "questions": "--questions",
    "responses": "--responses",
    "rated": "--rated",
    "out": "--out",
    "directory": "--out",
    "cache": "--cache",
    "base_url": "--base-url",
    "azure_endpoint": "--azure-endpoint",
    "reasoning_effort": "--reasoning-effort",
    "retry_refusals": "--retry-refusals",
    "temperature": "--temperature",
    "top_p": "--top-p",
    "max_tokens": "--max-tokens",
    "judge_max_tokens": "--max-tokens",
    "max_new_tokens": "--max-new-tokens",
    "seed": "--seed",
    "device": "--device",
    "dtype": "--dtype",
    "tokenizer": "--tokenizer PATH",
    "max_length": "--max-length N",
    "thinking": "--thinking",
    "min_editions": "--min-editions",
    "max_editions": "--max-editions",
    "sample": "--sample",
    "entities_file": "--entities",
    "wikidata": "--wikidata",
    "sparql": "--sparql",
    "text": "--text",
    "html_dump": "--html-dump",
    "scheduler": "--scheduler",
    "kind": "--kind",
    "annotator": "--annotator",
    "port": "--port",
    "host": "--host",
    "policy": "--policy",
    "db": "--db",
    "allow_failures": "--allow-failures",
    "max_article_chars": "--max-article-chars",
    "answer_positions": "--answer-positions",
    "label_steps": "--label-steps",
    "checker_abstains": "--checker-abstains",
    "contact": "--contact",
    "date": "--date",
    "wikidata_date": "--wikidata-date",
}
"""The library's parameters as the command line calls them: a
:class:`~wikiorigin.errors.ParameterError` is said with these (``give --language``, not
``give language=``), by the commands that have the option (:func:`flags`)."""


def flags(args, error=None) -> dict[str, str | None]:
    """The library's parameters as the command ``args`` were parsed for calls them: the
    :data:`FLAGS` of its own options (one it lacks stays in the library's words), and
    ``--endpoint`` for the ``base_url`` of the model under evaluation (an
    :class:`~wikiorigin.llm.EndpointError` of its server), where the LLM clients' is ``--base-url``."""
    names: dict[str, str | None] = {name: flag for name, flag in FLAGS.items() if hasattr(args, _dest(flag))}
    endpoint, url = getattr(args, "endpoint", None), getattr(error, "url", None)
    if endpoint and url and url.rstrip("/") == endpoint.rstrip("/"):
        names["base_url"] = "--endpoint"
    return names


def _dest(flag: str) -> str:
    """argparse's attribute of ``flag`` (``--answer-cue`` -> ``answer_cue``)."""
    return flag.split()[0].lstrip("-").replace("-", "_")


def in_flags(text: str, names: Mapping[str, str | None]) -> str:
    """``text`` in which the library said a parameter as it takes it (``raise max_tokens=``: a
    failed request's reason) with those of ``names`` said as their flags."""
    return re.sub(r"(?<![\w.-])([a-z_]+)=(?=$|[\s,;:)])", lambda m: names.get(m[1]) or m[0], text)


def speaks_flags(func):
    """A command handler whose library errors name the command line's flags (:func:`flags`)
    instead of the library's parameters, and whose library warnings show on stderr
    (:func:`~wikiorigin.cli.outcome.show_log`). The handler's first argument is its parsed
    options. (A :class:`~wikiorigin.errors.ParameterError` that a command without it raises is
    said the same way by :func:`wikiorigin.cli.main`.)"""
    import functools

    from ..errors import ParameterError, WikioriginError
    from .stderr import show_log

    @functools.wraps(func)
    def handler(args, *rest, **kwargs):
        try:
            with show_log():
                return func(args, *rest, **kwargs)
        except ParameterError as exc:
            raise WikioriginError(exc.said(flags(args, exc))) from None

    return handler
