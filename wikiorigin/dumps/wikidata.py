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

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from ..errors import DumpError

# the frame, the screen and the parsing live in _wdframe and _wdjson; the names other code and
# the tests import from here are re-exported (``as`` themselves)
from ._wdframe import (
    _ID,
    _PREFIX,
    _blocks,
    _chunks as _chunks,
    _Frame as _Frame,
    _is_entity,
    _numbered,
    _py_screen as _py_screen,
    _screen,
)
from ._wdjson import (
    Entity,
    _best_values as _best_values,
    _expect as _expect,
    _fast_place,
    _loads,
    best_rank,
    entity_from_json,
    item_claims,
    place_from_json,
)
from ._wdsparql import query_entities

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


def _candidates(path, wanted: set[bytes], stats: EntityStats) -> Iterator[tuple[int, bytes | None, bytes, int]]:
    """The lines of the dump that may be kept (see :func:`_py_screen`); the others are passed
    over on their id and that screen, never parsed."""
    number = 0
    for buf, pos, end in _blocks(path):
        found, lines, number = _screen(buf, pos, end, wanted, number)
        stats.lines += lines
        yield from found


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
