"""The origin of every Wikidata item: the edition whose article was created first.

The stage is an object: ``OriginsRun(OriginsConfig(...)).run(tree, out)`` finds each wiki's
inputs in a local dump tree, scans them into per-wiki shards (:mod:`wikiorigin._origin_shards`:
reused while the inputs are unchanged, so a crashed run resumes; :func:`join_editions` makes
each wiki's ``editions`` shard), then reduces them (:func:`reduce_origins`, DuckDB with a
memory limit) to the ``origins`` schema, and returns an :class:`OriginsResult` (the file, what
was found, the settings and a :attr:`~OriginsResult.signature`; :meth:`~OriginsResult.save`).
:func:`build_origins` is the same in one call. Only namespace-0 pages that are not redirects
and have a creation time count; if one wiki maps an item to several pages, its earliest counts.
Editions are ordered by creation time, then by dbname: a tie (same second) is therefore
resolved deterministically, and flagged in ``tied``. :func:`subset` picks the items that
originate in one edition.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import pyarrow as pa

from ._origin_reduce import ORIGINS_SQL, OriginStats, _interruptible, reduce_origins
from ._origin_shards import (
    SHARD_VERSION,
    ShardResult,
    _plan,
    _scan_wikis,
    join_editions,
    merge_parts,
    scan_items,
    scan_part,
    scan_wiki,
    shard_dir_for,
)
from ._stage import StageResult
from .errors import ParameterError, WikioriginError
from .files import ParquetSink, check_output, input_schema, provenance
from .schemas import ORIGINS

__all__ = [
    "OriginsConfig",
    "OriginsRun",
    "OriginsResult",
    "build_origins",
    "reduce_origins",
    "join_editions",
    "scan_wiki",
    "scan_part",
    "scan_items",
    "merge_parts",
    "shard_dir_for",
    "subset",
    "OriginStats",
    "ShardResult",
    "ORIGINS_SQL",
    "SHARD_VERSION",
]


@dataclass(frozen=True)
class OriginsConfig:
    """The settings of the origins stage. ``wikis``: the dbnames to read (None: every open wiki
    found in the tree); ``source``: where creation times come from (``"stubs"``:
    stub-meta-history XML, ``"export"``: full-history XML, ``"history"``: the MediaWiki history
    TSV dumps); ``jobs``: local worker processes (none started beyond the files to scan);
    ``scheduler``: a Dask scheduler's address instead; ``memory_limit``: DuckDB's for the
    reduction; ``scan_threads``: threads of the compiled scan in each job (None: 2 with one
    local job, else 1)."""

    wikis: tuple[str, ...] | None = None
    source: str = "stubs"
    jobs: int = 1
    scheduler: str | None = None
    memory_limit: str = "4GB"
    scan_threads: int | None = None

    def __post_init__(self):
        if self.source not in ("stubs", "export", "history"):
            raise WikioriginError(f"OriginsConfig: source={self.source!r}: give one of stubs, export, history")
        if self.wikis is not None:
            object.__setattr__(self, "wikis", tuple(self.wikis))

    def signed(self) -> dict:
        """The settings that change the output, as the signature records them."""
        return {"source": self.source, "wikis": list(self.wikis) if self.wikis else None}


@dataclass(frozen=True)
class OriginsResult(StageResult):
    """What an origins run wrote and found: ``path`` (the origins file), ``origins`` (its
    :class:`OriginStats`: items, tied, wikis, seconds), ``shards`` (one :class:`ShardResult` per
    wiki), ``skipped`` (``(wiki, why)`` of the wikis without the needed files), the
    ``settings`` and the ``inputs`` read (each wiki's page files and page_props), signed by
    :attr:`signature`; :meth:`save` writes the file elsewhere too."""

    STAGE = "origins"

    origins: OriginStats = field(default_factory=OriginStats)
    shards: list[ShardResult] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)

    @property
    def notes(self) -> list[str]:
        """The notes of every shard, in shard order."""
        return [n for r in self.shards for n in r.notes]


BuildReport = OriginsResult  # what build_origins returned before it was a result: the same fields


def subset(
    origins,
    wiki: str,
    out,
    *,
    min_editions: int = 1,
    max_editions: int | None = None,
    min_lead_days: float | None = None,
    sample: int | None = None,
    seed: int = 0,
) -> int:
    """The items that originate in ``wiki`` (optionally filtered and sampled) into ``out``; a
    range of editions that no item can be in (``min_editions`` above ``max_editions``) is an
    error before anything is read."""
    if max_editions is not None and min_editions > max_editions:
        raise ParameterError(
            "min_editions",
            "{min_editions} is more than {max_editions}: no item can have both; give a range that items can be in",
            min_editions,
            also={"max_editions": max_editions},
        )
    if sample is not None and sample < 0:
        raise ParameterError("sample", "{sample}: a number of items, 0 or more", sample)
    input_schema(origins, ORIGINS.names, "wikiorigin origins")
    check_output(out, inputs=[origins])
    sql, params = _subset_sql(wiki, min_editions, max_editions, min_lead_days, sample, seed)
    params["path"] = str(origins)
    try:
        with duckdb.connect() as con, _interruptible():
            table = con.sql(sql, params=params).to_arrow_table()
        table = table.cast(ORIGINS)
    except (duckdb.Error, pa.ArrowInvalid) as exc:  # damaged, or values no origins file has
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise WikioriginError(f"{origins}: cannot be read as the output of `wikiorigin origins` ({first})") from None
    if not table.num_rows and sample != 0:  # an empty items file is refused where made, not used
        raise WikioriginError(
            _why_empty(origins, wiki, min_editions=min_editions, max_editions=max_editions, min_lead_days=min_lead_days)
        )
    meta = provenance(
        stage="subset",
        wiki=wiki,
        origins=Path(origins).name,
        min_editions=min_editions,
        max_editions=max_editions,
        min_lead_days=min_lead_days,
        sample=sample,
        seed=seed,
    )
    with ParquetSink(out, ORIGINS, meta) as sink:
        sink.write(table)
    return table.num_rows


def _why_empty(origins, wiki: str, **filters) -> str:
    """Why :func:`subset` found no item: none originates in ``wiki`` (the wikis that items
    originate in named), or the ``filters`` left none; nothing is written."""
    with duckdb.connect() as con:
        sql = "SELECT origin_wiki, count(*) AS n FROM read_parquet($path) GROUP BY 1 ORDER BY 2 DESC, 1"
        counts = dict(con.sql(sql, params={"path": str(origins)}).fetchall())
    if counts.get(wiki):
        given = ", ".join(f"{k}={v}" for k, v in filters.items() if v is not None and (k, v) != ("min_editions", 1))
        return f"{origins}: none of its {counts[wiki]:,} items of {wiki} passes {given}; nothing written"
    theirs = ", ".join(f"{w} ({n:,})" for w, n in list(counts.items())[:5]) or "none: it holds no items"
    return f"{origins}: no item originates in {wiki} (they originate in {theirs}); nothing written"


def _subset_sql(wiki: str, min_editions: int, max_editions, min_lead_days, sample, seed: int) -> tuple[str, dict]:
    """The DuckDB query of :func:`subset` over ``read_parquet($path)`` and its parameters (but
    ``path``): a sample is the first N by a hash of the QID and the seed, then by QID."""
    where = ["origin_wiki = $wiki", "n_wikis >= $min_editions"]
    params: dict = {"wiki": wiki, "min_editions": min_editions}
    if max_editions is not None:
        where.append("n_wikis <= $max_editions")
        params["max_editions"] = max_editions
    if min_lead_days is not None:
        where.append("(lead_days IS NULL OR lead_days >= $min_lead_days)")
        params["min_lead_days"] = min_lead_days
    sql = f"SELECT * FROM read_parquet($path) WHERE {' AND '.join(where)}"
    if sample is not None:
        sql = f"SELECT * FROM ({sql}) ORDER BY hash(qid || ':' || $seed) LIMIT $sample"
        params.update(seed=str(seed), sample=int(sample))
    return f"SELECT * FROM ({sql}) ORDER BY CAST(substr(qid, 2) AS BIGINT)", params


def _check_shards(shards: Path, tree: Path) -> None:
    """The shards' directory beside the output: a directory (or none yet), and neither in the
    dump tree nor holding it (a link to it: the shards would be written, and swept, there)."""
    if shards.exists() and not shards.is_dir():
        raise WikioriginError(f"{shards}: not a directory, where the run keeps its shards; move it")
    where, dumps = shards.resolve(), tree.resolve()
    linked = where != shards.parent.resolve() / shards.name  # an output in the tree is fine, a link there not
    if dumps.is_relative_to(where) or (linked and where.is_relative_to(dumps)):
        raise WikioriginError(f"{shards}: the shards would be written in the dump tree {tree}; give another out")


def _wikis_found(tree: Path, wikis, source: str) -> tuple[list, list[tuple[str, str]]]:
    """Each wiki's inputs in ``tree`` (:func:`~wikiorigin.dumps.layout.find_inputs`; ``wikis``
    None: every open wiki there) and the ``(wiki, why)`` of those without the needed files;
    refused when no wiki has them."""
    from .dumps.layout import find_inputs, wikis_in_tree
    from .languages import registry

    if not tree.is_dir():
        raise WikioriginError(f"{tree}: no such dump tree")
    if wikis is None:
        known = {w.dbname for w in registry().open()}
        wikis = [w for w in wikis_in_tree(tree) if w in known]
    inputs = [find_inputs(tree, w, source) for w in wikis]
    skipped = [(i.wiki, i.problem) for i in inputs if i.problem]
    ready = [i for i in inputs if not i.problem]
    if not ready:
        raise WikioriginError(
            f"{tree}: no wiki with {source} files and page_props found"
            + "".join(f"; {w}: {why}" for w, why in skipped[:5])
        )
    return ready, skipped


class OriginsRun:
    """The origins stage: ``OriginsRun(config).run(tree, out)`` writes the origins of every
    item over the wikis of a local dump tree into ``out`` and returns an :class:`OriginsResult`.

    Per-wiki shards go to ``<out>.shards/`` and are reused while their inputs are unchanged.
    A wiki without the needed files is skipped and reported; a wiki whose files are damaged
    stops the run with an error after the other wikis' shards are written (a re-run resumes).
    The whole run is guarded (:func:`~wikiorigin.runs.guarded_run`): ``out`` checked before any
    work, what a killed run left swept, ``OUT.lock`` held (a second run on ``out`` is refused)."""

    def __init__(self, config: OriginsConfig | None = None):
        self.config = config or OriginsConfig()

    def run(self, tree, out) -> OriginsResult:
        """Origins over the dump tree ``tree`` into the Parquet file ``out``."""
        from .runs import guarded_run

        check_output(out)  # before any work: not a directory, writable
        _check_shards(shard_dir_for(out), Path(tree))
        with guarded_run(out, inputs={"tree": tree}):
            return self._run(Path(tree), out)

    def _run(self, tree: Path, out) -> OriginsResult:
        c = self.config
        started = time.perf_counter()
        ready, skipped = _wikis_found(tree, c.wikis, c.source)
        shards = shard_dir_for(out)
        tasks = _plan(ready, split=c.source != "history")  # history TSV files: read together
        jobs = min(c.jobs, len(tasks))  # no worker started that would have nothing to do
        threads = c.scan_threads or (2 if jobs == 1 and c.scheduler is None else 1)
        results = _scan_wikis(ready, tasks, shards, threads, jobs, c.scheduler)
        failed = [r for r in results if r.error]
        if failed:
            raise WikioriginError(
                f"{len(failed)} of {len(results)} wikis failed (their shards were not written; "
                f"the others are kept in {shards}): " + "; ".join(str(r.error) for r in failed[:5])
            )
        meta = provenance(
            stage="origins",
            source=c.source,
            memory_limit=c.memory_limit,
            wikis=[
                {"wiki": i.wiki, "date": i.date, "inputs": [p.name for p in [*i.pages, i.page_props]]} for i in ready
            ],
            skipped=[{"wiki": w, "why": why} for w, why in skipped],
        )
        editions = [Path(str(r.editions)) for r in results]
        stats = reduce_origins(editions, out, memory_limit=c.memory_limit, meta=meta)
        stats.seconds = time.perf_counter() - started
        files = tuple(p for i in ready for p in [*i.pages, i.page_props])
        settings = {**c.signed(), "wikis": [i.wiki for i in ready]}
        return OriginsResult(Path(out), settings, files, origins=stats, shards=results, skipped=skipped)


def build_origins(
    tree,
    out,
    *,
    wikis: list[str] | None = None,
    source: str = "stubs",
    jobs: int = 1,
    scheduler=None,
    memory_limit: str = "4GB",
    scan_threads: int | None = None,
) -> OriginsResult:
    """Origins of every item over the wikis of a local dump tree, into ``out``: the settings as
    :class:`OriginsConfig` takes them, run by :class:`OriginsRun` (see there)."""
    config = OriginsConfig(
        wikis=None if wikis is None else tuple(wikis),
        source=source,
        jobs=jobs,
        scheduler=scheduler,
        memory_limit=memory_limit,
        scan_threads=scan_threads,
    )
    return OriginsRun(config).run(tree, out)
