"""The dump stage's commands: ``languages`` (the editions), ``download`` (a mirror's files,
verified), ``scan`` (page creation times) and ``qids`` (page -> Wikidata item)."""

from __future__ import annotations

import json
import os
import sys
import warnings
from pathlib import Path

from .options import namespaces, positive

__all__ = ["add_commands"]


def add_commands(sub) -> None:
    """Register ``languages``, ``download``, ``scan`` and ``qids`` under ``sub``."""
    _add_languages(sub)
    _add_download(sub)
    _add_scan(sub)
    _add_qids(sub)


def _allow_non_wikipedia(s) -> None:
    s.add_argument(
        "--allow-non-wikipedia", action="store_true", help="accept a dbname that is not a Wikipedia (e.g. elwikivoyage)"
    )


def _wiki(args) -> str:
    from ..languages import lookup

    if args.allow_non_wikipedia:
        return args.wiki
    return lookup(args.wiki).dbname


# --- languages ---------------------------------------------------------------------------------


def _add_languages(sub) -> None:
    s = sub.add_parser("languages", help="list the Wikipedia editions")
    s.add_argument("--json", action="store_true", help="print JSON instead of a table")
    s.add_argument("--all", action="store_true", help="closed and private editions too")
    s.add_argument(
        "--single-country", action="store_true", help="languages official in exactly one UN member state (CLDR)"
    )
    s.set_defaults(func=cmd_languages)


def _print_json(rows) -> int:
    json.dump([r.as_dict() for r in rows], sys.stdout, ensure_ascii=False, indent=1)
    print()
    return 0


def _single_country(args) -> int:
    from ..languages import single_country_languages

    rows = single_country_languages()
    if args.json:
        return _print_json(rows)
    print(f"{'language':<10} {'country':<8} {'country name':<36} edition")
    for r in rows:
        print(f"{r.language:<10} {r.country:<8} {r.country_name:<36} {r.wiki or '-'}")
    editions = {r.wiki for r in rows if r.wiki}
    print(
        f"{len(rows)} languages official in exactly one of the 193 UN member states; "
        f"{len(editions)} open Wikipedia editions"
    )
    return 0


def cmd_languages(args) -> int:
    """`wikiorigin languages`: the open editions (or every wiki, or the single-country languages)."""
    from ..languages import registry

    if args.single_country:
        return _single_country(args)
    reg = registry()
    wikis = reg.wikis if args.all else reg.open()
    if args.json:
        return _print_json(wikis)
    print(f"{'dbname':<20} {'language':<12} {'domain':<32} status")
    for w in wikis:
        print(f"{w.dbname:<20} {w.language:<12} {w.domain:<32} {w.status}")
    print(f"{len(wikis)} editions" + ("" if args.all else " open with public dumps"))
    return 0


# --- download ----------------------------------------------------------------------------------


def _add_download(sub) -> None:
    s = sub.add_parser("download", help="fetch dump files from a mirror, verified")
    s.add_argument(
        "wikis",
        nargs="+",
        help="dbnames or language codes, or 'all' (a wiki the mirror "
        "lacks, or with no run done, is then passed over with a note)",
    )
    s.add_argument("--date", default="latest", help="YYYYMMDD or latest (newest run done)")
    s.add_argument(
        "--wikidata-date",
        default="latest",
        help="the Wikidata JSON dump's date, YYYYMMDD or latest (Wikidata's dates are its own)",
    )
    s.add_argument(
        "--kinds",
        default="stubs,page_props",
        help="comma-separated: stubs, export, page_props, multistream, history, wikidata",
    )
    s.add_argument("--mirror", default="https://dumps.wikimedia.org", help="base URL of the tree")
    s.add_argument("--out", required=True, help="local tree to fill (same layout)")
    s.add_argument("--jobs", type=positive(int), default=3, help="parallel downloads")
    s.add_argument("--contact", default=None, help="email or URL for the User-Agent")
    s.add_argument("--user-agent", default=None, help="the whole User-Agent, if you must")
    s.add_argument("--dry-run", action="store_true", help="list the files and sizes only")
    s.set_defaults(func=cmd_download)


def _print_files(files) -> int:
    total = 0
    for f in files:
        total += f.size or 0
        size = f"{f.size / 1e6:,.1f} MB" if f.size is not None else "size unknown"
        print(f"{f.url} -> {f.dest} ({size})")
    print(f"{len(files)} files, {total / 1e9:,.2f} GB")
    return 0


def cmd_download(args) -> int:
    """`wikiorigin download`: the dump files of the wikis asked, verified by checksum (or their list with --dry-run)."""
    import os

    from ..dumps import fetch
    from ..languages import lookup, open_wikis

    if args.wikis == ["all"]:
        wikis = [w.dbname for w in open_wikis()]
    else:
        wikis = [lookup(w).dbname for w in args.wikis]
    client = fetch.Client(contact=args.contact or os.environ.get("WIKIORIGIN_CONTACT", ""), user_agent=args.user_agent)
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    files, notes = fetch.plan(
        client,
        args.mirror,
        wikis,
        args.date,
        kinds,
        args.out,
        skip_missing=args.wikis == ["all"],
        wikidata_date=args.wikidata_date,
    )
    for note in notes:
        print(f"wikiorigin: note: {note}", file=sys.stderr)
    if args.dry_run:
        return _print_files(files)
    report = fetch.download(client, files, jobs=args.jobs)
    print(
        f"{len(report.fetched)} files fetched and verified, {len(report.skipped)} already "
        f"verified; {report.bytes / 1e6:,.1f} MB in {report.seconds:.1f} s -> {args.out}"
    )
    return 0


# --- scan --------------------------------------------------------------------------------------


def _add_scan(sub) -> None:
    s = sub.add_parser("scan", help="page creation times from stub/history XML or history TSV")
    s.add_argument("inputs", nargs="+", help="the parts of one wiki's dump")
    s.add_argument("--wiki", required=True, help="dbname, language code or domain (jawiki, ja)")
    s.add_argument("--out", required=True, help="pages Parquet file to write")
    s.add_argument("--namespaces", type=namespaces, default=None, help="e.g. 0 or 0,14")
    s.add_argument(
        "--engine",
        choices=("fast", "mwxml"),
        default="fast",
        help="fast: our scanner (C core); mwxml: the mwxml library, slow, the oracle",
    )
    s.add_argument("--threads", type=positive(int), default=1, help="decoder threads (bzip2)")
    _allow_non_wikipedia(s)
    s.set_defaults(func=cmd_scan)


def _check_scan_inputs(inputs: list[str]) -> None:
    """Each input is a file: a directory is a one-line error saying what to give instead (the
    dump files in it, or ``origins`` for a whole dump tree)."""
    from ..errors import WikioriginError

    for given in map(Path, inputs):
        if given.is_dir():
            found = next(
                (
                    p
                    for pattern in ("*stub-meta-history*.xml*", "*pages-meta-history*.xml*", "*.xml*", "*.tsv*")
                    for p in sorted(given.rglob(pattern))
                    if p.is_file()
                ),
                None,
            )
            example = f" (e.g. {found})" if found else ""
            raise WikioriginError(
                f"{given}: a directory, not a dump file: give the dump files of one wiki"
                f"{example}, or run `wikiorigin origins {given}` over a whole dump tree"
            )


def _one_blas_thread() -> None:
    """Before pyarrow is imported: numpy, which it imports, starts OpenBLAS's pool of threads,
    a tenth of a second of a scan's start, and the threads spin on the cores the decompressor
    and the scan need. A scan does no linear algebra: one thread, unless the environment says."""
    if "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def cmd_scan(args) -> int:
    """`wikiorigin scan`: one wiki's dump parts -> the creation time of each page (pages Parquet)."""
    _one_blas_thread()
    from ..dumps.scan import partial_path, scan_to_parquet
    from ..files import check_output

    _check_scan_inputs(args.inputs)
    kept = [partial_path(args.out), partial_path(args.out, unverified=True)]  # written beside it on damage
    check_output(args.out, inputs=args.inputs, siblings=kept)  # before any work: not a directory, writable, no input

    wiki = _wiki(args)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        stats = scan_to_parquet(
            args.inputs,
            wiki,
            args.out,
            engine=args.engine,
            namespaces=args.namespaces,
            threads=args.threads,
        )
    for w in caught:
        print(f"wikiorigin: warning: {w.message}", file=sys.stderr)
    mb = stats.bytes / 1e6
    rate = mb / stats.seconds if stats.seconds else 0.0
    print(
        f"{wiki}: {stats.pages:,} pages, {stats.revisions:,} revisions "
        f"({stats.imported_revisions:,} imported), {stats.torn_pages} torn, "
        f"{stats.broken_pages:,} broken; "
        f"{mb:,.1f} MB of XML in {stats.seconds:.2f} s ({rate:,.0f} MB/s) -> {args.out}"
    )
    return 0


# --- qids --------------------------------------------------------------------------------------


def _add_qids(sub) -> None:
    s = sub.add_parser("qids", help="page -> Wikidata QID from a page_props SQL dump")
    s.add_argument("page_props", help="page_props.sql(.gz)")
    s.add_argument("--wiki", required=True, help="dbname or language code of the dump's wiki (jawiki, ja)")
    s.add_argument("--out", required=True, help="qids Parquet file to write (wiki, page_id, qid)")
    _allow_non_wikipedia(s)
    s.set_defaults(func=cmd_qids)


def cmd_qids(args) -> int:
    """`wikiorigin qids`: a page_props dump -> each page's Wikidata item (qids Parquet)."""
    import time

    from ..files import check_output

    check_output(args.out, inputs=[args.page_props])  # before any work: not a directory, writable, no input
    from ..dumps.sql import qids_to_parquet

    wiki = _wiki(args)
    started = time.perf_counter()
    stats = qids_to_parquet(args.page_props, wiki, args.out, meta={"inputs": [{"file": Path(args.page_props).name}]})
    for note in stats.notes[:20]:
        print(f"wikiorigin: warning: {note}", file=sys.stderr)
    left_out = stats.bad_values + stats.unreadable
    if left_out > 20:
        print(f"wikiorigin: warning: {left_out - 20:,} more left out", file=sys.stderr)
    seconds = time.perf_counter() - started
    print(
        f"{wiki}: {stats.rows:,} pages with a Wikidata item from {stats.statements:,} "
        f"INSERT statements; left out: {stats.bad_values:,} values not a QID, "
        f"{stats.unreadable:,} unreadable rows; in {seconds:.2f} s -> {args.out}"
    )
    return 0
