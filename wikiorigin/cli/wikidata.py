"""The ``wikidata`` command: ``wikidata extract``, one pass of the Wikidata JSON dump for the
items of any number of origin wikis (their names and sitelinks) and every place of the dump
(its current P131 and P17), the file ``corpus origin --entities`` reads instead of the dump."""

from __future__ import annotations

import sys

__all__ = ["add_commands"]


def add_commands(sub) -> None:
    """Register ``wikidata`` and its sub-command ``extract`` under ``sub``."""
    s = sub.add_parser("wikidata", help="one pass of the Wikidata JSON dump for every corpus of a job")
    commands = s.add_subparsers(dest="wikidata", required=True)
    c = commands.add_parser(
        "extract", help="the items' names and sitelinks and every place's P131 and P17, in one pass of the dump"
    )
    c.add_argument("dump", help="the Wikidata JSON dump (wikidata-DATE-all.json.gz or .bz2)")
    c.add_argument(
        "--items",
        nargs="+",
        required=True,
        help="items Parquet files from `wikiorigin subset` (one per origin wiki, any number)",
    )
    c.add_argument("--out", required=True, help="entities Parquet file to write (for `corpus origin --entities`)")
    c.set_defaults(func=cmd_wikidata_extract)


def cmd_wikidata_extract(args) -> int:
    """`wikiorigin wikidata extract`: one pass of the Wikidata JSON dump for the items' corpora."""
    from ..files import check_output

    check_output(args.out, inputs=[args.dump, *args.items])  # not a directory, writable, no input
    from ..corpora.entities import extract_entities

    r = extract_entities(args.dump, args.items, args.out)
    for note in r.notes[:20]:
        print(f"wikiorigin: warning: {note}", file=sys.stderr)
    print(
        f"{args.dump}: {r.lines:,} entities read in one pass; {r.found:,} of the {r.items:,} items found "
        f"({', '.join(r.wikis) or 'no wiki'}: names in {', '.join(r.languages)}), {r.places:,} places; "
        f"{r.bad_lines} bad lines, {r.duplicates} repeated; {r.rows:,} rows in {r.seconds:.1f} s -> {args.out}"
    )
    return 0
