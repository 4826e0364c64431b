"""What makes a model's answer one the client keeps: :func:`parse_json` reads JSON from an
answer, :func:`_check` validates it against the request's JSON schema (each schema checked and
its validator built once, by :func:`_schema`; fastjsonschema where it reads the schema as
jsonschema does), :func:`strict_schema` writes a schema in the form strict structured outputs
take, and :func:`_usable` / :func:`_declined` tell an answer cut off by the output limit, an empty
or HTML answer, or the model's refusal. Moved out of ``client.py``; ``wikiorigin.llm.client``
still exports these names."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .openai_backend import TransientError

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

    from ._requests import ChatRequest, ChatResult

__all__ = [
    "parse_json",
    "strict_schema",
    "_check",
    "_schema",
    "_Checker",
    "_CutOff",
    "_declined",
    "_usable",
    "_one_line",
    "_sample",
]


_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.S)


def parse_json(text: str):
    """JSON from a model's answer (code fences and text around the object tolerated)."""
    text = _FENCE.sub("", text.strip())
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        start, end = text.find("{"), text.rfind("}")
        if 0 <= start < end:
            return json.loads(text[start : end + 1])
        raise


_STOPPED = ("abort", "error", "cancelled")
"""Finish reasons of an answer the server gave up part-way: no answer, asked again."""


class _CutOff(Exception):
    """An answer stopped by the output limit, for a request that wants a whole one."""


def _declined(answer: dict) -> str | None:
    """Why the model declined to answer (its ``refusal``, or the server's content filter), or None."""
    if answer.get("refusal"):
        return "refusal: " + _one_line(str(answer["refusal"]))
    if answer.get("finish_reason") == "content_filter":
        text = _one_line(answer.get("text") or "")
        return "content_filter: the server's content filter stopped the answer" + (f" ({text})" if text else "")
    return None


def _one_line(text: str, width: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 3] + "..."


def _sample(stored: dict) -> str:
    return _one_line(json.dumps(stored, ensure_ascii=False), 80)


def _usable(answer: dict, request: ChatRequest, params: dict) -> None:
    """Raises unless ``answer`` may be kept: :class:`_CutOff` for an answer stopped by the
    output limit (unless the request takes one), :class:`TransientError` for an empty answer, one
    that is not text (``malformed``), one the server stopped (``abort``, ``error``,
    ``cancelled``) or an HTML page (retried: servers and proxies send them when they are in
    trouble). A refusal is kept: it is the model's answer (:func:`_declined`)."""
    if answer.get("malformed"):  # billed (counted), but no answer
        raise TransientError(answer["malformed"])
    if _declined(answer):
        return
    if answer.get("finish_reason") == "length":
        if request.truncated_ok:
            return
        limit = params.get("max_tokens", params.get("max_completion_tokens"))
        reasoning = answer.get("reasoning_tokens") or 0
        raise _CutOff(
            "cut off by the output limit"
            + (f" of {limit} tokens" if limit is not None else "")
            + (f" ({reasoning} of them reasoning)" if reasoning else "")
            + ": raise max_tokens="
            + (" or lower reasoning_effort=" if reasoning else "")
        )
    if answer.get("finish_reason") in _STOPPED:  # vLLM's "abort": the engine dropped it part-way
        raise TransientError(f"an answer the server stopped (finish_reason {answer['finish_reason']!r})")
    text = answer.get("text") or ""
    if not text.strip():
        raise TransientError("an empty answer")
    if text.lstrip()[:15].lower().startswith(("<!doctype html", "<html")):
        raise TransientError("an HTML page, not an answer")


_STRICT_DROPS = (
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "uniqueItems",
)


def strict_schema(schema: dict) -> dict:
    """``schema`` in the form strict structured outputs take: every object closed
    (``additionalProperties: false``) with every property required (one that was optional may
    also be null), and the keywords strict mode does not take dropped (the answer is still
    validated against the full ``schema`` here)."""
    if not isinstance(schema, dict):
        return schema
    out = {k: v for k, v in schema.items() if k not in _STRICT_DROPS}
    if "items" in out:
        out["items"] = strict_schema(out["items"])
    if out.get("type") == "object" or "properties" in out:
        properties = {k: strict_schema(v) for k, v in (out.get("properties") or {}).items()}
        required = set(out.get("required") or ())
        for name, value in properties.items():
            kinds = value.get("type")
            kinds = [kinds] if isinstance(kinds, str) else list(kinds or [])
            if name not in required and kinds and "null" not in kinds:
                value["type"] = kinds + ["null"]
        out.update(properties=properties, required=list(properties), additionalProperties=False)
    return out


def _check(result: ChatResult, schema: dict) -> str | None:
    """None when the answer is JSON that satisfies ``schema`` (and then sets ``data``)."""
    try:
        data = parse_json(result.text or "")
    except json.JSONDecodeError as exc:
        return f"not JSON: {exc}"
    checker = _schema(schema)
    if checker.fast is not None:
        try:
            checker.fast(data)
        except Exception:  # jsonschema has the last word, and says why
            pass
        else:
            result.data = data
            return None
    validator = checker.validator
    if not validator.is_valid(data):
        import jsonschema

        return f"schema: {jsonschema.exceptions.best_match(validator.iter_errors(data)).message}"
    result.data = data
    return None


@dataclass(slots=True, frozen=True)
class _Checker:
    """A schema's jsonschema ``validator`` and its ``digest`` (the mark of a cached answer
    checked against it); ``fast``: the schema compiled by fastjsonschema (30 times faster),
    for the schemas whose keywords the two read alike (:func:`_fast`), else None."""

    validator: Validator
    digest: str
    fast: Callable[[object], object] | None = None


# The keywords fastjsonschema and jsonschema read alike, for the answers json.loads makes (an
# answer it finds valid is valid; one it refuses is checked by jsonschema, which says why).
_SIMPLE = {"type", "properties", "required", "items", "minItems", "maxItems", "minLength", "maxLength"}
_SIMPLE |= {"additionalProperties", "enum", "minimum", "maximum", "description", "title"}


def _simple(schema) -> bool:
    """Whether ``schema`` uses only :data:`_SIMPLE` keywords, its enums strings, its bounds on
    numbers."""
    if not isinstance(schema, dict) or not set(schema) <= _SIMPLE:
        return isinstance(schema, bool) and schema is False  # additionalProperties: false
    if "enum" in schema and not all(isinstance(v, str) for v in schema["enum"]):
        return False
    if {"minimum", "maximum"} & set(schema) and schema.get("type") not in ("integer", "number"):
        return False
    subs = list(schema.get("properties", {}).values())
    subs += [schema[k] for k in ("items", "additionalProperties") if k in schema]
    return all(_simple(sub) for sub in subs)


def _fast(schema: dict) -> Callable[[object], object] | None:
    """``schema`` compiled by fastjsonschema, when installed and the schema is :func:`_simple`."""
    if not _simple(schema):
        return None
    try:
        import fastjsonschema

        return fastjsonschema.compile(schema, use_formats=False)
    except Exception:  # not installed, or a schema it does not take: jsonschema alone
        return None


# The schemas seen: by identity (the schema object held, so that its id is not reused), then by
# content. A schema is checked and its validator built once, not per answer.
_BY_ID: dict[int, tuple[dict, _Checker]] = {}
_BY_CONTENT: dict[str, _Checker] = {}


def _schema(schema: dict) -> _Checker:
    """The validator and digest of ``schema`` (the schema checked once: ``SchemaError`` if bad)."""
    held = _BY_ID.get(id(schema))
    if held is not None and held[0] is schema:
        return held[1]
    text = json.dumps(schema, sort_keys=True, ensure_ascii=False)
    checker = _BY_CONTENT.get(text)
    if checker is None:
        import hashlib

        import jsonschema

        kind = jsonschema.validators.validator_for(schema)
        kind.check_schema(schema)
        digest = hashlib.sha256(text.encode()).hexdigest()[:16]
        checker = _BY_CONTENT[text] = _Checker(kind(schema), digest, _fast(schema))
    if len(_BY_ID) > 4096:  # schemas made anew for each request: held a while, not forever
        _BY_ID.clear()
    _BY_ID[id(schema)] = (schema, checker)
    return checker
