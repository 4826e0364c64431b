"""The Wikidata JSON dump's bytes and lines (part of :mod:`wikiorigin.dumps.wikidata`): the
decompressed blocks (:func:`_blocks`), the frame every reader checks (:class:`_Frame`), and the
line screen that passes over most lines on their id and text (:func:`_py_screen`, or the
compiled ``_screen.c`` that gives the same)."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator

from ..errors import DumpError
from ._wdjson import _loads
from .compression import open_dump

__all__ = [
    "_ID",
    "_PREFIX",
    "_PLACE",
    "_numbered",
    "_chunks",
    "_blocks",
    "_Frame",
    "_is_entity",
    "_py_screen",
    "_screen",
]

_ID = re.compile(rb'"id"\s*:\s*"([QPL][0-9]+)"')
_PREFIX = 400  # the id stands near the start of a line in every dump version
_PLACE = re.compile(rb'P131"|P17"')  # may state P131 or P17 (also a qualifier or a reference: parsed to tell)


def _numbered(path) -> Iterator[tuple[int, bytes]]:
    """The dump's lines with their numbers (from 1), its frame checked (:class:`_Frame`)."""
    number = 0
    for buf, pos, end in _blocks(path):
        for line in buf[pos : end - (buf[end - 1 : end] == b"\n")].split(b"\n"):
            number += 1
            yield number, line


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
        self.last, self.before, self.bytes = b"", b"", 0

    def lines(self, buf: bytes, pos: int, end: int) -> tuple[bytes, int, int]:
        """``(buf, pos, end)`` as given, once its lines are in the frame."""
        self.bytes += end - pos
        at = pos
        while not self.entity and at < end:
            cut = buf.find(b"\n", at, end)
            cut = end if cut < 0 else cut
            self.number += 1
            self._head(buf[at:cut].strip())
            at = cut + 1
        self._last_line(buf, pos, end)
        return buf, pos, end

    def _last_line(self, buf: bytes, pos: int, stop: int) -> None:
        """Keeps the last line of ``buf[pos:stop]`` that is not blank, and the one before it."""
        while stop > pos and buf[stop - 1] in b" \t\r\n":
            stop -= 1
        if stop > pos:
            start = max(pos, buf.rfind(b"\n", pos, stop) + 1)
            before = self._last_line_before(buf, pos, start)
            self.before, self.last = before if before is not None else self.last, buf[start : min(stop, start + 60)]

    @staticmethod
    def _last_line_before(buf: bytes, pos: int, stop: int) -> bytes | None:
        while stop > pos and buf[stop - 1] in b" \t\r\n":
            stop -= 1
        return buf[max(pos, buf.rfind(b"\n", pos, stop) + 1) : stop][:60] if stop > pos else None

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
        if self.last != b"]" and self.before.strip() == b"]":
            raise DumpError(
                f"{self.path}: more after the dump's closing line ']' (a line beginning {self.last[:40]!r}): "
                "not one whole dump: download it again"
            )
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
