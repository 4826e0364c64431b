"""The review stage's commands: ``review serve`` (a local web page to accept, reject and edit
a dataset's items), ``review stats`` (counts and agreement) and ``review export`` (the
accepted items, edits applied)."""

from __future__ import annotations

__all__ = ["add_commands"]


def _port(text: str) -> int:
    """An ``--port`` value: a whole number from 0 to 65535 (argparse turns the error into one line)."""
    import argparse

    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port (0 to 65535)")
    return port


def add_commands(sub) -> None:
    """Register ``review`` and its sub-commands under ``sub``."""
    s = sub.add_parser("review", help="human review of a built dataset in the browser")
    review = s.add_subparsers(dest="reviewer", required=True)
    v = review.add_parser("serve", help="a local web page to review a dataset's items one at a time")
    v.add_argument("dataset", help="mcq.parquet (or released YokaiEval JSON), freeform.parquet or preferences.parquet")
    v.add_argument("--articles", default=None, help="articles.parquet: the articles the items cite, shown beside them")
    v.add_argument("--db", required=True, help="the review database (SQLite; made if missing, shared by annotators)")
    v.add_argument(
        "--host", default="127.0.0.1", help="address to listen on; any other than loopback requires the printed token"
    )
    v.add_argument("--port", type=_port, default=8765, help="port to listen on (0: a free one)")
    v.add_argument("--annotator", default=None, help="your name in the decisions (default: the login name)")
    v.set_defaults(func=cmd_review_serve)
    t = review.add_parser("stats", help="decisions per annotator, reasons, and agreement (kappa)")
    t.add_argument("--db", required=True, help="the review database")
    t.add_argument("--json", action="store_true", help="print JSON instead of a table")
    t.set_defaults(func=cmd_review_stats)
    x = review.add_parser("export", help="the accepted items with edits applied, plus review columns")
    x.add_argument("dataset", help="the dataset reviewed")
    x.add_argument("--db", required=True, help="the review database")
    x.add_argument("--out", required=True, help="the reviewed dataset (Parquet)")
    x.add_argument(
        "--policy",
        choices=("all-accept", "majority", "any-accept"),
        default="all-accept",
        help="which items count as accepted: all deciders accept, more accepts than rejects, or any accept",
    )
    x.set_defaults(func=cmd_review_export)


def cmd_review_serve(args) -> int:
    """`wikiorigin review serve`: the review page for one annotator, until interrupted."""
    import getpass

    from ..review.app import serve

    try:
        annotator = args.annotator if args.annotator is not None else getpass.getuser()
    except (KeyError, OSError):  # no login name (some containers)
        annotator = "annotator"
    serve(
        args.dataset,
        args.db,
        articles=args.articles,
        host=args.host,
        port=args.port,
        annotator=annotator,
        show=lambda line: print(line, flush=True),
    )
    return 0


def cmd_review_stats(args) -> int:
    """`wikiorigin review stats`: decisions per annotator, reasons and agreement."""
    import json

    from ..review.stats import format_stats, review_stats
    from ..review.store import open_existing

    store = open_existing(args.db)
    stats = review_stats(store)
    store.close()
    print(json.dumps(stats, ensure_ascii=False, indent=1) if args.json else format_stats(stats, args.db))
    return 0


def cmd_review_export(args) -> int:
    """`wikiorigin review export`: the accepted items with their edits, by a policy."""
    from ..review.export import export_reviewed

    r = export_reviewed(args.dataset, args.db, args.out, policy=args.policy)
    print(
        f"{r.exported} of {r.items} items accepted ({r.policy}; {r.edited} edited) -> {r.out}; "
        f"left out: {r.rejected} rejected, {r.undecided} undecided, {len(r.conflicts)} with conflicting edits"
        + (f" ({', '.join(r.conflicts[:10])}{', ...' if len(r.conflicts) > 10 else ''})" if r.conflicts else "")
        + f"; {r.stale} with a stale decision"
        + (
            f"; {r.orphaned} decided items are no longer in {args.dataset} (removed, or rows without an id "
            "that changed: their decisions are kept in the database, unused)"
            if r.orphaned
            else ""
        )
    )
    import sys

    why = r.why_empty()
    if why is not None:
        print(f"wikiorigin: error: {why}", file=sys.stderr)
    return 1 if why else 0
