"""Entities of the Wikidata JSON dump parsed (part of :mod:`wikiorigin.dumps.wikidata`, which
re-exports the public names): :class:`Entity`, the best-rank rule (:func:`best_rank`,
:func:`item_claims`), a parsed line as an entity (:func:`entity_from_json`) or a place
(:func:`place_from_json`), and a place read from its line in the dump's layout without parsing
the line whole (:func:`_fast_place`)."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

_fast_loads: Callable[[bytes], Any]
try:  # several times faster than json on the lines kept; json where it is missing
    from orjson import loads as _fast_loads
except ImportError:  # pragma: no cover - orjson is a dependency
    _fast_loads = json.loads

__all__ = [
    "Entity",
    "best_rank",
    "item_claims",
    "entity_from_json",
    "place_from_json",
    "_best_values",
    "_expect",
    "_loads",
    "_fast_place",
]

_NOT_ARRAY = re.compile(rb'"P(?:131|17)":[^\[]')  # the dump's layout has an array after each
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
_PROPS = ("P131", "P17")
_ARRAYS = {prop: b'"%s":[{"mainsnak"' % prop.encode() for prop in _PROPS}  # a statement array, in the dump's layout
_AFTER_LABELS = (b'"descriptions":', b'"aliases":', b'"claims":')
_TRIES = 200  # ends of an array tried before a line is parsed whole


@dataclass(slots=True)
class Entity:
    """A Wikidata item as the corpora need it: its ``qid``, ``labels`` and ``aliases`` by
    language, ``sitelinks`` (dbname -> page title), the items it is ``located_in`` (P131) and
    its ``country`` (P17): current best-rank values, sorted by qid (see the module's rule)."""

    qid: str
    labels: dict[str, str] = field(default_factory=dict)
    aliases: dict[str, list[str]] = field(default_factory=dict)
    sitelinks: dict[str, str] = field(default_factory=dict)
    located_in: list[str] = field(default_factory=list)
    country: list[str] = field(default_factory=list)


def _qid_order(qid: str) -> tuple[int, str]:
    return (int(qid[1:]), qid) if qid[1:].isdigit() else (1 << 62, qid)


def best_rank(statements: Iterable[tuple[str, str]]) -> list[str]:
    """The best-rank values of current statements given as ``(qid, rank)`` (rank ``preferred``,
    ``normal`` or ``deprecated``; historical ones already left out): the preferred ones if any,
    else the normal ones, each once, sorted by qid. Both readers (dump and SPARQL) use it."""
    preferred, normal = set(), set()
    for qid, rank in statements:
        if rank == "preferred":
            preferred.add(qid)
        elif rank == "normal":
            normal.add(qid)
    chosen = preferred or normal
    return sorted(chosen, key=_qid_order) if len(chosen) > 1 else list(chosen)


def _ended(claim: dict) -> bool:
    """Whether a statement has an end time (P582) with a value or an unknown value."""
    qualifiers = claim.get("qualifiers")
    if not qualifiers:
        return False
    snaks = qualifiers.get("P582") or []
    return any((snak or {}).get("snaktype", "value") != "novalue" for snak in snaks)


def item_claims(data: dict, prop: str) -> list[str]:
    """The items a JSON entity's current best-rank statements of ``prop`` point at (see the
    module's rule: no deprecated or ended statement; preferred if any, else normal; sorted)."""
    statements = _section(data, "claims").get(prop, [])
    if not isinstance(statements, list):
        raise TypeError(f"the statements of {prop} are {str(statements)[:40]!r}, not a list")
    return _best_values(statements)


def _section(data: dict, key: str) -> dict:
    """An entity's ``labels``, ``aliases``, ``sitelinks`` or ``claims``: an object, or the empty
    ``[]`` Wikidata writes for none; absent, empty. Anything else (null too: a dump never has
    it) is a ``TypeError`` saying what it is, so that the line is named, not read as empty."""
    value = data.get(key, {})
    if isinstance(value, list) and not value:
        return {}
    if not isinstance(value, dict):
        raise TypeError(f"{key} is {str(value)[:40]!r} ({type(value).__name__}), not an object")
    return value


def _best_values(statements: list) -> list[str]:
    """The items that the current best-rank ones of ``statements`` (JSON) point at."""
    current = []
    for claim in statements:
        snak = claim.get("mainsnak") or {}
        value = (snak.get("datavalue") or {}).get("value")
        if snak.get("snaktype", "value") != "value" or not isinstance(value, dict) or _ended(claim):
            continue
        qid = value.get("id") or (
            f"Q{_expect(value['numeric-id'], int, 'a numeric-id')}" if "numeric-id" in value else None
        )
        if qid:
            current.append((_expect(qid, str, "a target id"), claim.get("rank", "normal")))
    return best_rank(current)


def _expect(value, kind: type, what: str):
    """``value`` when it is of ``kind``; else a ``TypeError`` saying what it is."""
    if type(value) is not kind:
        raise TypeError(f"{what} is {str(value)[:40]!r} ({type(value).__name__}), not {kind.__name__}")
    return value


def entity_from_json(data: dict) -> Entity:
    """The :class:`Entity` of one entity of a Wikidata JSON dump (a parsed line); ``KeyError``
    if it has no ``id``."""
    return Entity(
        qid=_expect(data["id"], str, "the id"),
        labels={k: _expect(v["value"], str, f"the label {k}") for k, v in _section(data, "labels").items()},
        aliases={
            k: [_expect(a["value"], str, f"an alias {k}") for a in v] for k, v in _section(data, "aliases").items()
        },
        sitelinks={k: _expect(v["title"], str, f"the sitelink {k}") for k, v in _section(data, "sitelinks").items()},
        located_in=item_claims(data, "P131"),
        country=item_claims(data, "P17"),
    )


def _loads(line: bytes):
    """A line's JSON: orjson, and json where orjson refuses what json reads (a lone surrogate
    escaped in a string), so that the result is json's."""
    try:
        return _fast_loads(line)
    except json.JSONDecodeError:  # orjson's is a subclass
        return json.loads(line)


def _array(line: bytes, start: int) -> list | None:
    """The JSON array that starts at ``line[start]``: the first prefix ending in ``]`` that
    parses (none shorter can: its brackets would not close). Only prefixes whose brackets
    balance, strings not told apart, are tried (a bracket inside a string may make more);
    None after :data:`_TRIES` of them."""
    end, opened, closed = start, 0, 0
    for _ in range(_TRIES):
        stop = line.find(b"]", end) + 1
        if not stop:
            return None
        opened += line.count(b"[", end, stop)
        closed += 1
        end = stop
        if opened != closed:
            continue
        try:
            value = _fast_loads(line[start:end])
        except json.JSONDecodeError:
            continue
        return value if isinstance(value, list) else None
    return None


def _label_span(line: bytes, before: int) -> tuple[int, int] | None:
    """Where the labels object lies (``"labels":`` up to the next key of the entity), before
    the statements at ``before``; (0, 0) when the entity has none; None if not so laid out."""
    start = line.find(b'"labels":')
    if start < 0:
        return (0, 0)
    if start > before or line[start + 9 : start + 10] != b"{":
        return None  # labels after the statements (another order), or not an object: read whole
    for key in _AFTER_LABELS:
        end = line.find(key, start, before)
        if end >= 0:
            return start, end
    return None


@functools.lru_cache(maxsize=16)
def _label_keys(languages: tuple[str, ...]) -> list[tuple[str, bytes, bytes]]:
    """``(language, its label as the dump lays it out, its bare key)`` for each language."""
    return [
        (lang, b'"%s":{"language":"%s","value":' % (lang.encode(), lang.encode()), b'"%s":' % lang.encode())
        for lang in languages
    ]


def _fast_place(line: bytes, qid: str, languages: list[str], named: int = 0) -> Entity | None:
    """The place on ``line`` in the dump's layout (compact, each statement's ``mainsnak``
    first), from its P131 and P17 statement arrays and the labels asked for, parsed alone; None
    when the line is not so laid out (or not whole), so that it is parsed whole instead.
    ``Entity(qid)`` without values: not a place (the P131 or P17 the screen saw are in
    qualifiers or references). ``named``: where P131 or P17 is first named on the line."""
    end = len(line)
    while end and line[end - 1] in b" \t\r,":
        end -= 1
    if line[:1] != b"{" or line[end - 1 : end] != b"}" or _NOT_ARRAY.search(line, named):
        return None  # not whole, or P131 or P17 holding no array: read whole, to say where
    values: dict[str, list] = {}
    first = end
    for prop, key in _ARRAYS.items():
        at = line.find(key, named)
        if at < 0:
            values[prop] = []
            continue
        statements = _array(line, at + len(key) - len(b'[{"mainsnak"'))
        if statements is None:
            return None
        values[prop], first = _best_values(statements), min(first, at)
    if first == end:  # no statement array of either: none, or another layout
        return Entity(qid) if line.find(b'"mainsnak"') < 0 or line.find(b'":[{"mainsnak"') >= 0 else None
    if not (values["P131"] or values["P17"]):
        return Entity(qid)
    span = _label_span(line, first)
    if span is None:
        return None
    labels = {}
    for lang, key, bare in _label_keys(tuple(languages)):
        at = line.find(key, *span)
        if at < 0:
            if line.find(bare, *span) >= 0:
                return None  # a label laid out otherwise
            continue
        value = _STRING.match(line, at + len(key))
        if value is None:
            return None
        labels[lang] = _loads(value.group())
    return Entity(qid, labels=labels, located_in=values["P131"], country=values["P17"])


def place_from_json(data: dict, languages: Iterable[str]) -> Entity:
    """The place an entity of a Wikidata JSON dump (a parsed line) is as
    :func:`read_items_and_places` keeps it: its labels in ``languages``, its current best-rank
    P131 and P17 values; no values: not a place. ``KeyError`` if it has no ``id``."""
    labels = _section(data, "labels")
    return Entity(
        qid=_expect(data["id"], str, "the id"),
        labels={lang: _expect(labels[lang]["value"], str, f"the label {lang}") for lang in languages if lang in labels},
        located_in=item_claims(data, "P131"),
        country=item_claims(data, "P17"),
    )
