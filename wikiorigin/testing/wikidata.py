"""Synthetic Wikidata JSON dumps, as :mod:`wikiorigin.dumps.wikidata` reads them."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from .files import gzip_text

__all__ = ["entity_json", "write_wikidata_json"]


def _snak(prop: str, value: str) -> dict:
    """A snak of ``prop``: ``"somevalue"`` or ``"novalue"``, an item (``"Q17"``), else a date
    (``"1947-05-02"``) as a time value of day precision."""
    if value in ("somevalue", "novalue"):
        return {"snaktype": value, "property": prop}
    if value[:1] == "Q":
        return {
            "snaktype": "value",
            "property": prop,
            "datatype": "wikibase-item",
            "datavalue": {
                "value": {"entity-type": "item", "numeric-id": int(value[1:]), "id": value},
                "type": "wikibase-entityid",
            },
        }
    return {
        "snaktype": "value",
        "property": prop,
        "datatype": "time",
        "datavalue": {
            "value": {
                "time": f"+{value}T00:00:00Z",
                "timezone": 0,
                "before": 0,
                "after": 0,
                "precision": 11,
                "calendarmodel": "http://www.wikidata.org/entity/Q1985727",
            },
            "type": "time",
        },
    }


def _statement(prop: str, target: str, rank: str = "normal", end: str | None = None) -> dict:
    """One statement, as the JSON dump writes it: its value ``target`` (an item, or
    ``"somevalue"`` / ``"novalue"``), its ``rank``, and an end time (P582) qualifier when
    ``end`` is given (a date, ``"somevalue"`` or ``"novalue"``)."""
    statement = {"mainsnak": _snak(prop, target), "type": "statement", "rank": rank}
    if end is not None:
        statement["qualifiers"] = {"P582": [_snak("P582", end)]}
        statement["qualifiers-order"] = ["P582"]
    return statement


def entity_json(
    qid: str,
    labels: dict[str, str],
    aliases: dict[str, list[str]] | None = None,
    sitelinks: dict[str, str] | None = None,
    claims: dict[str, list] | None = None,
) -> str:
    """One line of a Wikidata JSON dump: an item with its labels, aliases, sitelinks and item
    statements (``claims``: property -> target qids, or ``(qid, rank)`` pairs, or ``(qid, rank,
    end)`` with an end time (P582): ``{"P131": ["Q1490", ("Q5", "normal", "1947-05-02")],
    "P17": [("Q17", "preferred")]}``; a target may be ``"somevalue"`` or ``"novalue"``)."""
    data = {
        "type": "item",
        "id": qid,
        "labels": {lang: {"language": lang, "value": v} for lang, v in labels.items()},
        "descriptions": {},
        "aliases": {lang: [{"language": lang, "value": v} for v in vs] for lang, vs in (aliases or {}).items()},
        "claims": {
            prop: [_statement(prop, *(t if isinstance(t, tuple) else (t,))) for t in targets]
            for prop, targets in (claims or {}).items()
        },
        "sitelinks": {site: {"site": site, "title": t, "badges": []} for site, t in (sitelinks or {}).items()},
    }
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def write_wikidata_json(root, lines: list[str], date: str = "20260801") -> Path:
    """``root/wikidatawiki/entities/DATE/wikidata-DATE-all.json.gz`` (one entity per line between
    ``[`` and ``]``, each line but the last ending with a comma, as Wikidata writes it) and its
    ``wikidata-DATE-md5sums.txt``. Returns the dump's path."""
    directory = Path(root) / "wikidatawiki" / "entities" / date
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"wikidata-{date}-all.json.gz"
    with gzip_text(path) as f:
        f.write("[\n" + ",\n".join(lines) + "\n]\n")
    digest = hashlib.md5(path.read_bytes()).hexdigest()
    (directory / f"wikidata-{date}-md5sums.txt").write_text(f"{digest}  {path.name}\n")
    return path
