"""Footnotes of rendered HTML: markers numbered per group as MediaWiki's Cite numbers them, and
each cited note's citation fields (COinS).

A marker shows its group and number (``[1]``, ``[note 2]``: Parsoid always, the legacy parser by
default) or a label the wiki defines for its group (``MediaWiki:Cite link label group-lower-alpha``
gives ``[a]``, ``[b]``; ``[I]`` for upper-roman, ``[α]`` ...). A labelled marker's group is the
one Parsoid names (``data-mw-group``), else the list its note is in, named after the label of its
first note (``a``: ``lower-alpha``); its number is its note's place in that group, in the order
the notes are first cited: Cite's own order, whatever the labels. Cite starts a group anew
after each of its lists; a later list's notes are numbered on from the earlier lists' (as the
wikitext path numbers them), so that no two notes share a number.
"""

from __future__ import annotations

import re
import urllib.parse

from ..wikitext import Reference

__all__ = ["Footnotes", "describe"]

_LABEL = re.compile(r"\[\s*(.+?)\s*\]")
_NUMBERED = re.compile(r"(?:(.+?)\s+)?(\d+)")
_PLACE = re.compile("\x01(\\d+)\x01")
_STYLES = {"a": "lower-alpha", "A": "upper-alpha", "i": "lower-roman", "I": "upper-roman", "α": "lower-greek"}


class Footnotes:
    """The markers and notes lists met while reading one page: a marker stands in the text as a
    place-holder until :meth:`resolve` numbers the notes, then :meth:`shown` writes them."""

    def __init__(self):
        self.markers: list[tuple[str, str, str | None]] = []  # (footnote id, label, group named)
        self.notes: dict[str, object] = {}  # footnote id -> its list item
        self.lists: dict[str, int] = {}  # footnote id -> the notes list it is in
        self.cited: dict[str, tuple[str | None, int]] = {}  # footnote id -> (group, number)

    def marker(self, sup, target_of) -> str:
        """The place-holder of marker ``sup`` (empty when it is none), recorded."""
        a = next(sup.iter("a"), None)
        text = sup.text_content()
        label = _LABEL.search(text)  # [1]; a wiki may show it otherwise (1)
        shown = label.group(1) if label else text.strip(" ()\u00a0")
        if a is None or not shown or not (target := target_of(a)):
            return ""
        self.markers.append((target, shown, a.get("data-mw-group")))
        return f"\x01{len(self.markers) - 1}\x01"

    def note_by_id(self, root) -> None:
        """Notes cited but in no list of class ``references`` (a wiki's own list markup): found
        by their id anywhere in ``root``."""
        for target, *_ in self.markers:
            if target not in self.notes and (found := root.get_element_by_id(target, None)) is not None:
                self.notes[target] = found
                self.lists[target] = -1

    def notes_list(self, ol) -> None:
        """Record the notes of list ``ol`` (first met wins)."""
        number = len(set(self.lists.values()))
        for li in ol.iterchildren("li"):
            if li.get("id") and li.get("id") not in self.notes:
                self.notes[li.get("id")] = li
                self.lists[li.get("id")] = number

    def resolve(self) -> None:
        """Number every cited note (markers met so far, in their order). Cite numbers a group
        anew after each of its lists: a later list's notes are numbered on (as the wikitext path
        numbers them), not taken for the first list's."""
        counts: dict[object, int] = {}
        names: dict[object, str] = {}
        offsets: dict[tuple, int] = {}  # (group, list) -> the group's notes in earlier lists
        highest: dict[str | None, int] = {}
        for target, label, named in self.markers:
            if target in self.cited:
                continue
            numbered = _NUMBERED.fullmatch(label)
            if numbered:
                group = numbered.group(1) or named
                place = self.lists.get(target)  # None: a note in no list (not found)
                offset = offsets.setdefault((group, place), highest.get(group, 0)) if place is not None else 0
                number = offset + int(numbered.group(2))
                highest[group] = max(highest.get(group, 0), number)
                self.cited[target] = (group, number)
                continue
            key = self.lists.get(target, named or label)
            group = names.setdefault(key, named or _STYLES.get(label, label))
            counts[key] = counts.get(key, highest.get(group, 0)) + 1  # a later list numbers on
            highest[group] = max(highest.get(group, 0), counts[key])
            self.cited[target] = (group, counts[key])

    def shown(self, text: str) -> str:
        """``text`` with its place-holders written as ``[n]`` or ``[group n]``."""

        def one(found) -> str:
            group, number = self.cited[self.markers[int(found.group(1))][0]]
            return f"[{group} {number}]" if group else f"[{number}]"

        return _PLACE.sub(one, text)


_COINS = {"rft.btitle": "title", "rft.atitle": "title", "rft.title": "title", "rft.jtitle": "publisher"}


def describe(ref: Reference, li) -> None:
    """Fields of a rendered citation: its COinS metadata (``span.Z3988``) and first link."""
    coins = li.find_class("Z3988")
    if coins:
        ref.template = "citation"
        data = urllib.parse.parse_qs(coins[0].get("title") or "")
        for key, name in _COINS.items():
            if key in data and getattr(ref, name) is None:
                setattr(ref, name, data[key][0])
        ref.publisher = (data.get("rft.pub") or data.get("rft.jtitle") or [ref.publisher])[0]
        authors = [", ".join(x for x in (last, first) if x) for last, first in _names(data)]
        ref.authors = list(dict.fromkeys(a for a in authors if a))
        year = re.search(r"(1[0-9]{3}|20[0-9]{2})", (data.get("rft.date") or [""])[0])
        ref.year = year.group(1) if year else None
        isbn = (data.get("rft.isbn") or [None])[0]
        ref.isbn = isbn.replace("-", "") if isbn else None
        ref.pages = (data.get("rft.pages") or data.get("rft.spage") or [None])[0]
    link = next((a for a in li.iter("a") if "external" in (a.get("class") or "")), None)
    ref.url = link.get("href") if link is not None else None


def _names(data: dict) -> list[tuple[str, str | None]]:
    names = [(last, None) for last in data.get("rft.au", [])]
    lasts, firsts = data.get("rft.aulast", []), data.get("rft.aufirst", [])
    return [(last, firsts[i] if i < len(firsts) else None) for i, last in enumerate(lasts)] + names
