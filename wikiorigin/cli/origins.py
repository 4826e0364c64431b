"""The origins stage's commands: ``origins`` (the first edition of every Wikidata item, over a
dump tree) and ``subset`` (the items that originate in one edition)."""

from __future__ import annotations

import sys

from .options import memory_size, positive

__all__ = ["add_commands"]


def add_commands(sub) -> None:
    """Register ``origins`` and ``subset`` under ``sub``."""
    s = sub.add_parser("origins", help="the first edition of every Wikidata item")
    s.add_argument("tree", help="a local dump tree in the Wikimedia layout")
    s.add_argument("--out", required=True, help="origins Parquet file to write")
    s.add_argument("--wikis", default=None, help="comma-separated (default: all open found)")
    s.add_argument(
        "--source",
        choices=("stubs", "export", "history"),
        default="stubs",
        help="where creation times come from: stub-meta-history XML, full-history XML, or the "
        "MediaWiki history TSV dumps",
    )
    s.add_argument(
        "--jobs",
        type=positive(int),
        default=1,
        help="local worker processes, each scanning a wiki or one part file of a wiki dumped in "
        "several (no more started than there are files to scan)",
    )
    s.add_argument("--scheduler", default=None, help="Dask scheduler address (tcp://...)")
    s.add_argument(
        "--memory-limit",
        default="4GB",
        type=memory_size,
        help="DuckDB's memory limit for the reduction, e.g. 4GB, 512MB (default 4GB)",
    )
    s.set_defaults(func=cmd_origins)

    s = sub.add_parser("subset", help="the items that originate in one edition")
    s.add_argument("origins", help="origins.parquet")
    s.add_argument("--wiki", required=True, help="the origin edition (dbname or language code)")
    s.add_argument("--out", required=True, help="items Parquet file to write (origins schema)")
    s.add_argument("--min-editions", type=int, default=1, help="items with at least this many editions")
    s.add_argument("--max-editions", type=int, default=None, help="items with at most this many editions")
    s.add_argument(
        "--min-lead-days",
        type=float,
        default=None,
        help="items whose origin came at least this many days before the runner-up",
    )
    s.add_argument(
        "--sample", type=positive(int, zero=True), default=None, help="keep N items at random (the same N for a seed)"
    )
    s.add_argument("--seed", type=int, default=0, help="seed of --sample")
    s.set_defaults(func=cmd_subset)


def cmd_origins(args) -> int:
    """`wikiorigin origins`: the first edition of every Wikidata item, over the wikis of a dump tree."""
    from ..origin import OriginsConfig, OriginsRun

    wikis = None
    if args.wikis:
        from ..languages import lookup

        wikis = tuple(lookup(w).dbname for w in args.wikis.split(",") if w.strip())
    config = OriginsConfig(
        wikis=wikis, source=args.source, jobs=args.jobs, scheduler=args.scheduler, memory_limit=args.memory_limit
    )
    report = OriginsRun(config).run(args.tree, args.out)
    for wiki, why in report.skipped:
        print(f"wikiorigin: skipped {wiki}: {why}", file=sys.stderr)
    for note in report.notes[:50]:
        print(f"wikiorigin: warning: {note}", file=sys.stderr)
    reused = sum(r.reused for r in report.shards)
    s = report.origins
    print(
        f"{s.items:,} items from {len(report.shards)} wikis ({reused} shards reused, "
        f"{len(report.skipped)} wikis skipped), {s.tied:,} tied, in {s.seconds:.1f} s -> {args.out}"
    )
    return 0


def cmd_subset(args) -> int:
    """`wikiorigin subset`: the items that originate in one edition."""
    from ..languages import lookup
    from ..origin import subset

    wiki = lookup(args.wiki).dbname
    n = subset(
        args.origins,
        wiki,
        args.out,
        min_editions=args.min_editions,
        max_editions=args.max_editions,
        min_lead_days=args.min_lead_days,
        sample=args.sample,
        seed=args.seed,
    )
    print(f"{n:,} items originate in {wiki} -> {args.out}")
    return 0
