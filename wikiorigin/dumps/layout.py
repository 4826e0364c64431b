"""Where each kind of dump file lives in a Wikimedia mirror tree (local or remote).

The Wikimedia dump server and its mirrors share one layout, and a local tree made by
``wikiorigin download`` keeps it::

    <wiki>/<YYYYMMDD>/<wiki>-<YYYYMMDD>-stub-meta-history[N].xml.gz
    <wiki>/<YYYYMMDD>/<wiki>-<YYYYMMDD>-page_props.sql.gz
    <wiki>/<YYYYMMDD>/<wiki>-<YYYYMMDD>-pages-articles-multistream.xml.bz2 (+ -index.txt.bz2)
    <wiki>/<YYYYMMDD>/<wiki>-<YYYYMMDD>-p<first>p<last>.xml.bz2          (File Export, Dumps 2.0)
    <wiki>/<YYYYMMDD>/dumpstatus.json, <wiki>-<YYYYMMDD>-sha1sums.txt, -md5sums.txt
    other/mediawiki_history/<YYYY-MM>/<wiki>/<YYYY-MM>.<wiki>.<period>.tsv.bz2
    wikidatawiki/entities/<YYYYMMDD>/wikidata-<YYYYMMDD>-all.json.gz

:data:`KINDS` maps each kind to the regular expression of its file names (the part after
``<wiki>-<date>-``), and :func:`find_inputs` picks a wiki's newest complete run in a local tree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["KINDS", "SOURCES", "WikiInputs", "find_inputs", "wikis_in_tree", "dump_dates"]

KINDS = {
    "stubs": r"stub-meta-history[0-9]*\.xml\.gz",
    "export": r"(p[0-9]+p[0-9]+\.xml\.bz2|pages-meta-history[0-9]*\.xml(-p[0-9]+p[0-9]+)?\.bz2)",
    "page_props": r"page_props\.sql\.gz",
    "multistream": r"pages-articles-multistream\.xml\.bz2",
    "multistream_index": r"pages-articles-multistream-index\.txt\.bz2",
}
"""The file kinds of a dump run in the Wikimedia layout: kind -> regular expression of the
file name after ``<wiki>-<date>-``."""
SOURCES = ("stubs", "export", "history")
"""Where page creations can be read from: ``stubs`` (stub-meta-history), ``export``
(pages-meta-history) or ``history`` (MediaWiki history TSV)."""
_DATE = re.compile(r"[0-9]{8}\Z")
_MONTH = re.compile(r"[0-9]{4}-[0-9]{2}\Z")


def _part_key(path: Path) -> tuple:
    """Order the parts of one dump as the dump does (numbers compared as numbers)."""
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"([0-9]+)", path.name))


def matching(directory: Path, wiki: str, date: str, kind: str) -> list[Path]:
    """The files of ``kind`` for ``wiki``'s run ``date`` in ``directory``, in part order."""
    pattern = re.compile(re.escape(f"{wiki}-{date}-") + KINDS[kind] + r"\Z")
    if not directory.is_dir():
        return []
    return sorted((p for p in directory.iterdir() if pattern.match(p.name)), key=_part_key)


def dump_dates(tree: Path, wiki: str) -> list[str]:
    """The run dates of ``wiki`` present in ``tree``, newest first."""
    root = Path(tree) / wiki
    if not root.is_dir():
        return []
    return sorted((d.name for d in root.iterdir() if d.is_dir() and _DATE.match(d.name)), reverse=True)


def wikis_in_tree(tree: Path) -> list[str]:
    """The dbnames that have at least one run directory in ``tree``."""
    return sorted(d.name for d in Path(tree).iterdir() if d.is_dir() and dump_dates(tree, d.name))


@dataclass(slots=True)
class WikiInputs:
    """The files one wiki's origins need: page-creation inputs and its page_props."""

    wiki: str
    date: str | None
    pages: list[Path] = field(default_factory=list)
    page_props: Path | None = None
    problem: str | None = None  # why this wiki cannot be processed, if it cannot


def _history_files(tree: Path, wiki: str) -> list[Path]:
    root = Path(tree) / "other" / "mediawiki_history"
    if not root.is_dir():
        return []
    months = sorted((m for m in root.iterdir() if _MONTH.match(m.name)), reverse=True)
    for month in months:
        files = sorted((month / wiki).glob(f"{month.name}.{wiki}.*.tsv.bz2"), key=_part_key)
        if files:
            return files
    return []


def find_inputs(tree, wiki: str, source: str = "stubs") -> WikiInputs:
    """The newest run of ``wiki`` in ``tree`` that has both its ``source`` files and
    page_props (for ``history`` the newest month of the MediaWiki history dumps)."""
    tree = Path(tree)
    if source not in SOURCES:
        raise ValueError(f"find_inputs: source must be one of {SOURCES}, not {source!r}")
    found = WikiInputs(wiki, None)
    for date in dump_dates(tree, wiki):
        directory = tree / wiki / date
        props = matching(directory, wiki, date, "page_props")
        pages = _history_files(tree, wiki) if source == "history" else matching(directory, wiki, date, source)
        if props and pages:
            return WikiInputs(wiki, date, pages, props[0])
        if found.problem is None:
            missing = "page_props" if not props else f"{source} files"
            found.problem = f"no {missing} in {directory}"
    if found.problem is None:
        found.problem = f"no run directory {tree / wiki}/YYYYMMDD"
    return found
