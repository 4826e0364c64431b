"""The per-wiki shards of the origins stage (:mod:`wikiorigin.origin`): each wiki's pages and
items scanned into ``<out>.shards/pages`` and ``qids`` (reused while their inputs are unchanged)
and joined into its ``editions`` shard (:func:`join_editions`), on local processes or a Dask
cluster (``_scan_wikis``); a wiki dumped in several files is a task per file, merged as they
come in.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .errors import WikioriginError
from .files import provenance, read_provenance, write_table
from .leftovers import sweep
from .progress import Progress
from .schemas import EDITIONS

__all__ = [
    "join_editions",
    "scan_wiki",
    "scan_part",
    "scan_items",
    "merge_parts",
    "shard_dir_for",
    "ShardResult",
    "SHARD_VERSION",
]


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


# --- one wiki's shards ------------------------------------------------------------------------

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
    _refuse_cut(stats.cut, out, stats.pages)


def _refuse_cut(cut_notes: list[str], out: Path, pages: int) -> None:
    """A dump file that ends before its end (the scan's ``cut`` notes: a torn last page, no
    ``</mediawiki>``) is no whole wiki: its items would originate elsewhere, silently. The
    shard is kept as ``.partial.parquet`` (never reused) and the wiki fails, its file named."""
    if not cut_notes:
        return
    cut = cut_notes[0]
    from .dumps.scan import partial_path

    kept = partial_path(out)
    os.replace(out, kept)
    raise WikioriginError(f"{cut}: the file is cut short; the {pages:,} pages scanned before it are kept in {kept}")


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
        parts=[p.pages for p in parts if p.pages is not None],
        reused=all(r.reused for r in done),
        page_rows=sum(p.page_rows for p in parts),
        qid_rows=items.qid_rows,
        xml_bytes=sum(p.xml_bytes for p in parts),
        notes=[n for r in done for n in r.notes],
    )
    result.error = next((r.error for r in done if r.error), None)
    if result.error or items.qids is None:
        result.error = result.error or f"{inputs.wiki}: its items were not scanned"
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


def _plan(ready: list, split: bool) -> list[tuple[int, Any, Any, int | None]]:
    """The scan's tasks as ``(cost, fn, inputs, part)``, the costliest first (so that no long
    task starts last; cost: the compressed bytes, page_props weighing :data:`_PROPS_COST`): a
    wiki in one file is one task (:func:`scan_wiki`); with ``split``, a wiki whose pages come
    in several files is a task per file and one for its items."""
    tasks: list[tuple[int, Any, Any, int | None]] = []
    for inputs in ready:
        props = _PROPS_COST * inputs.page_props.stat().st_size
        if split and len(inputs.pages) > 1:
            tasks += [(p.stat().st_size, scan_part, inputs, k) for k, p in enumerate(inputs.pages)]
            tasks.append((props, scan_items, inputs, None))
        else:
            tasks.append((props + sum(p.stat().st_size for p in inputs.pages), scan_wiki, inputs, None))
    return sorted(tasks, key=lambda t: -t[0])


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
