"""The type and region vocabularies of a multiple-choice set: a small labels file.

A labels file is JSON (the presets ship in ``wikiorigin/data/labels/``)::

    {"name": "korean-folklore",
     "subject": "the spirit or creature the article describes",      (optional)
     "prompts": "yokai-ja",                                           (optional)
     "types": [{"class": "behaviour", "description": "what it does", "letter": "A"}, ...],
     "regions": [{"class": "Gangwon", "description": "the province of Gangwon"}, ...]}

``types`` is a list of two or more classes, each with a one-line ``description`` and
optionally the ``letter`` labellers used for it (as YokaiEval's authors did for regions).
``regions`` is such a list (the builder asks the model), or the string ``"wikidata"``: the
region is the item's first-level administrative division, which ``corpus origin`` derives from
Wikidata (``region`` column of an origin corpus), never asked of the model. ``subject``
(optional) is how the question prompts speak of an article's subject; without it they say
"the article's subject". ``prompts`` (optional) asks by name for a culture's own prompts
(:func:`wikiorigin.presets.by_prompts`: ``"yokai-ja"``, YokaiEval's Japanese prompts) when
the questions are in their language; without it every build gets the any-language prompts
(English instructions naming the language and the ``subject``), so an origin corpus of jawiki
is not asked about yokai.

Three presets: ``yokai-ja`` and ``yokaieval``, YokaiEval's (:mod:`wikiorigin.presets.yokaieval`:
our classes, the default of its list-page corpora; and the classes the paper's authors
labelled with, the ``yokaieval`` build preset's) and ``origin`` (general types for any culture's
items, region from Wikidata; the default for an origin corpus). :func:`load_labels` takes a
preset's name or a file's path; a file that breaks a rule is a one-line
:class:`~wikiorigin.errors.WikioriginError` naming the file and the place (``types[2].description``).
"""

from __future__ import annotations

import hashlib
import json
import unicodedata
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from .errors import WikioriginError

__all__ = [
    "LabelClass",
    "Labels",
    "load_labels",
    "parse_labels",
    "presets",
    "WIKIDATA",
    "REGION_SEPARATOR",
    "join_regions",
    "split_regions",
]

WIKIDATA = "wikidata"
"""The ``regions`` value of a labels file whose region comes from Wikidata, not the model."""

REGION_SEPARATOR = ", "
"""Between the classes of a row that names several regions (``label_steps=2``: the regions an
article tells of, as YokaiEval's authors labelled them): ``"東北, 関東"``."""


def join_regions(names, order: list[str]) -> str:
    """Several region classes as a row's one value: each once, in ``order`` (the labels')."""
    return REGION_SEPARATOR.join(sorted(set(names), key=order.index))


def split_regions(value: str) -> list[str]:
    """The region classes a row's value names (:func:`join_regions`'s inverse)."""
    return value.split(REGION_SEPARATOR)


@dataclass(frozen=True, slots=True)
class LabelClass:
    """One class of a vocabulary: its name (``name``, the value rows carry), a one-line
    ``description`` and the ``letter`` labellers used for it (or None)."""

    name: str
    description: str
    letter: str | None = None


@dataclass(frozen=True, slots=True)
class Labels:
    """A labels file: its ``name``, the ``types`` and ``regions`` classes (``regions`` empty
    when ``region_source`` is ``"wikidata"``; else ``"model"``), the ``subject`` phrase of the
    prompts (None: the article's subject), where it came from (``source``), the ``sha1`` of
    its content and ``prompts`` (the name of a culture's own prompts, used for questions in
    their language: :func:`wikiorigin.presets.by_prompts`; None: the any-language prompts)."""

    name: str
    types: tuple[LabelClass, ...]
    regions: tuple[LabelClass, ...]
    region_source: str
    subject: str | None
    source: str
    sha1: str
    prompts: str | None = None

    @property
    def type_names(self) -> list[str]:
        """The type classes' names, in the file's order."""
        return [c.name for c in self.types]

    @property
    def region_names(self) -> list[str]:
        """The region classes' names, in the file's order (empty for Wikidata regions)."""
        return [c.name for c in self.regions]


def presets() -> list[str]:
    """The names of the shipped presets (``origin``, ``yokai-ja``, ``yokaieval``)."""
    root = resources.files("wikiorigin") / "data" / "labels"
    return sorted(p.name.removesuffix(".json") for p in root.iterdir() if p.name.endswith(".json"))


def _key(text: str) -> str:
    """How two class names or letters are compared: NFKC, case-folded, without surrounding spaces
    (``Tokyo`` and ``tokyo ``, ``A`` and ``a``, ``Ａ`` and ``A`` are the same)."""
    return unicodedata.normalize("NFKC", text).strip().casefold()


def _class(raw, place: str) -> LabelClass:
    if not isinstance(raw, dict):
        raise WikioriginError(f"{place}: expected an object with class and description, got {raw!r}")
    unknown = set(raw) - {"class", "description", "letter"}
    if unknown:
        raise WikioriginError(f"{place}: unknown field(s) {', '.join(sorted(unknown))}")
    name, description, letter = raw.get("class"), raw.get("description"), raw.get("letter")
    if not isinstance(name, str) or not name.strip() or "\n" in name:
        raise WikioriginError(f"{place}.class: expected a non-empty one-line string, got {name!r}")
    if not isinstance(description, str) or not description.strip() or "\n" in description.strip():
        raise WikioriginError(f"{place}.description: expected a one-line description of {name!r}, got {description!r}")
    if letter is not None and (not isinstance(letter, str) or len(letter.strip()) != 1):
        raise WikioriginError(f"{place}.letter: expected one character, got {letter!r}")
    return LabelClass(name.strip(), description.strip(), letter.strip() if letter else None)


def _classes(value, key: str, where: str) -> tuple[LabelClass, ...]:
    if not isinstance(value, list) or len(value) < 2:
        raise WikioriginError(f"{where}: {key}: expected a list of two or more classes")
    out: list[LabelClass] = []
    names: dict[str, int] = {}
    letters: dict[str, int] = {}
    for i, raw in enumerate(value):
        place = f"{where}: {key}[{i}]"
        c = _class(raw, place)
        if _key(c.name) in names:
            raise WikioriginError(
                f"{place}.class: {raw['class']!r} is given twice (as {key}[{names[_key(c.name)]}]; "
                "names are compared without case, width or surrounding spaces)"
            )
        if c.letter and _key(c.letter) in letters:
            raise WikioriginError(
                f"{place}.letter: {c.letter!r} is given to two classes (and {key}"
                f"[{letters[_key(c.letter)]}]; letters are compared without case or width)"
            )
        names[_key(c.name)] = i
        if c.letter:
            letters[_key(c.letter)] = i
        out.append(c)
    return tuple(out)


def _phrase(data: dict, field: str, where: str) -> str | None:
    """An optional one-line string field of the file (``name``, ``subject``, ``description``)."""
    value = data.get(field)
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise WikioriginError(f"{where}: {field}: expected a non-empty string, got {value!r}")
    return value.strip() if value else None


def _prompt_sets() -> dict:
    """The cultures' own prompts by name (:mod:`wikiorigin.presets`)."""
    from .presets import cultures

    return {c.prompts.name: c.prompts for c in cultures() if c.prompts}


def parse_labels(data, where: str) -> Labels:
    """The :class:`Labels` of a parsed labels file (``where`` names it in errors)."""
    if not isinstance(data, dict):
        raise WikioriginError(f"{where}: expected a JSON object with types and regions")
    unknown = set(data) - {"name", "description", "subject", "prompts", "types", "regions"}
    if unknown:
        raise WikioriginError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}")
    name, subject = _phrase(data, "name", where), _phrase(data, "subject", where)
    _phrase(data, "description", where)
    prompts = data.get("prompts")
    if prompts is not None and _prompt_sets().get(prompts) is None:
        raise WikioriginError(
            f"{where}: prompts: expected the name of a culture's prompts "
            f"({', '.join(sorted(_prompt_sets()))}), got {prompts!r}"
        )
    types = _classes(data.get("types"), "types", where)
    regions_raw = data.get("regions")
    regions: tuple[LabelClass, ...]
    if regions_raw == WIKIDATA:
        regions, source = (), WIKIDATA
    elif isinstance(regions_raw, str):
        raise WikioriginError(
            f"{where}: regions: expected a list of classes or the string {WIKIDATA!r} "
            f"(lower case: regions from Wikidata), got {regions_raw!r}"
        )
    else:
        regions, source = _classes(regions_raw, "regions", where), "model"
    blob = json.dumps(data, ensure_ascii=False, sort_keys=True).encode()
    return Labels(
        name or Path(where).stem, types, regions, source, subject, where, hashlib.sha1(blob).hexdigest(), prompts
    )


def load_labels(name_or_path) -> Labels:
    """A preset by name (:func:`presets`) or a labels file by path."""
    text = str(name_or_path)
    if text in presets():
        resource = resources.files("wikiorigin") / "data" / "labels" / f"{text}.json"
        raw, where = resource.read_text(encoding="utf-8"), f"labels preset {text}"
    else:
        path = Path(text)
        if not path.is_file():
            raise WikioriginError(
                f"{text}: no such labels file, and no preset of that name (presets: {', '.join(presets())})"
            )
        where = text
        try:  # utf-8-sig: a byte-order mark, as some editors write, is not an error
            raw = path.read_bytes().decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise WikioriginError(
                f"{where}: byte {exc.start}: not UTF-8 text ({exc.reason}); save the labels file as UTF-8"
            ) from None
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise WikioriginError(f"{where}: line {exc.lineno} column {exc.colno}: not JSON ({exc.msg})") from None
    return parse_labels(data, where)
