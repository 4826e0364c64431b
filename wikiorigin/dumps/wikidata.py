"""Labels, aliases, sitelinks and place of Wikidata items: from the JSON dump, or from a SPARQL
endpoint. The place is what the items' regions are derived from: "located in the administrative
territorial entity" (P131) and "country" (P17), their current best-rank values only, read by
one rule from either source (:func:`best_rank`): deprecated statements never count; a
statement with an "end time" (P582) qualifier, known or unknown, is historical and left out
(an explicit "no value" end time is not one); of the rest, the preferred statements if there
are any, else the normal ones; values that are no item (``somevalue``, ``novalue``) left out.
The values are sorted by qid: their order in the dump, or a SPARQL endpoint's row order, means
nothing and never changes a result.

The JSON dump (``wikidata-<date>-all.json.gz``) is one entity per line between ``[`` and
``]``, each line ending with a comma. :func:`read_entities` streams it and, when given the
QIDs wanted, reads each line's ``"id"`` with a regex on its first bytes and parses only the
wanted lines: most of the dump is never parsed. A line that is not JSON is counted and
reported with its line number, never fatal; a line of JSON that is no entity, or an entity
with values of types a dump never has (an integer target id, a label that is no string), is a
:class:`~wikiorigin.errors.DumpError` naming the line. Every reader reads the dump's frame by one
rule (:class:`_Frame`): a line ``[`` first, an entity next, a line ``]`` last; a file that is no
dump (a JSON array laid out otherwise among them) ends at its first lines, one cut short at its
end, after every entity before. An entity on several lines (a dump concatenated
or repeated in part) is read from its first line only: the others are counted and reported
once (how many, the first repeated id and its line), so that the result never depends on
which copy came last.

:func:`read_items_and_places` is the one pass a job needs (``wikiorigin wikidata extract``):
the wanted items whole, and every place of the dump (an entity with a current best-rank P131
or P17 value) with those values and its labels in the languages asked for, so that the region
walks never read the dump again. Lines are screened before anything is parsed: the id, then
whether the text names P131 or P17 at all (most lines do not); the screen is compiled
(``_screen.c``, built by ``setup.py``; 16 bytes at a time) with a pure-Python path that gives
the same (:func:`_py_screen`, compared in the tests). A place is read from its line
in the dump's layout (``"P131":[{"mainsnak"...``): only its two statement arrays and the labels
asked for are parsed (orjson); a line in any other layout is parsed whole, with the same result
(the tests compare them line by line). Decompression runs in a thread of its own beside it.

:func:`query_entities` asks a SPARQL endpoint (Wikidata's, or any that speaks the protocol)
in batches of ``VALUES``, with SPARQLWrapper.
"""

from __future__ import annotations

import functools
import json
import re
import shlex
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

try:  # several times faster than json on the lines kept; json where it is missing
    from orjson import JSONDecodeError as _OrjsonError, loads as _fast_loads
except ImportError:  # pragma: no cover - orjson is a dependency
    _OrjsonError, _fast_loads = json.JSONDecodeError, json.loads

from ..errors import DumpError, UnknownWikiError, WikioriginError
from ..languages import lookup
from .compression import open_dump

__all__ = [
    "Entity",
    "EntityStats",
    "read_entities",
    "read_items_and_places",
    "query_entities",
    "entity_from_json",
    "place_from_json",
    "item_claims",
    "best_rank",
]

_ID = re.compile(rb'"id"\s*:\s*"([QPL][0-9]+)"')
_PREFIX = 400  # the id stands near the start of a line in every dump version
_PLACE = re.compile(rb'P131"|P17"')  # may state P131 or P17 (also a qualifier or a reference: parsed to tell)
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


@dataclass(slots=True)
class EntityStats:
    """What a read of a Wikidata JSON dump saw: lines read, entities parsed, entities wanted and
    found, lines that were not JSON, lines repeating an entity already read, and notes."""

    lines: int = 0
    parsed: int = 0
    found: int = 0
    bad_lines: int = 0
    duplicates: int = 0  # lines of an entity already read (the first line of each is kept)
    first_duplicate: str | None = None  # the first of them: "Q8 on line 9"
    notes: list[str] = field(default_factory=list)
    places: int = 0  # entities with a current P131 or P17 value kept (read_items_and_places)


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
    return _best_values((data.get("claims") or {}).get(prop) or [])


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
        labels={k: _expect(v["value"], str, f"the label {k}") for k, v in (data.get("labels") or {}).items()},
        aliases={
            k: [_expect(a["value"], str, f"an alias {k}") for a in v] for k, v in (data.get("aliases") or {}).items()
        },
        sitelinks={k: _expect(v["title"], str, f"the sitelink {k}") for k, v in (data.get("sitelinks") or {}).items()},
        located_in=item_claims(data, "P131"),
        country=item_claims(data, "P17"),
    )


def _fresh(qid: bytes, wanted: set[bytes] | None, seen: set[bytes], stats: EntityStats, number: int) -> bool:
    """Whether the line ``number`` of entity ``qid`` is to be read: wanted (all are, without
    ``wanted``) and not read before; a repeat is counted, the first one named."""
    if wanted is not None and qid not in wanted:
        return False
    if qid in seen:
        stats.duplicates += 1
        stats.first_duplicate = stats.first_duplicate or f"{qid.decode()} on line {number}"
        return False
    return True


def read_entities(path, qids: Iterable[str] | None = None, stats: EntityStats | None = None) -> Iterator[Entity]:
    """The entities of a Wikidata JSON dump (only ``qids`` when given), each once: from its
    first line (later lines of the same id are counted in ``stats.duplicates`` and noted once
    the dump has been read to its end). The ids read are kept to tell repeats: with ``qids``
    at most those, without them every id of the dump."""
    wanted = None if qids is None else {q.encode() for q in qids}
    stats = stats if stats is not None else EntityStats()
    seen: set[bytes] = set()
    for number, line in _numbered(path):
        line = line.strip()
        if line in (b"[", b"]", b""):
            continue
        stats.lines += 1
        found = _ID.search(line, 0, _PREFIX)
        if found is not None and not _fresh(found.group(1), wanted, seen, stats, number):
            continue
        data = _parsed(line, path, number, stats)
        if data is None:
            continue
        with _entity_line(path, number, line):
            qid = data["id"].encode()
            if (found is None or found.group(1) != qid) and not _fresh(qid, wanted, seen, stats, number):
                stats.parsed += 1  # an id the regex did not see: its claims are never read
                continue
            entity = entity_from_json(data)
        seen.add(qid)
        stats.parsed += 1
        stats.found += 1
        yield entity
    if stats.duplicates:
        stats.notes.append(
            f"{path}: {stats.duplicates} lines repeat an entity already read (the first: "
            f"{stats.first_duplicate}); each entity was read from its first line"
        )


def _numbered(path) -> Iterator[tuple[int, bytes]]:
    """The dump's lines with their numbers (from 1), its frame checked (:class:`_Frame`)."""
    number = 0
    for buf, pos, end in _blocks(path):
        for line in buf[pos : end - (buf[end - 1 : end] == b"\n")].split(b"\n"):
            number += 1
            yield number, line


def _parsed(line: bytes, path, number: int, stats: EntityStats):
    """A line's JSON; None for a line that is not JSON (torn or damaged: counted, noted)."""
    try:
        return _loads(line.strip().rstrip(b","))
    except ValueError as exc:  # JSON, UTF-8
        _bad(stats, path, number, exc, line)
        return None


@contextmanager
def _entity_line(path, number: int, line: bytes):
    """Reading a parsed line: an object that is no entity, or an entity with values of types a
    dump never has (an integer target id, a label that is not a string), is a DumpError
    naming the line: its rows would be wrong, not missing."""
    try:
        yield
    except (KeyError, TypeError, AttributeError) as exc:
        what = "not a Wikidata JSON dump: one entity per line" if _no_entity(line) else "an entity of unexpected types"
        raise DumpError(f"{path}: line {number}: {what} ({type(exc).__name__}: {exc}): {line[:60]!r}") from None


def _no_entity(line: bytes) -> bool:
    """Whether a line's JSON is not an object with an ``"id"``."""
    return not _is_entity(line.strip())


def _loads(line: bytes):
    """A line's JSON: orjson, and json where orjson refuses what json reads (a lone surrogate
    escaped in a string), so that the result is json's."""
    try:
        return _fast_loads(line)
    except _OrjsonError:
        return json.loads(line)


def _number(qid: bytes) -> int | None:
    """An item's number, when it is one of the numbers a bitmap holds (up to 2^28: twice
    Wikidata's today, 32 MB)."""
    if qid[:1] == b"Q" and qid[1:].isdigit() and len(qid) < 11:
        n = int(qid[1:])
        return n if n < 1 << 28 else None
    return None


class _Seen:
    """The ids read: a bit per item number (the dump's ~10^8 items in a few MB), a set for the
    others."""

    def __init__(self):
        self.bits = bytearray()
        self.others: set[bytes] = set()

    def __contains__(self, qid: bytes) -> bool:
        n = _number(qid)
        if n is not None:
            return n >> 3 < len(self.bits) and bool(self.bits[n >> 3] & (1 << (n & 7)))
        return qid in self.others

    def add(self, qid: bytes) -> None:
        n = _number(qid)
        if n is not None:
            if n >> 3 >= len(self.bits):
                self.bits.extend(bytes(max((n >> 3) + 1 - len(self.bits), len(self.bits))))
            self.bits[n >> 3] |= 1 << (n & 7)
        else:
            self.others.add(qid)


def _chunks(path, block: int) -> Iterator[bytes]:
    """The dump's decompressed bytes, ``block`` at a time, decompressed in a thread of its own
    (isal's for gzip, indexed_bzip2's for bzip2) that releases the interpreter's lock: the
    reading and parsing go on beside it. (A process of its own, reading through a pipe, was
    measured no faster on the project's two cores: 1.97 against 1.89 times a decompression.)"""
    with open_dump(path, threads=2) as stream:
        while chunk := stream.read(block):
            yield chunk


def _blocks(path, block: int = 1 << 22) -> Iterator[tuple[bytes, int, int]]:
    """The decompressed dump as ``(buffer, start, end)``: whole lines ``buffer[start:end]``. Only
    a line cut by the end of a block is copied (joined with its rest). What decodes before
    damage comes out first, then the :class:`~wikiorigin.errors.DumpError`; so does everything
    before a line that shows the file is no dump, or an end that shows it cut short
    (:class:`_Frame`: every reader of the dump reads it through here)."""
    frame, rest = _Frame(path), b""
    for chunk in _chunks(path, block):
        last = chunk.rfind(b"\n") + 1
        if not last:
            rest += chunk
            continue
        first = chunk.find(b"\n") + 1
        if rest:
            yield frame.lines(rest + chunk[:first], 0, len(rest) + first)
        else:
            first = 0
        yield frame.lines(chunk, first, last)
        rest = chunk[last:]
    if rest:
        yield frame.lines(rest, 0, len(rest))
    frame.end()


def _how(path) -> str:
    """How a dump is laid out, and a command that lays out a JSON array so."""
    return (
        "Wikidata writes a line '[', an entity a line, a line ']'; to write a JSON array so: "
        f"(echo '['; jq -c '.[]' {shlex.quote(str(path))} | sed '$!s/$/,/'; echo ']') > DUMP.json"
    )


class _Frame:
    """The frame of a Wikidata JSON dump, one rule for every reader: a line ``[`` first, an
    entity (a JSON object with an ``"id"``) or ``]`` on the next line that is not blank, and a
    line ``]`` last; else a :class:`~wikiorigin.errors.DumpError` (a file that is not a dump,
    one cut short). Only the first lines are read and the last of each block looked at."""

    def __init__(self, path):
        self.path, self.number, self.opened, self.entity = path, 0, False, False
        self.last, self.bytes = b"", 0

    def lines(self, buf: bytes, pos: int, end: int) -> tuple[bytes, int, int]:
        """``(buf, pos, end)`` as given, once its lines are in the frame."""
        self.bytes += end - pos
        at, stop = pos, end
        while not self.entity and at < end:
            cut = buf.find(b"\n", at, end)
            cut = end if cut < 0 else cut
            self.number += 1
            self._head(buf[at:cut].strip())
            at = cut + 1
        while stop > pos and buf[stop - 1] in b" \t\r\n":
            stop -= 1
        if stop > pos:  # the last line that is not blank
            start = max(pos, buf.rfind(b"\n", pos, stop) + 1)
            self.last = buf[start : min(stop, start + 60)]
        return buf, pos, end

    def _head(self, line: bytes) -> None:
        if not line:
            return
        if not self.opened and line == b"[":
            self.opened = True
            return
        if self.opened and (line == b"]" or _is_entity(line)):
            self.entity = True
            return
        if not self.opened and line[:1] == b"[":
            what = "a JSON array on one line" if line.rstrip(b",")[-1:] == b"]" else "a JSON array over several lines"
        elif not self.opened and _is_entity(line):
            what = "entities without the line '[' before them"
        elif self.opened and line[:1] in b'{"' and not line.rstrip(b",").endswith(b"}"):
            what = "a JSON array over several lines"
        else:
            what = f"found {line[:40]!r}"
        raise DumpError(
            f"{self.path}: line {self.number}: not a Wikidata JSON dump: one entity per line ({what}; {_how(self.path)})"
        )

    def end(self) -> None:
        if not self.opened:
            raise DumpError(f"{self.path}: empty: not a Wikidata JSON dump ({_how(self.path)})")
        if self.last != b"]":
            raise DumpError(
                f"{self.path}: cut short: the dump ends after {self.bytes:,} bytes without its closing line ']' "
                f"(its last line begins {self.last[:40]!r}): download it again"
            )


def _is_entity(line: bytes) -> bool:
    """Whether a line is one entity of a dump: a JSON object with an ``"id"``."""
    try:
        data = _loads(line.rstrip(b","))
    except ValueError:
        return False
    return isinstance(data, dict) and "id" in data


def _py_screen(buf: bytes, pos: int, end: int, wanted: set[bytes], number: int) -> tuple[list, int, int]:
    """The lines of ``buf[pos:end]`` that may be kept, as ``(line number, the id its first bytes
    give or None, the line, where in it P131 or P17 is first named)``: a wanted id, a line whose
    id the first bytes do not give (the id of a nested object, after a ``{``, is not the
    entity's), or one whose text names P131 or P17; with the entity lines counted and the
    number of the last line. The pure-Python path of ``_screen.c``, which gives the same (and
    refuses the same: ``buf`` not bytes or ``wanted`` not a set, ``TypeError``; a window
    outside ``buf``, ``ValueError``)."""
    if not isinstance(buf, bytes) or not isinstance(wanted, (set, frozenset)):
        raise TypeError("screen: buf must be bytes and wanted a set of bytes")
    if not 0 <= pos <= end <= len(buf):
        raise ValueError("screen: pos and end outside the buffer")
    found, lines = [], 0
    find, read_id, screen = buf.find, _ID.search, _PLACE.search
    while pos < end:
        stop = find(b"\n", pos, end)
        stop = end if stop < 0 else stop
        number += 1
        own = read_id(buf, pos, min(pos + _PREFIX, stop))
        if own is not None and find(b"{", pos + 1, own.start()) < 0:  # the entity's own id
            lines += 1
            qid = own.group(1)
            named = screen(buf, pos, stop)
            if named is not None:
                found.append((number, qid, buf[pos:stop], max(0, named.start() - pos - 1)))
            elif qid in wanted:
                found.append((number, qid, buf[pos:stop], 0))
        else:
            line = buf[pos:stop].strip()
            if line not in (b"[", b"]", b""):
                lines += 1
                found.append((number, None, line, 0))
        pos = stop + 1
    return found, lines, number


try:  # the compiled screen (setup.py builds it when a C compiler is there)
    from ._screen import screen as _screen
except ImportError:  # pragma: no cover - depends on the build
    _screen = _py_screen


def _candidates(path, wanted: set[bytes], stats: EntityStats) -> Iterator[tuple[int, bytes | None, bytes, int]]:
    """The lines of the dump that may be kept (see :func:`_py_screen`); the others are passed
    over on their id and that screen, never parsed."""
    number = 0
    for buf, pos, end in _blocks(path):
        found, lines, number = _screen(buf, pos, end, wanted, number)
        stats.lines += lines
        yield from found


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
        except _OrjsonError:
            continue
        return value if isinstance(value, list) else None
    return None


def _label_span(line: bytes, before: int) -> tuple[int, int] | None:
    """Where the labels object lies (``"labels":`` up to the next key of the entity), before
    the statements at ``before``; (0, 0) when the entity has none; None if not so laid out."""
    start = line.find(b'"labels":')
    if start < 0:
        return (0, 0)
    if start > before:
        return None  # labels after the statements: another order
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
    values, first = {}, end
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
    labels = data.get("labels") or {}
    return Entity(
        qid=_expect(data["id"], str, "the id"),
        labels={lang: _expect(labels[lang]["value"], str, f"the label {lang}") for lang in languages if lang in labels},
        located_in=item_claims(data, "P131"),
        country=item_claims(data, "P17"),
    )


def _bad(stats: EntityStats, path, number: int, exc: Exception, line: bytes) -> None:
    stats.bad_lines += 1
    if len(stats.notes) < 20:
        stats.notes.append(f"{path}: line {number}: not an entity in JSON ({exc}): {line[:60]!r}")


def _read_kept(
    number: int,
    qid: bytes | None,
    line: bytes,
    named: int,
    wanted: set[bytes],
    languages: list[str],
    path,
    stats: EntityStats,
) -> tuple[bytes, Entity] | None:
    """A candidate line as kept: ``(id, entity)``, the wanted ones whole, the others as places
    (an entity without values: not one); None for a line that is not an entity."""
    if qid is not None and qid[:1] == b"Q" and qid not in wanted:  # lexemes have claims in senses too
        try:
            entity = _fast_place(line, qid.decode(), languages, named)
        except (ValueError, KeyError, TypeError, AttributeError):  # malformed: parsed whole, to say where
            entity = None
        if entity is not None:
            return qid, entity
    data = _parsed(line, path, number, stats)
    if data is None:
        return None
    with _entity_line(path, number, line):
        real = data["id"].encode()
        entity = entity_from_json(data) if real in wanted else place_from_json(data, languages)
    return real, entity


def read_items_and_places(
    path, qids: Iterable[str], languages: Iterable[str], stats: EntityStats | None = None
) -> Iterator[Entity]:
    """One pass of a Wikidata JSON dump: the entities of ``qids`` whole (as
    :func:`read_entities` gives them), and every other place (an entity with a current
    best-rank P131 or P17 value: see :func:`place_from_json`) with its labels in ``languages``,
    in the dump's order, each once, from its first line (repeats counted in
    ``stats.duplicates``, noted at the end). ``stats.found`` counts the wanted entities,
    ``stats.places`` the others. Damage to the dump raises
    :class:`~wikiorigin.errors.DumpError` after every entity before it."""
    wanted = {q.encode() for q in qids}
    languages = list(dict.fromkeys(languages))
    stats = stats if stats is not None else EntityStats()
    seen = _Seen()
    for number, qid, line, named in _candidates(path, wanted, stats):
        if qid is not None and qid in seen:
            _repeat(stats, qid, number)
            continue
        kept = _read_kept(number, qid, line, named, wanted, languages, path, stats)
        if kept is None:
            continue
        real, entity = kept
        stats.parsed += 1
        if real != qid and real in seen:  # an id its first bytes did not give
            _repeat(stats, real, number)
            continue
        if real in wanted:
            stats.found += 1
        elif not (entity.located_in or entity.country):
            continue
        else:
            stats.places += 1
        seen.add(real)
        yield entity
    if stats.duplicates:
        stats.notes.append(
            f"{path}: {stats.duplicates} lines repeat an entity already read (the first: "
            f"{stats.first_duplicate}); each entity was read from its first line"
        )


def _repeat(stats: EntityStats, qid: bytes, number: int) -> None:
    stats.duplicates += 1
    stats.first_duplicate = stats.first_duplicate or f"{qid.decode()} on line {number}"


_STATEMENTS = """{{ ?item p:PROP ?st . ?st ps:PROP ?value ; wikibase:rank ?rank .
          FILTER(?rank != wikibase:DeprecatedRank) FILTER NOT EXISTS {{ ?st pq:P582 ?end }}
          BIND("PROP" AS ?kind) BIND(STR(?rank) AS ?lang) }}"""
# P131 and P17 as the dump is read: every current statement with its rank (?lang carries it),
# the best rank chosen by best_rank; the rows sorted, so that a run is the same as the last.
_QUERY = (
    """SELECT ?item ?kind ?lang ?value WHERE {{
  VALUES ?item {{ {items} }}
  {{ ?item rdfs:label ?value . BIND("label" AS ?kind) BIND(LANG(?value) AS ?lang) }}
  UNION {{ ?item skos:altLabel ?value . BIND("alias" AS ?kind) BIND(LANG(?value) AS ?lang) }}
  UNION {{ ?article schema:about ?item ; schema:isPartOf ?site ; schema:name ?value .
          ?site wikibase:wikiGroup "wikipedia" .
          BIND("sitelink" AS ?kind) BIND(STR(?site) AS ?lang) }}
  UNION """
    + _STATEMENTS.replace("PROP", "P131")
    + """
  UNION """
    + _STATEMENTS.replace("PROP", "P17")
    + """
  FILTER(?kind = "sitelink" || ?kind = "P131" || ?kind = "P17" || LANG(?value) IN ({languages}))
}} ORDER BY ?item ?kind ?lang ?value"""
)
_RANKS = {"http://wikiba.se/ontology#PreferredRank": "preferred", "http://wikiba.se/ontology#NormalRank": "normal"}
_ITEM = re.compile(r"http://www\.wikidata\.org/entity/(Q[0-9]+)")
_PREFIXES = """PREFIX wd: <http://www.wikidata.org/entity/>
PREFIX p: <http://www.wikidata.org/prop/>
PREFIX ps: <http://www.wikidata.org/prop/statement/>
PREFIX pq: <http://www.wikidata.org/prop/qualifier/>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
PREFIX skos: <http://www.w3.org/2004/02/skos/core#>
PREFIX schema: <http://schema.org/>
PREFIX wikibase: <http://wikiba.se/ontology#>
"""


def _site_dbname(site_url: str) -> str | None:
    """``https://ja.wikipedia.org/`` -> ``jawiki`` (the sitelink key of the JSON dump)."""
    try:
        return lookup(site_url.split("//", 1)[-1].split("/", 1)[0]).dbname
    except UnknownWikiError:
        return None  # a site the registry does not know: not needed here


def _read_rows(rows: list[dict], entities: dict[str, Entity], statements: dict) -> None:
    """One query's rows into ``entities``; P131 and P17 rows as ``(qid, rank)`` into
    ``statements[(item, prop)]``, for :func:`best_rank` once every row is in."""
    for row in rows:
        qid = row["item"]["value"].rsplit("/", 1)[-1]
        kind, lang, value = row["kind"]["value"], row["lang"]["value"], row["value"]["value"]
        entity = entities.setdefault(qid, Entity(qid))
        if kind == "label":
            entity.labels[lang] = value
        elif kind == "alias":
            entity.aliases.setdefault(lang, []).append(value)
        elif kind in ("P131", "P17"):
            target = _ITEM.fullmatch(value)  # an unknown value is a blank node or a genid IRI
            if target is not None and lang in _RANKS:
                statements.setdefault((qid, kind), []).append((target.group(1), _RANKS[lang]))
        elif (site := _site_dbname(lang)) is not None:
            entity.sitelinks[site] = value


def query_entities(
    endpoint: str,
    qids: list[str],
    languages: list[str],
    batch: int = 200,
    user_agent: str = "wikiorigin (SPARQL; research)",
) -> dict[str, Entity]:
    """Labels and aliases in ``languages``, Wikipedia sitelinks, P131 and P17 (current
    statements, the best rank: the module's rule, as the dump is read) of ``qids`` from a
    SPARQL endpoint, ``batch`` items a query, the rows in a fixed order."""
    from SPARQLWrapper import JSON, SPARQLWrapper
    from SPARQLWrapper.SPARQLExceptions import SPARQLWrapperException

    client = SPARQLWrapper(endpoint, agent=user_agent)
    client.setReturnFormat(JSON)
    entities = {q: Entity(q) for q in qids}
    statements: dict[tuple[str, str], list[tuple[str, str]]] = {}
    langs = ", ".join(f'"{lang}"' for lang in languages)
    for start in range(0, len(qids), batch):
        items = " ".join(f"wd:{q}" for q in qids[start : start + batch])
        client.setQuery(_PREFIXES + _QUERY.format(items=items, languages=langs))
        try:
            rows = client.queryAndConvert()["results"]["bindings"]
        except (SPARQLWrapperException, OSError, KeyError, ValueError) as exc:
            raise WikioriginError(f"{endpoint}: SPARQL query for items {start + 1}.. failed: {exc}") from None
        _read_rows(rows, entities, statements)
    for (qid, prop), found in statements.items():
        setattr(entities[qid], "located_in" if prop == "P131" else "country", best_rank(found))
    return entities
