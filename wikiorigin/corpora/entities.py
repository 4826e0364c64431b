"""One pass of the Wikidata JSON dump for every corpus of a job (``wikiorigin wikidata extract``).

The pass keeps, for the items of one or more items files (from ``wikiorigin subset``, one per
origin wiki), their labels and aliases in the languages their corpora need (English and each
origin wiki's language) and their sitelinks to those wikis and to English Wikipedia; and, for
every place of the dump (every entity with a current best-rank P131 or P17 value, read by the
rule of :mod:`wikiorigin.dumps.wikidata`), those values and its labels in the same languages:
all that the region walks of every language need (:mod:`.regions`). ``corpus origin --entities``
then reads this table (with DuckDB) and no dump; ``corpus origin --wikidata`` makes the same
pass for its own items into a temporary table beside its output.

An entities file names, in its provenance, the languages and wikis it was made for; a corpus
that needs another language, or items it does not list, is refused in one line naming what is
missing (:meth:`EntityTable.items`).
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from ..dumps.wikidata import Entity, EntityStats, read_items_and_places
from ..errors import DumpError, WikioriginError
from ..files import ParquetSink, arrow_table, check_output, provenance, read_input, refuse_partial, schema_provenance
from ..languages import lookup
from ..leftovers import spill_prefix

__all__ = [
    "ENTITIES",
    "ExtractReport",
    "EntityTable",
    "extract_entities",
    "write_entities",
    "one_pass",
    "read_items",
    "needs",
    "partial_path",
]

_NAME = pa.struct([("language", pa.string()), ("value", pa.string())])
ENTITIES = pa.schema(
    [
        ("qid", pa.string()),
        ("asked", pa.bool_()),
        ("labels", pa.list_(_NAME)),
        ("aliases", pa.list_(_NAME)),
        ("sitelinks", pa.list_(pa.struct([("wiki", pa.string()), ("title", pa.string())]))),
        ("located_in", pa.list_(pa.string())),
        ("country", pa.list_(pa.string())),
    ]
)
"""``entities.parquet`` (``wikiorigin wikidata extract``): one row per entity kept, in the dump's
order. ``asked``: one of the items asked for (an item the dump does not have gets a row with
nothing else), else a place kept for the region walks. ``labels``, ``aliases``: in the languages
the file was made for (an asked item that has none of them keeps its first label, or else its
first sitelink, so that it is not taken for an item without any); ``sitelinks``: asked items'
links to the file's wikis and English Wikipedia; ``located_in`` (P131) and ``country`` (P17):
current best-rank values, sorted by qid."""

_MADE_BY = "wikiorigin wikidata extract"
_BATCH = 50_000
_REGION_RULE = "current best-rank P131 and P17 (no deprecated, no end time P582): preferred if any, else normal"


@dataclass(slots=True)
class ExtractReport:
    """What :func:`extract_entities` did: the items asked for and found, the places kept, the
    languages and wikis the file serves, the dump's lines, lines that were not JSON and lines
    repeating an entity (with notes), rows written and seconds."""

    items: int = 0
    found: int = 0
    places: int = 0
    wikis: list[str] = field(default_factory=list)
    languages: list[str] = field(default_factory=list)
    lines: int = 0
    bad_lines: int = 0
    duplicates: int = 0
    notes: list[str] = field(default_factory=list)
    rows: int = 0
    seconds: float = 0.0


def needs(wikis: Iterable[str]) -> tuple[list[str], list[str]]:
    """The languages (English, then each wiki's) and the sitelinks (English Wikipedia, then the
    wikis) that the corpora of items originating in ``wikis`` read."""
    wikis = list(dict.fromkeys(wikis))
    languages = list(dict.fromkeys(["en"] + [lookup(w).language for w in wikis]))
    return languages, list(dict.fromkeys(["enwiki"] + wikis))


def read_items(paths: Iterable) -> dict[str, str]:
    """qid -> origin wiki of every item of the items files ``paths`` (``wikiorigin subset``),
    each checked before the dump is read."""
    items: dict[str, str] = {}
    for path in paths:
        table = read_input(path, ["qid", "origin_wiki"], "wikiorigin subset", columns=["qid", "origin_wiki"])
        items.update(zip(table.column("qid").to_pylist(), table.column("origin_wiki").to_pylist()))
    return items


def partial_path(out) -> Path:
    """Where the rows read before damage to the dump are kept: ``OUT.partial.parquet``."""
    out = Path(out)
    return out.with_name(out.name.removesuffix(".parquet") + ".partial.parquet")


class _Rows:
    """Entities as the file's columns, written to ``sink`` a batch at a time."""

    def __init__(self, sink: ParquetSink, languages: list[str], sites: list[str]):
        self.sink, self.languages, self.sites = sink, languages, sites
        self.columns: dict[str, list] = {name: [] for name in ENTITIES.names}

    def add(self, entity: Entity, asked: bool) -> None:
        """One entity's row: an asked item's names and sitelinks, a place's labels."""
        labels = [{"language": lang, "value": entity.labels[lang]} for lang in self.languages if lang in entity.labels]
        aliases, sitelinks = [], []
        if asked:
            aliases = [{"language": lang, "value": a} for lang in self.languages for a in entity.aliases.get(lang, [])]
            sitelinks = [
                {"wiki": site, "title": entity.sitelinks[site]} for site in self.sites if site in entity.sitelinks
            ]
            if not labels and not sitelinks and entity.labels:
                first = next(iter(entity.labels))
                labels = [{"language": first, "value": entity.labels[first]}]
            elif not labels and not sitelinks and entity.sitelinks:
                first = next(iter(entity.sitelinks))
                sitelinks = [{"wiki": first, "title": entity.sitelinks[first]}]
        for name, value in (
            ("qid", entity.qid),
            ("asked", asked),
            ("labels", labels),
            ("aliases", aliases),
            ("sitelinks", sitelinks),
            ("located_in", entity.located_in),
            ("country", entity.country),
        ):
            self.columns[name].append(value)
        if len(self.columns["qid"]) >= _BATCH:
            self.flush()

    def flush(self) -> None:
        """Write the rows gathered so far."""
        if self.columns["qid"]:
            self.sink.write(arrow_table(self.columns, ENTITIES))  # pa.Table.from_pydict imports pandas
            self.columns = {name: [] for name in ENTITIES.names}


def write_entities(
    dump,
    items: Iterable[str],
    wikis: Iterable[str],
    out,
    meta: dict,
    stats: EntityStats | None = None,
    keep_partial=None,
) -> int:
    """One pass of the Wikidata JSON dump ``dump`` into the entities file ``out``
    (:data:`ENTITIES`): the ``items`` (qids) with their names and sitelinks, every place with
    its values; the languages and sitelinks of ``wikis`` (:func:`needs`). ``meta``: the
    provenance. Returns the rows written. Damage to the dump raises
    :class:`~wikiorigin.errors.DumpError`; the rows read before it are kept in
    ``keep_partial`` when given."""
    items = list(dict.fromkeys(items))
    languages, sites = needs(wikis)
    stats = stats if stats is not None else EntityStats()
    meta = dict(meta, languages=languages, wikis=list(dict.fromkeys(wikis)), sites=sites, region_rule=_REGION_RULE)
    asked, found = set(items), set()
    with ParquetSink(out, ENTITIES, meta, keep_partial=keep_partial) as sink:
        rows = _Rows(sink, languages, sites)
        try:
            for entity in read_items_and_places(dump, items, languages, stats):
                rows.add(entity, entity.qid in asked)
                if entity.qid in asked:
                    found.add(entity.qid)
        except DumpError:
            rows.flush()  # what came before the damage, for keep_partial
            raise
        except BaseException:  # stopped, or a bug: nothing kept
            sink.keep_partial = None
            raise
        for qid in items:
            if qid not in found:
                rows.add(Entity(qid), True)
        rows.flush()
    return sink.rows


@contextmanager
def one_pass(dump, qids: Iterable[str], wiki: str, beside, stats: EntityStats | None = None) -> Iterator[Path]:
    """``with one_pass(dump, qids, wiki, out) as path:`` the entities file of one pass of the
    dump for these items of ``wiki`` alone (``corpus origin --wikidata``), in a folder beside
    ``beside`` that is removed when the block ends (or by the next run writing there, if this
    one is killed: :mod:`wikiorigin.leftovers`)."""
    import tempfile  # not on wikidata extract's path (2 ms of start-up)

    folder = Path(tempfile.mkdtemp(prefix=spill_prefix(), dir=Path(beside).parent))
    try:
        path = folder / "entities.parquet"
        write_entities(dump, qids, [wiki], path, provenance(stage="corpus origin", dump=Path(dump).name), stats)
        yield path
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def extract_entities(dump, items: Iterable, out) -> ExtractReport:
    """``wikiorigin wikidata extract``: one pass of the Wikidata JSON dump ``dump`` for the
    items of the items files ``items`` (any number of origin wikis), written to ``out``
    (:data:`ENTITIES`, with provenance). On damage to the dump, the rows read before it are
    kept in :func:`partial_path` and the error names it."""
    items = [Path(p) for p in items]
    out = check_output(out, inputs=[dump, *items], siblings=[partial_path(out)])
    started = time.perf_counter()
    wanted = read_items(items)
    wikis = sorted(set(wanted.values()))
    languages, _ = needs(wikis)
    stats = EntityStats()
    meta = provenance(
        stage="wikidata extract", dump=Path(dump).name, items=[p.name for p in items], n_items=len(wanted)
    )
    kept = partial_path(out)
    before = kept.stat().st_mtime_ns if kept.exists() else None  # an earlier run's: not this one's
    try:
        rows = write_entities(dump, wanted, wikis, out, meta, stats, keep_partial=kept)
    except DumpError as exc:
        if not kept.exists() or kept.stat().st_mtime_ns == before:
            raise
        raise type(exc)(
            f"{exc}; the entities read before it are kept in {kept} (not a whole entities "
            "file: extract again from a sound copy of the dump)"
        ) from exc
    return ExtractReport(
        items=len(wanted),
        found=stats.found,
        places=stats.places,
        wikis=wikis,
        languages=languages,
        lines=stats.lines,
        bad_lines=stats.bad_lines,
        duplicates=stats.duplicates,
        notes=stats.notes,
        rows=rows,
        seconds=time.perf_counter() - started,
    )


def _entity(row: dict) -> Entity:
    aliases: dict[str, list[str]] = {}
    for alias in row["aliases"]:
        aliases.setdefault(alias["language"], []).append(alias["value"])
    return Entity(
        row["qid"],
        labels={n["language"]: n["value"] for n in row["labels"]},
        aliases=aliases,
        sitelinks={s["wiki"]: s["title"] for s in row["sitelinks"]},
        located_in=list(row["located_in"]),
        country=list(row["country"]),
    )


def _shown(qids: list[str], n: int = 5) -> str:
    return ", ".join(qids[:n]) + (", ..." if len(qids) > n else "")


class EntityTable:
    """An entities file (:data:`ENTITIES`) read with DuckDB: the items of a corpus
    (:meth:`items`, checked against what the file was made for) and the places their region
    walks climb through (:meth:`fetch`, a level at a time). Use as a context manager."""

    def __init__(self, path):
        self.path = Path(path)
        if self.path.name.endswith(".partial.parquet"):
            raise WikioriginError(
                f"{self.path}: the entities read before damage to a dump, not a whole entities "
                f"file: run `{_MADE_BY}` on a sound copy of the dump"
            )
        schema = self._schema()
        refuse_partial(self.path, _MADE_BY)  # renamed, the rows before damage still say so
        self.meta = schema_provenance(schema)
        self._con = None  # DuckDB's, opened at the first look-up

    def _schema(self) -> pa.Schema:
        if not self.path.is_file():
            raise WikioriginError(f"{self.path}: no such file (make one with `{_MADE_BY}`)")
        try:
            schema = pq.read_schema(self.path)
        except (pa.ArrowInvalid, OSError) as exc:
            raise WikioriginError(
                f"{self.path}: not a Parquet file ({str(exc).splitlines()[0]}); expected the output of `{_MADE_BY}`"
            ) from None
        for wanted in ENTITIES:
            if wanted.name not in schema.names or schema.field(wanted.name).type != wanted.type:
                found = (
                    f"its {wanted.name} is {schema.field(wanted.name).type}"
                    if wanted.name in schema.names
                    else f"no column {wanted.name}"
                )
                raise WikioriginError(f"{self.path}: not the output of `{_MADE_BY}` ({found})")
        return schema

    def _rows(self, qids: Iterable[str], asked: bool = False) -> list[dict]:
        """The rows of ``qids`` (only asked items' with ``asked``), in no set order."""
        import duckdb

        if self._con is None:
            self._con = duckdb.connect()
        wanted = pa.table({"qid": pa.array(sorted(set(qids)), pa.string())})
        where = "asked AND " if asked else ""
        try:
            self._con.register("wanted", wanted)
            found = self._con.sql(
                f"SELECT * FROM read_parquet($path) WHERE {where}qid IN (SELECT qid FROM wanted)",
                params={"path": str(self.path)},
            ).to_arrow_table()
        except duckdb.Error as exc:
            raise WikioriginError(f"{self.path}: cannot be read ({str(exc).splitlines()[0]})") from None
        finally:
            self._con.unregister("wanted")
        return found.to_pylist()

    def items(self, qids: list[str], wiki: str, source) -> dict[str, Entity]:
        """The entities of the items ``qids`` of the corpus of ``wiki`` (from the items file
        ``source``); a one-line error when the file was made for other languages or items."""
        languages, _ = needs([wiki])
        have = self.meta.get("languages") or []
        missing = [lang for lang in languages if lang not in have]
        if missing:
            raise WikioriginError(
                f"{self.path}: made for the languages {', '.join(have) or 'none'}; {', '.join(missing)} "
                f"missing (the corpus of {wiki} needs {', '.join(languages)}): run `{_MADE_BY}` with the "
                f"items of {wiki} too"
            )
        rows = {row["qid"]: row for row in self._rows(qids, asked=True)}
        absent = [q for q in qids if q not in rows]
        if absent:
            raise WikioriginError(
                f"{self.path}: {len(absent)} of the {len(qids)} items of {source} are not in it ({_shown(absent)}): "
                f"it was made for other items; run `{_MADE_BY}` with {source}"
            )
        return {qid: _entity(row) for qid, row in rows.items()}

    def fetch(self, qids: set[str]) -> dict[str, Entity]:
        """The entities of those of ``qids`` that the file has (items or places)."""
        return {row["qid"]: _entity(row) for row in self._rows(qids)}

    def close(self) -> None:
        """Close the DuckDB connection."""
        if self._con is not None:
            self._con.close()
            self._con = None

    def __enter__(self) -> EntityTable:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
