"""The origin of every Wikidata item: the edition whose article was created first.

:func:`join_editions` joins one wiki's ``pages`` and ``qids`` shards into its ``editions``
shard; :func:`reduce_origins` reduces the editions of all wikis with DuckDB (embedded, with a
memory limit) to the ``origins`` schema. Only namespace-0 pages that are not
redirects and have a creation time count; if one wiki maps an item to several pages, its
earliest counts. Editions are ordered by creation time, then by dbname: a tie (same second)
is therefore resolved deterministically, and flagged in ``tied``.

:func:`build_origins` is the whole stage over a local dump tree: find each wiki's inputs, scan
them into cached shards (reused while the inputs are unchanged, so a crashed run resumes),
then reduce. :func:`subset` picks the items that originate in one edition.
"""

from __future__ import annotations

import shutil
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .errors import ParameterError, WikioriginError
from .files import ParquetSink, check_output, input_schema, provenance, read_provenance, write_table
from .leftovers import spill_prefix, sweep
from .progress import Progress
from .schemas import EDITION, EDITIONS, ORIGINS, TIMESTAMP

__all__ = [
    "reduce_origins",
    "join_editions",
    "build_origins",
    "scan_wiki",
    "scan_part",
    "scan_items",
    "merge_parts",
    "subset",
    "OriginStats",
    "BuildReport",
    "ShardResult",
    "ORIGINS_SQL",
    "SHARD_VERSION",
]

# Every edition of every item, in the order of the output: by item, then time, then dbname.
ORIGINS_SQL = """
SELECT CAST(substr(qid, 2) AS BIGINT) AS item, qid, wiki, page_id, title, created_at
FROM read_parquet({editions})
ORDER BY item, created_at, wiki
"""
"""The DuckDB query that lists every edition of every item in the order of the output: by
item, then creation time, then dbname (``{editions}`` is the list of edition files)."""


def join_editions(pages: Path | list[Path], qids: Path, out, meta: dict) -> int:
    """The ``editions`` shard of one wiki: its articles (namespace 0, not redirects, with a
    creation time) joined to their items, the earliest article per item (then the lowest
    page id). ``pages``: the wiki's pages shard, or the shards of its parts (a dump in several
    files, scanned one task each). Runs per wiki in the workers, with Arrow's hash join."""
    articles = pa.concat_tables(
        [
            pq.read_table(
                path,
                columns=["wiki", "page_id", "title", "created_at"],
                filters=[("namespace", "=", 0), ("is_redirect", "=", False)],
            )
            for path in (pages if isinstance(pages, list) else [pages])
        ]
    )
    articles = articles.filter(pc.is_valid(articles["created_at"]))
    items = pq.read_table(qids, columns=["page_id", "qid"])  # both shards are of one wiki
    joined = articles.join(items, keys="page_id", join_type="inner")
    if pc.count_distinct(joined["qid"]).as_py() < joined.num_rows:  # an item on two pages
        joined = joined.sort_by([("qid", "ascending"), ("created_at", "ascending"), ("page_id", "ascending")])
        qid = joined["qid"].combine_chunks()
        differs = pc.not_equal(qid.slice(1), qid.slice(0, len(qid) - 1))
        joined = joined.filter(pa.concat_arrays([pa.array([True]), differs]))  # first per item
    table = joined.sort_by("page_id")
    table = pa.table([table[f.name].cast(f.type) for f in EDITIONS], schema=EDITIONS)
    return write_table(table, out, EDITIONS, meta)


def _assemble(rows: pa.Table) -> pa.RecordBatch:
    """``origins`` rows from whole groups of sorted editions (one group per item).

    Everything is a column operation: group starts from where the item changes, the
    editions list from those offsets, the origin and runner-up by ``take``."""
    item = rows.column("item").to_numpy()
    starts = np.flatnonzero(np.r_[True, item[1:] != item[:-1]])
    sizes = np.diff(np.r_[starts, len(item)])
    offsets = pa.array(np.r_[starts, len(item)].astype(np.int32))
    column = lambda name, type_: rows.column(name).combine_chunks().cast(type_)  # noqa: E731
    wiki, title = column("wiki", pa.string()), column("title", pa.string())
    created = column("created_at", TIMESTAMP)
    editions = pa.ListArray.from_arrays(
        offsets, pa.StructArray.from_arrays([wiki, column("page_id", pa.int64()), title, created], fields=list(EDITION))
    )
    first = pa.array(starts)
    second = pa.array(np.where(sizes > 1, starts + 1, 0), mask=sizes < 2)
    origin_at, runner_at = created.take(first), created.take(second)
    origin_ms = origin_at.cast(pa.int64()).to_numpy()
    runner_ms = runner_at.cast(pa.int64()).to_numpy(zero_copy_only=False)
    lead = pa.array((runner_ms - origin_ms) / 86_400_000.0, mask=sizes < 2)
    is_en = pc.equal(wiki, "enwiki").to_numpy(zero_copy_only=False).astype(np.int32)
    return pa.RecordBatch.from_arrays(
        [
            column("qid", pa.string()).take(first),
            wiki.take(first),
            origin_at,
            title.take(first),
            pa.array(sizes.astype(np.int32)),
            pa.array(np.add.reduceat(is_en, starts) > 0),
            wiki.take(second),
            runner_at,
            lead,
            pa.array((sizes > 1) & (np.nan_to_num(runner_ms - origin_ms, nan=1) == 0)),
            editions,
        ],
        schema=ORIGINS,
    )


def _groups(reader):
    """Tables of whole item groups from a stream of sorted rows (a group may span batches)."""
    carry = None
    for batch in reader:
        table = pa.Table.from_batches([batch])
        if carry is not None:
            table = pa.concat_tables([carry, table])
        if table.num_rows == 0:
            continue
        item = table.column("item")
        last = item[-1].as_py()
        cut = table.num_rows - (pc.sum(pc.equal(item, last)).as_py() or 0)
        if cut == 0:  # one item so far (at most one row per edition): read on
            carry = table
            continue
        yield table.slice(0, cut)
        carry = table.slice(cut)
    if carry is not None and carry.num_rows:
        yield carry


@dataclass(slots=True)
class OriginStats:
    """What :func:`reduce_origins` found: items with an origin, items whose first editions tie,
    wikis read, the time taken and notes."""

    items: int = 0
    tied: int = 0
    wikis: int = 0
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)


def _sql_list(paths: list[Path]) -> str:
    return "[" + ", ".join("'" + str(p).replace("'", "''") + "'" for p in paths) + "]"


def reduce_origins(
    editions: list[Path],
    out,
    *,
    memory_limit: str = "4GB",
    threads: int | None = None,
    meta: dict | None = None,
    batch_rows: int = 1_000_000,
) -> OriginStats:
    """Reduce per-wiki ``editions`` shards (see :func:`join_editions`) to the ``origins``
    file ``out``: DuckDB sorts every edition by item, time and dbname; Arrow assembles."""
    if not editions:
        raise WikioriginError("reduce_origins: no editions shards to reduce")
    stats = OriginStats(wikis=len(editions))
    sql = ORIGINS_SQL.format(editions=_sql_list(editions))
    sweep(Path(out).parent, outputs=())  # the spill folders of runs killed outright, nothing else
    spill = tempfile.mkdtemp(prefix=spill_prefix(), dir=Path(out).parent)
    con = duckdb.connect(
        config={"memory_limit": memory_limit, "temp_directory": spill, "preserve_insertion_order": True}
    )
    try:
        if threads:
            con.execute(f"SET threads = {int(threads)}")
        with _interruptible():
            reader = con.sql(sql).to_arrow_reader(batch_rows)
            with ParquetSink(out, ORIGINS, meta or provenance(stage="origins")) as sink:
                for rows in _groups(reader):
                    batch = _assemble(rows)
                    sink.write(batch)
                    stats.items += batch.num_rows
                    stats.tied += pc.sum(batch.column("tied")).as_py() or 0
    finally:
        con.close()
        shutil.rmtree(spill, ignore_errors=True)
    return stats


@contextmanager
def _interruptible():
    """DuckDB stopped by a signal (Ctrl-C, or SIGTERM handled as one) is an interrupt, not an
    error: DuckDB takes the ``KeyboardInterrupt`` that Python raised and raises ``Query
    interrupted`` (a ``RuntimeError``, or its ``InterruptException``) in its place."""
    try:
        yield
    except duckdb.InterruptException as exc:
        raise KeyboardInterrupt from exc
    except RuntimeError as exc:
        if str(exc).startswith("Query interrupted"):
            raise KeyboardInterrupt from exc
        raise


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
    where = ["origin_wiki = $wiki", "n_wikis >= $min_editions"]
    params: dict = {"wiki": wiki, "min_editions": min_editions}
    if max_editions is not None:
        where.append("n_wikis <= $max_editions")
        params["max_editions"] = max_editions
    if min_lead_days is not None:
        where.append("(lead_days IS NULL OR lead_days >= $min_lead_days)")
        params["min_lead_days"] = min_lead_days
    sql = f"SELECT * FROM read_parquet($path) WHERE {' AND '.join(where)}"
    params["path"] = str(origins)
    if sample is not None:
        # Deterministic: order by a hash of the QID and the seed, keep the first N, then by QID.
        sql = f"SELECT * FROM ({sql}) ORDER BY hash(qid || ':' || $seed) LIMIT $sample"
        params.update(seed=str(seed), sample=int(sample))
    sql = f"SELECT * FROM ({sql}) ORDER BY CAST(substr(qid, 2) AS BIGINT)"
    try:
        with duckdb.connect() as con, _interruptible():
            table = con.sql(sql, params=params).to_arrow_table()
        table = table.cast(ORIGINS)
    except (duckdb.Error, pa.ArrowInvalid) as exc:  # damaged, or values no origins file has
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise WikioriginError(f"{origins}: cannot be read as the output of `wikiorigin origins` ({first})") from None
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


# --- the whole stage over a dump tree -------------------------------------------------------

SHARD_VERSION = 2  # bump when the pages/qids shards change meaning; older shards are rebuilt
"""The version of the per-wiki pages/qids shards: bumped when they change meaning, so older
shards are rebuilt instead of reused."""


@dataclass(slots=True)
class ShardResult:
    """What scanning one wiki gave (returned by workers, so plain data)."""

    wiki: str
    pages: str | None = None
    qids: str | None = None
    editions: str | None = None
    parts: list[str] = field(default_factory=list)  # the pages shards of a wiki scanned part by part
    reused: bool = False
    page_rows: int = 0
    qid_rows: int = 0
    xml_bytes: int = 0
    notes: list[str] = field(default_factory=list)
    error: str | None = None


def _fingerprint(paths: list[Path]) -> list[list]:
    return [[p.name, p.stat().st_size, p.stat().st_mtime_ns] for p in paths]


def _reusable(shard: Path, fingerprint: list, notes: list[str]) -> bool:
    if not shard.exists():
        return False
    meta = read_provenance(shard)
    if meta.get("shard_version") != SHARD_VERSION:
        notes.append(
            f"{shard}: written by an older version (shard version "
            f"{meta.get('shard_version')!r}, now {SHARD_VERSION}): rebuilt"
        )
        return False
    return meta.get("fingerprint") == fingerprint


def scan_wiki(inputs, shard_dir: str, scan_threads: int = 1) -> ShardResult:
    """Scan one wiki's inputs into ``shard_dir/pages/<wiki>.parquet`` and ``qids/<wiki>.parquet``
    unless shards of the same inputs are there already. Errors come back in the result."""
    wiki = inputs.wiki
    result = ShardResult(wiki)
    pages_out = Path(shard_dir) / "pages" / f"{wiki}.parquet"
    qids_out = Path(shard_dir) / "qids" / f"{wiki}.parquet"
    editions_out = Path(shard_dir) / "editions" / f"{wiki}.parquet"
    try:
        fingerprint = _fingerprint([*inputs.pages, inputs.page_props])
        meta = {"shard_version": SHARD_VERSION, "fingerprint": fingerprint, "date": inputs.date}
        shards = (pages_out, qids_out, editions_out)
        if all(_reusable(shard, fingerprint, result.notes) for shard in shards):
            result.reused = True
        else:
            _scan_pages(inputs.pages, wiki, pages_out, meta, scan_threads, result)
            _scan_qids(inputs.page_props, wiki, qids_out, meta, result)
            join_editions(pages_out, qids_out, editions_out, provenance(stage="editions", wiki=wiki, **meta))
        result.pages, result.qids, result.editions = str(pages_out), str(qids_out), str(editions_out)
        result.page_rows = pq.ParquetFile(pages_out).metadata.num_rows
        result.qid_rows = pq.ParquetFile(qids_out).metadata.num_rows
    except WikioriginError as exc:
        result.error = str(exc)
    return result


def _scan_pages(paths: list[Path], wiki: str, out: Path, meta: dict, scan_threads: int, result: ShardResult) -> None:
    """Scan page files into the pages shard ``out``; warnings become ``result``'s notes."""
    import warnings

    from .dumps.scan import scan_to_parquet

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        stats = scan_to_parquet(paths, wiki, out, namespaces=[0], meta=meta, scan_threads=scan_threads)
    result.notes += [str(w.message) for w in caught]
    result.xml_bytes += stats.bytes


def _scan_qids(page_props: Path, wiki: str, out: Path, meta: dict, result: ShardResult) -> None:
    """Read the items of ``page_props`` into the qids shard ``out`` (the first 20 notes kept)."""
    from .dumps.sql import qids_to_parquet

    sql_stats = qids_to_parquet(page_props, wiki, out, meta=meta)
    result.notes += sql_stats.notes[:20]
    left_out = sql_stats.bad_values + sql_stats.unreadable
    if left_out > 20:
        result.notes.append(f"{page_props}: {left_out - 20} more values left out")


# --- a wiki in several files: one task per part, one for its items, merged as they come in ---


def _part_shard(shard_dir, wiki: str, part: int) -> Path:
    return Path(shard_dir) / "pages" / f"{wiki}.part{part + 1}.parquet"


def scan_part(inputs, part: int, shard_dir: str, scan_threads: int = 1) -> ShardResult:
    """Scan one file of a wiki whose pages come in several (``inputs.pages[part]``: each page
    lies whole in one part) into ``shard_dir/pages/<wiki>.part<N>.parquet``, unless a shard of
    the same file is there already. Errors come back in the result."""
    result = ShardResult(inputs.wiki)
    out = _part_shard(shard_dir, inputs.wiki, part)
    try:
        fingerprint = _fingerprint([inputs.pages[part]])
        if _reusable(out, fingerprint, result.notes):
            result.reused = True
        else:
            meta = {"shard_version": SHARD_VERSION, "fingerprint": fingerprint, "date": inputs.date}
            _scan_pages([inputs.pages[part]], inputs.wiki, out, meta, scan_threads, result)
        result.pages = str(out)
        result.page_rows = pq.ParquetFile(out).metadata.num_rows
    except WikioriginError as exc:
        result.error = str(exc)
    return result


def scan_items(inputs, shard_dir: str) -> ShardResult:
    """The items of a wiki whose pages come in several files (its page_props) into
    ``shard_dir/qids/<wiki>.parquet``, unless a shard of the same file is there already."""
    result = ShardResult(inputs.wiki)
    out = Path(shard_dir) / "qids" / f"{inputs.wiki}.parquet"
    try:
        fingerprint = _fingerprint([inputs.page_props])
        if _reusable(out, fingerprint, result.notes):
            result.reused = True
        else:
            meta = {"shard_version": SHARD_VERSION, "fingerprint": fingerprint, "date": inputs.date}
            _scan_qids(inputs.page_props, inputs.wiki, out, meta, result)
        result.qids = str(out)
        result.qid_rows = pq.ParquetFile(out).metadata.num_rows
    except WikioriginError as exc:
        result.error = str(exc)
    return result


def merge_parts(inputs, parts: list[ShardResult], items: ShardResult, shard_dir: str) -> ShardResult:
    """One wiki's result from its parts' (:func:`scan_part`) and its items' (:func:`scan_items`):
    the editions shard joined from all of them (:func:`join_editions`), unless one of the same
    inputs is there and nothing was scanned again; the first error of any of them, if any."""
    done = [*parts, items]
    result = ShardResult(
        inputs.wiki,
        qids=items.qids,
        parts=[p.pages for p in parts],
        reused=all(r.reused for r in done),
        page_rows=sum(p.page_rows for p in parts),
        qid_rows=items.qid_rows,
        xml_bytes=sum(p.xml_bytes for p in parts),
        notes=[n for r in done for n in r.notes],
    )
    result.error = next((r.error for r in done if r.error), None)
    if result.error:
        return result
    out = Path(shard_dir) / "editions" / f"{inputs.wiki}.parquet"
    fingerprint = _fingerprint([*inputs.pages, inputs.page_props])
    try:
        if not (result.reused and _reusable(out, fingerprint, result.notes)):
            result.reused = False
            meta = {"shard_version": SHARD_VERSION, "fingerprint": fingerprint, "date": inputs.date}
            join_editions(
                [Path(p) for p in result.parts],
                Path(items.qids),
                out,
                provenance(stage="editions", wiki=inputs.wiki, **meta),
            )
        result.editions = str(out)
    except WikioriginError as exc:
        result.error = str(exc)
    return result


def _call(fn, *args):
    """``fn(*args)``: one kind of task function for the workers, whatever each task runs."""
    return fn(*args)


_PROPS_COST = 8
"""Time to read a byte of page_props.sql.gz, in bytes of gzip stub scanned (bench_pipeline:
2.6 MB of page_props took 0.35-0.43 s, 17.9 MB of stubs 0.31 s)."""


def _plan(ready: list, split: bool) -> list[tuple[int, object, object, int | None]]:
    """The scan's tasks as ``(cost, fn, inputs, part)``, the costliest first (so that no long
    task starts last; cost: the compressed bytes, page_props weighing :data:`_PROPS_COST`): a
    wiki in one file is one task (:func:`scan_wiki`); with ``split``, a wiki whose pages come
    in several files is a task per file and one for its items."""
    tasks = []
    for inputs in ready:
        props = _PROPS_COST * inputs.page_props.stat().st_size
        if split and len(inputs.pages) > 1:
            tasks += [(p.stat().st_size, scan_part, inputs, k) for k, p in enumerate(inputs.pages)]
            tasks.append((props, scan_items, inputs, None))
        else:
            tasks.append((props + sum(p.stat().st_size for p in inputs.pages), scan_wiki, inputs, None))
    return sorted(tasks, key=lambda t: -t[0])


@dataclass(slots=True)
class BuildReport:
    """What :func:`build_origins` did."""

    origins: OriginStats
    shards: list[ShardResult]
    skipped: list[tuple[str, str]]

    @property
    def notes(self) -> list[str]:
        """The notes of every shard, in shard order."""
        return [n for r in self.shards for n in r.notes]


def shard_dir_for(out) -> Path:
    """The directory of the per-wiki shards of the output ``out``: ``NAME.shards`` beside
    ``NAME.parquet``."""
    out = Path(out)
    return out.with_name(out.name.removesuffix(".parquet") + ".shards")


def _sweep_shards(shards: Path) -> None:
    """Remove the temporary files of shards whose writer no longer runs: a worker killed when
    its run was stopped, or a run killed outright. Only for local workers: the process ids of a
    Dask cluster's workers are those of other machines."""
    for kind in ("pages", "qids", "editions"):
        sweep(shards / kind)


def _scan_wikis(ready: list, tasks: list, shards: Path, scan_threads: int, jobs: int, scheduler) -> list:
    """Each wiki's shards on the workers (the tasks of :func:`_plan`, in its order), one
    result per wiki in the order of ``ready``, with progress: tasks done and the MB of XML
    scanned. A wiki in several files is merged (:func:`merge_parts`, here) as soon as its last
    task is in, while the workers go on. Local workers' temporary files are swept before and
    after, however the work ends."""
    from .parallel import run_tasks

    scanned, position = [0], [0]
    left = {i.wiki: sum(1 for t in tasks if t[2] is i) for i in ready}
    came: dict[str, dict] = {i.wiki: {} for i in ready}  # wiki -> {part (None: items or whole): result}
    merged: dict[str, ShardResult] = {}

    def done(result) -> None:  # results come in the order of the tasks
        _, fn, inputs, part = tasks[position[0]]
        position[0] += 1
        scanned[0] += result.xml_bytes or 0
        progress.update()
        came[inputs.wiki][part] = result
        left[inputs.wiki] -= 1
        if left[inputs.wiki] == 0:
            got = came.pop(inputs.wiki)
            if fn is scan_wiki:
                merged[inputs.wiki] = result
            else:
                merged[inputs.wiki] = merge_parts(
                    inputs, [got[k] for k in range(len(inputs.pages))], got[None], str(shards)
                )

    args = [
        (fn, inputs, str(shards))
        if fn is scan_items
        else (fn, inputs, part, str(shards), scan_threads)
        if fn is scan_part
        else (fn, inputs, str(shards), scan_threads)
        for _, fn, inputs, part in tasks
    ]
    if scheduler is None:
        _sweep_shards(shards)
    try:
        with Progress(
            "origins", total=len(tasks), unit="task", note=lambda: f"{scanned[0] / 1e6:,.0f} MB of XML scanned"
        ) as progress:
            run_tasks(_call, args, jobs=jobs, scheduler=scheduler, done=done)
        return [merged[i.wiki] for i in ready]
    finally:
        if scheduler is None:
            _sweep_shards(shards)


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
) -> BuildReport:
    """Origins of every item over the wikis of a local dump tree, into ``out``.

    ``scan_threads``: threads of the compiled scan in each job (default: 2 with one local
    job, else 1, so that jobs do not oversubscribe the cores).

    Per-wiki shards go to ``<out>.shards/`` and are reused while their inputs are unchanged.
    A wiki without the needed files is skipped and reported; a wiki whose files are damaged
    stops the run with an error after the other wikis' shards are written (a re-run resumes).
    """
    import time

    from .dumps.layout import find_inputs, wikis_in_tree
    from .languages import registry

    started = time.perf_counter()
    tree = Path(tree)
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
    shards = shard_dir_for(out)
    tasks = _plan(ready, split=source != "history")  # history TSV files: read together
    jobs = min(jobs, len(tasks))  # no worker started that would have nothing to do
    if scan_threads is None:
        scan_threads = 2 if jobs == 1 and scheduler is None else 1
    results = _scan_wikis(ready, tasks, shards, scan_threads, jobs, scheduler)
    failed = [r for r in results if r.error]
    if failed:
        raise WikioriginError(
            f"{len(failed)} of {len(results)} wikis failed (their shards were not written; "
            f"the others are kept in {shards}): " + "; ".join(r.error for r in failed[:5])
        )
    meta = provenance(
        stage="origins",
        source=source,
        memory_limit=memory_limit,
        wikis=[{"wiki": i.wiki, "date": i.date, "inputs": [p.name for p in [*i.pages, i.page_props]]} for i in ready],
        skipped=[{"wiki": w, "why": why} for w, why in skipped],
    )
    stats = reduce_origins([Path(r.editions) for r in results], out, memory_limit=memory_limit, meta=meta)
    stats.seconds = time.perf_counter() - started
    return BuildReport(stats, results, skipped)
