"""The corpus stage's commands: ``corpus yokai`` (the articles linked from a list page) and
``corpus origin`` (the articles of an origin subset), each with its references."""

from __future__ import annotations

import sys

from ..errors import WikioriginError
from .options import positive

__all__ = ["add_commands"]


def _yokaieval_page() -> str:
    """The list page of `corpus yokai` by default: the YokaiEval culture preset's."""
    from ..presets import culture

    return str(culture("yokaieval").list_page)


def add_commands(sub) -> None:
    """Register ``corpus`` and its sub-commands ``yokai`` and ``origin`` under ``sub``."""
    s = sub.add_parser("corpus", help="article corpora with their references")
    corpus = s.add_subparsers(dest="corpus", required=True)
    c = corpus.add_parser("yokai", help="the articles of a list page's entries (日本の妖怪一覧)")
    _dump_options(c)
    c.add_argument("--list-page", default=_yokaieval_page(), help="the list page's title")
    c.set_defaults(func=cmd_corpus_yokai)
    c = corpus.add_parser("origin", help="the articles of items from `wikiorigin subset`")
    c.add_argument("--items", required=True, help="items.parquet (origins schema)")
    _dump_options(c)
    source = c.add_mutually_exclusive_group(required=True)
    source.add_argument("--entities", help="entities file from `wikiorigin wikidata extract` (offline; no dump read)")
    source.add_argument("--wikidata", help="Wikidata JSON dump (offline; one pass for these items alone)")
    source.add_argument("--sparql", help="SPARQL endpoint URL (online)")
    c.set_defaults(func=cmd_corpus_origin)


def _dump_options(c) -> None:
    c.add_argument("--dump", required=True, help="the edition's pages-articles-multistream.xml.bz2")
    c.add_argument("--index", required=True, help="its pages-articles-multistream-index.txt.bz2")
    c.add_argument("--out", required=True, help="articles Parquet file to write")
    c.add_argument("--threads", type=positive(int), default=2, help="streams decompressed in parallel")
    c.add_argument(
        "--jobs", type=positive(int), default=1, help="processes converting the articles (the same file for any number)"
    )
    c.add_argument("--scheduler", default=None, help="Dask scheduler address (tcp://...) converting them instead")
    c.add_argument(
        "--text",
        choices=("wikitext", "mediawiki", "html-dump"),
        default=None,
        help="where the text comes from: the wikitext (templates dropped), MediaWiki's rendering with "
        "the wiki's templates and modules, or --html-dump (default: mediawiki when installed, else wikitext)",
    )
    c.add_argument("--html-dump", help="a Wikimedia Enterprise HTML dump (*-NS0-*-ENTERPRISE-HTML.json.tar.gz)")


def _text(args) -> str | None:
    """The text source asked for (None: the library's default), its engine checked before any
    work: a missing one is one line saying how to install it."""
    from ..render.mediawiki import require_mediawiki

    if args.text == "html-dump" and not args.html_dump:
        raise WikioriginError("--text html-dump needs --html-dump FILE")
    if args.html_dump and args.text not in (None, "html-dump"):
        raise WikioriginError(f"--html-dump is read only with --text html-dump, not --text {args.text}")
    if args.text == "mediawiki":
        require_mediawiki()
    return "html-dump" if args.html_dump else args.text


def _furniture(counts: dict) -> str:
    from ..render.html import FURNITURE

    listed = ", ".join(f"{counts[k]} {k.replace('_', ' ')}" for k in FURNITURE if counts.get(k))
    return f"; page furniture left out: {listed}" if listed else ""


def cmd_corpus_yokai(args) -> int:
    """`wikiorigin corpus yokai`: the articles a list page's entries link to, from a multistream dump."""
    from ..files import check_output

    check_output(args.out, inputs=[args.dump, args.index])  # before the dump is opened
    from ..corpora.list_run import ListCorpusConfig, ListCorpusRun
    from ..corpora.yokai import LEFT_OUT
    from ..dumps.pages import Multistream

    text = _text(args)
    dump = Multistream(args.dump, args.index, threads=args.threads)
    config = ListCorpusConfig(list_page=args.list_page, text=text, jobs=args.jobs, scheduler=args.scheduler)
    r = ListCorpusRun(config).run(dump, args.out, html_dump=args.html_dump).report
    for title in r.missing[:20]:
        print(f"wikiorigin: missing: {title!r} is linked but not in the dump", file=sys.stderr)
    for problem in dump.problems[:20]:
        print(f"wikiorigin: warning: {problem}", file=sys.stderr)
    if r.note:
        print(f"wikiorigin: note: {r.note}", file=sys.stderr)
    print(f"text: {r.text}{_furniture(r.furniture)}")
    left_out = ", ".join(f"{r.left_out[k]} {k.replace('_', ' ')}" for k in LEFT_OUT if r.left_out.get(k))
    print(
        f"{args.list_page}: {r.entries} entries ({r.unlinked} unlinked), {r.linked} linked, "
        f"{r.found} found, {r.redirected} redirected, {len(r.missing)} missing, {r.duplicates} "
        f"duplicates, {r.without_references} without any reference, {r.fallback} by the fallback "
        f"parser; {r.articles} articles in {r.seconds:.1f} s -> {args.out}; other links left out: "
        f"{left_out or 'none'}"
    )
    return 0


def cmd_corpus_origin(args) -> int:
    """`wikiorigin corpus origin`: the articles of an origin subset, with Wikidata names and regions."""
    from ..files import check_output

    # before the dump is opened: not a directory, writable, no input
    check_output(args.out, inputs=[args.items, args.dump, args.wikidata, args.entities])
    from ..corpora.origin import OriginCorpusConfig, OriginCorpusRun
    from ..dumps.pages import Multistream

    text = _text(args)
    dump = Multistream(args.dump, args.index, threads=args.threads)
    config = OriginCorpusConfig(text=text, jobs=args.jobs, scheduler=args.scheduler)
    r = (
        OriginCorpusRun(config)
        .run(
            args.items,
            dump,
            args.out,
            wikidata=args.wikidata,
            sparql=args.sparql,
            entities_file=args.entities,
            html_dump=args.html_dump,
        )
        .report
    )
    for note in (
        [f"renamed: {x}" for x in r.renamed[:20]]
        + [f"left out: {x}" for x in r.mismatched[:20]]
        + r.notes
        + [f"item {q}: no Wikidata entity" for q in r.missing_entities[:20]]
    ):
        print(f"wikiorigin: warning: {note}", file=sys.stderr)
    print(f"text: {r.text}{_furniture(r.furniture)}")
    print(
        f"{r.wiki}: {r.items} items ({r.other_wiki} of other editions), "
        f"{len(r.missing_pages)} pages not in the dump, {len(r.renamed)} renamed (kept), "
        f"{len(r.mismatched)} with another title or now a redirect (left out), "
        f"{len(r.missing_entities)} without Wikidata data, {r.bad_wikidata_lines} bad Wikidata "
        f"lines; {r.articles} articles in {r.seconds:.1f} s -> {args.out}; {r.with_region} with a region "
        f"(first-level division, {r.region_fetches} levels of parents looked up), "
        f"{len(r.several_regions)} in several (none given)"
    )
    return 0
