"""The ``wikiorigin`` command. Thin: parse options, call one library function, print a summary."""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
import warnings
from pathlib import Path

from . import __version__
from .cli_eval import add_eval_commands, requests_outcome
from .errors import WikioriginError
from .files import check_output
from .llm.lock import RunLock

__all__ = ["main"]


def _namespaces(text: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None


def _wiki(args) -> str:
    from .languages import lookup

    if args.allow_non_wikipedia:
        return args.wiki
    return lookup(args.wiki).dbname


def _print_json(rows) -> int:
    json.dump([r.as_dict() for r in rows], sys.stdout, ensure_ascii=False, indent=1)
    print()
    return 0


def _single_country(args) -> int:
    from .languages import single_country_languages

    rows = single_country_languages()
    if args.json:
        return _print_json(rows)
    print(f"{'language':<10} {'country':<8} {'country name':<36} edition")
    for r in rows:
        print(f"{r.language:<10} {r.country:<8} {r.country_name:<36} {r.wiki or '-'}")
    editions = {r.wiki for r in rows if r.wiki}
    print(f"{len(rows)} languages official in exactly one of the 193 UN member states; "
          f"{len(editions)} open Wikipedia editions")
    return 0


def cmd_languages(args) -> int:
    from .languages import registry

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


def cmd_scan(args) -> int:
    check_output(args.out)  # before any work: not a directory, writable
    from .dumps.scan import scan_to_parquet

    wiki = _wiki(args)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        stats = scan_to_parquet(
            args.inputs, wiki, args.out, engine=args.engine,
            namespaces=args.namespaces, threads=args.threads,
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


def cmd_qids(args) -> int:
    check_output(args.out)  # before any work: not a directory, writable
    from .dumps.sql import SqlStats, qids_table
    from .files import provenance, write_table
    from .schemas import QIDS

    wiki = _wiki(args)
    started = time.perf_counter()
    stats = SqlStats()
    table = qids_table(args.page_props, wiki, stats)
    meta = provenance(stage="qids", wiki=wiki, inputs=[{"file": Path(args.page_props).name}])
    write_table(table, args.out, QIDS, meta)
    for note in stats.notes[:20]:
        print(f"wikiorigin: warning: {note}", file=sys.stderr)
    left_out = stats.bad_values + stats.unreadable
    if left_out > 20:
        print(f"wikiorigin: warning: {left_out - 20:,} more left out", file=sys.stderr)
    seconds = time.perf_counter() - started
    print(
        f"{wiki}: {table.num_rows:,} pages with a Wikidata item from {stats.statements:,} "
        f"INSERT statements; left out: {stats.bad_values:,} values not a QID, "
        f"{stats.unreadable:,} unreadable rows; in {seconds:.2f} s -> {args.out}"
    )
    return 0


def cmd_origins(args) -> int:
    check_output(args.out)  # before any work: not a directory, writable
    from .origin import build_origins

    wikis = None
    if args.wikis:
        from .languages import lookup

        wikis = [lookup(w).dbname for w in args.wikis.split(",") if w.strip()]
    report = build_origins(
        args.tree, args.out, wikis=wikis, source=args.source, jobs=args.jobs,
        scheduler=args.scheduler, memory_limit=args.memory_limit,
    )
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
    from .languages import lookup
    from .origin import subset

    wiki = lookup(args.wiki).dbname
    n = subset(
        args.origins, wiki, args.out, min_editions=args.min_editions,
        max_editions=args.max_editions, min_lead_days=args.min_lead_days,
        sample=args.sample, seed=args.seed,
    )
    print(f"{n:,} items originate in {wiki} -> {args.out}")
    return 0


def cmd_download(args) -> int:
    import os

    from .dumps import fetch
    from .languages import open_wikis

    if args.wikis == ["all"]:
        wikis = [w.dbname for w in open_wikis()]
    else:
        from .languages import lookup

        wikis = [lookup(w).dbname for w in args.wikis]
    client = fetch.Client(contact=args.contact or os.environ.get("WIKIORIGIN_CONTACT", ""),
                          user_agent=args.user_agent)
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    files, notes = fetch.plan(client, args.mirror, wikis, args.date, kinds, args.out,
                              skip_missing=args.wikis == ["all"], wikidata_date=args.wikidata_date)
    for note in notes:
        print(f"wikiorigin: note: {note}", file=sys.stderr)
    if args.dry_run:
        total = 0
        for f in files:
            total += f.size or 0
            size = f"{f.size / 1e6:,.1f} MB" if f.size is not None else "size unknown"
            print(f"{f.url} -> {f.dest} ({size})")
        print(f"{len(files)} files, {total / 1e9:,.2f} GB")
        return 0
    report = fetch.download(client, files, jobs=args.jobs)
    print(f"{len(report.fetched)} files fetched and verified, {len(report.skipped)} already "
          f"verified; {report.bytes / 1e6:,.1f} MB in {report.seconds:.1f} s -> {args.out}")
    return 0


def cmd_corpus_yokai(args) -> int:
    check_output(args.out)  # before any work: not a directory, writable
    from .corpora.yokai import build_list_corpus
    from .dumps.pages import Multistream

    dump = Multistream(args.dump, args.index, threads=args.threads)
    r = build_list_corpus(dump, args.out, list_page=args.list_page)
    for title in r.missing[:20]:
        print(f"wikiorigin: missing: {title!r} is linked but not in the dump", file=sys.stderr)
    for problem in dump.problems[:20]:
        print(f"wikiorigin: warning: {problem}", file=sys.stderr)
    print(f"{args.list_page}: {r.linked} linked, {r.found} found, {r.redirected} redirected, "
          f"{len(r.missing)} missing, {r.duplicates} duplicates, {r.without_references} without any "
          f"reference, {r.fallback} by the fallback parser; {r.articles} articles in "
          f"{r.seconds:.1f} s -> {args.out}")
    return 0


def cmd_corpus_origin(args) -> int:
    check_output(args.out)  # before any work: not a directory, writable
    from .corpora.origin import build_origin_corpus
    from .dumps.pages import Multistream

    dump = Multistream(args.dump, args.index, threads=args.threads)
    r = build_origin_corpus(args.items, dump, args.out, wikidata=args.wikidata, sparql=args.sparql)
    for note in ([f"renamed: {x}" for x in r.renamed[:20]]
                 + [f"left out: {x}" for x in r.mismatched[:20]]
                 + r.notes + [f"item {q}: no Wikidata entity" for q in r.missing_entities[:20]]):
        print(f"wikiorigin: warning: {note}", file=sys.stderr)
    print(f"{r.wiki}: {r.items} items ({r.other_wiki} of other editions), "
          f"{len(r.missing_pages)} pages not in the dump, {len(r.renamed)} renamed (kept), "
          f"{len(r.mismatched)} with another title or now a redirect (left out), "
          f"{len(r.missing_entities)} without Wikidata data, {r.bad_wikidata_lines} bad Wikidata "
          f"lines; {r.articles} articles in {r.seconds:.1f} s -> {args.out}")
    return 0


def _llm_client(args, model):
    from .llm import LLMClient, OpenAIBackend, RequestCache, TransformersBackend

    if args.backend == "transformers":
        backend = TransformersBackend(model)
    else:
        backend = OpenAIBackend(model, base_url=args.base_url, azure_endpoint=args.azure_endpoint,
                                timeout=args.timeout)
    prices = json.loads(args.prices) if args.prices else None
    return LLMClient(backend, RequestCache(args.cache), concurrency=args.concurrency, retries=args.retries,
                     max_wait=args.max_wait, rpm=args.rpm, tpm=args.tpm, prices=prices)


def _failed_rows(out) -> str:
    """Where a build writes the rows it dropped, with their reasons."""
    return str(out).removesuffix(".parquet") + ".failed.parquet"


def _print_plan(plan: dict, later: str) -> int:
    print(f"{plan['calls']} calls to make first ({plan['requests'] - plan['calls']} cached), "
          f"~{plan['input_tokens']:,} input tokens; then at most {plan['later_calls_at_most']} "
          f"calls to {later}")
    return 0


def cmd_build_mcq(args) -> int:
    from .builders.mcq import MCQConfig, build_mcq, plan_mcq

    config = MCQConfig(language=args.language, per_article=args.per_article, seed=args.seed)
    generator = _llm_client(args, args.model)
    if args.dry_run:
        return _print_plan(plan_mcq(args.articles, generator, config), "check, attribute and label")
    checker = _llm_client(args, args.checker_model) if args.checker_model else None
    with RunLock(args.out):
        report = build_mcq(args.articles, args.out, generator, checker, config)
    prices = json.loads(args.prices) if args.prices else None
    print(f"generator: {generator.usage.summary(prices)}", file=sys.stderr)
    if checker is not None:
        print(f"checker: {checker.usage.summary(prices)}", file=sys.stderr)
    dropped = ", ".join(f"{k} {v}" for k, v in report.dropped.items()) or "none"
    print(f"{report.kept} questions from {report.articles} articles ({report.generated} generated; "
          f"dropped: {dropped}) -> {args.out}")
    return requests_outcome([generator, checker], _failed_rows(args.out))


def cmd_build_freeform(args) -> int:
    from .builders.freeform import FreeformConfig, build_freeform, plan_freeform

    generator = _llm_client(args, args.model)
    config = FreeformConfig(rounds=args.rounds, cutoff=args.cutoff)
    if args.dry_run:
        return _print_plan(plan_freeform(args.articles, generator, config), "refine, translate and score")
    with RunLock(args.out):
        counts = build_freeform(args.articles, args.out, generator, config)
    prices = json.loads(args.prices) if args.prices else None
    print(f"generator: {generator.usage.summary(prices)}", file=sys.stderr)
    dropped = ", ".join(f"{k} {v}" for k, v in counts.items() if k not in ("articles", "kept")) or "none"
    print(f"{counts['kept']} questions from {counts['articles']} articles (dropped: {dropped}) -> {args.out}")
    return requests_outcome([generator], _failed_rows(args.out))


def _dump_options(c) -> None:
    c.add_argument("--dump", required=True, help="the edition's pages-articles-multistream.xml.bz2")
    c.add_argument("--index", required=True, help="its pages-articles-multistream-index.txt.bz2")
    c.add_argument("--out", required=True, help="articles Parquet file to write")
    c.add_argument("--threads", type=int, default=2, help="streams decompressed in parallel")


def _memory_size(text: str) -> str:
    """A memory size as DuckDB takes it (``4GB``, ``512MB``, ``1.5GiB``), checked at the command line."""
    if not re.fullmatch(r"\s*\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)\s*", text, re.I):
        raise argparse.ArgumentTypeError(f"{text!r} is not a memory size such as 4GB or 512MB")
    return text.strip()


def _positive(kind, zero: bool = False):
    """An argparse type: a finite number > 0 (>= 0 with ``zero``)."""
    import math

    def convert(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if not math.isfinite(value) or value < 0 or (value == 0 and not zero):
            raise argparse.ArgumentTypeError(f"expected a number {'>=' if zero else '>'} 0, got {text!r}")
        return value
    return convert


def _llm_options(b) -> None:
    b.add_argument("--backend", choices=("openai", "transformers"), default="openai",
                   help="an OpenAI-compatible API, or a local transformers model (MODEL = its path)")
    b.add_argument("--base-url", default=None, help="an OpenAI-compatible server (vLLM, ...)")
    b.add_argument("--azure-endpoint", default=None, help="Azure OpenAI endpoint")
    b.add_argument("--cache", default="llm-cache.sqlite", help="request cache (SQLite): a re-run pays for no call twice")
    b.add_argument("--concurrency", type=int, default=8, help="requests in flight at once")
    b.add_argument("--rpm", type=int, default=None, help="requests per minute at most")
    b.add_argument("--tpm", type=int, default=None, help="tokens per minute at most")
    b.add_argument("--prices", default=None, help='USD per 1M tokens: {"input": 0.15, "output": 0.6}')
    w = b.add_argument_group("timeouts, retries and waits", (
        "Every wait is bounded: one request takes at most (RETRIES + 1) x TIMEOUT + RETRIES x MAX_WAIT "
        "(10 min with the defaults), a run at most that x requests / CONCURRENCY; the usage line says how "
        "long it waited; once 10 requests in a row have given up, the rest is not sent. The endpoint is "
        "checked once (seconds) before the first call that is not in the cache: a dead server, a refused "
        "key or an unknown model is an error before anything is paid."))
    w.add_argument("--timeout", type=_positive(float), default=60, metavar="SECONDS",
                   help="seconds one try may take (default: %(default)s)")
    w.add_argument("--retries", type=_positive(int, zero=True), default=3, metavar="N",
                   help="tries after the first on a timeout, 429 or 5xx (default: %(default)s)")
    w.add_argument("--max-wait", type=_positive(float, zero=True), default=120, metavar="SECONDS",
                   help="longest pause before a retry, in seconds; a server that asks (Retry-After) for "
                        "more ends that request at once, recorded as failed (default: %(default)s)")


def cmd_build_preference(args) -> int:
    from .builders.preference import build_preferences, plan_preferences

    responders = {m: _llm_client(args, m) for m in args.models.split(",") if m.strip()}
    if args.dry_run:
        return _print_plan(plan_preferences(args.questions, responders), "judge the answers")
    judge = _llm_client(args, args.judge_model) if args.judge_model else None
    with RunLock(args.out):
        counts = build_preferences(args.questions, args.out, responders, judge,
                                   min_gap=args.min_gap, language=args.language)
    prices = json.loads(args.prices) if args.prices else None
    for name, client in [*responders.items(), ("judge", judge)]:
        if client is not None:
            print(f"{name}: {client.usage.summary(prices)}", file=sys.stderr)
    print(f"{counts['pairs']} pairs from {counts['questions']} questions and {len(responders)} models "
          f"({counts['answer_errors']} answers and {counts['judge_errors']} ratings failed) -> {args.out}")
    return requests_outcome([*responders.values(), judge], _failed_rows(args.out))


def cmd_build_card(args) -> int:
    from .builders.dataset import write_card

    card = write_card(args.directory, args.kind, args.title, args.description)
    print(f"dataset card -> {card}")
    return 0


def cmd_export_lmeval(args) -> int:
    from .export_lmeval import export_lmeval

    r = export_lmeval(args.dataset, args.out, task=args.task, language=args.language,
                      source_language=args.source_language)
    kind = f"multiple_choice, {r.language}" if r.kind == "mcq" else "generate_until"
    print(f"lm-eval task {r.task}: {r.rows} questions ({kind}) -> {r.yaml} ({r.data.name}, {r.readme.name}); "
          f"run: lm_eval --model hf --model_args pretrained=MODEL --tasks {r.task} --include_path {r.yaml.parent}")
    return 0


class _Help(argparse.HelpFormatter):
    """Every option's help says its default, unless it has none or says it already."""

    def _get_help_string(self, action):
        text = action.help or ""
        if "%(default)" in text or "default" in text or not action.option_strings \
                or action.default is None or action.default is False or action.default is argparse.SUPPRESS:
            return text
        return f"{text} (default: %(default)s)" if text else "(default: %(default)s)"


class _Parser(argparse.ArgumentParser):
    """Every command's parser (sub-commands inherit it): help with defaults."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", _Help)
        super().__init__(*args, **kwargs)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="wikiorigin",
        description="Culture-specific QA datasets from Wikipedia and Wikidata dumps.",
    )
    p.add_argument("--version", action="version", version=f"wikiorigin {__version__}")
    p.add_argument("--debug", action="store_true", help="show the traceback of an unexpected error")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("languages", help="list the Wikipedia editions")
    s.add_argument("--json", action="store_true", help="print JSON instead of a table")
    s.add_argument("--all", action="store_true", help="closed and private editions too")
    s.add_argument("--single-country", action="store_true",
                   help="languages official in exactly one UN member state (CLDR)")
    s.set_defaults(func=cmd_languages)

    s = sub.add_parser("scan", help="page creation times from stub/history XML or history TSV")
    s.add_argument("inputs", nargs="+", help="the parts of one wiki's dump")
    s.add_argument("--wiki", required=True, help="dbname, language code or domain (jawiki, ja)")
    s.add_argument("--out", required=True, help="pages Parquet file to write")
    s.add_argument("--namespaces", type=_namespaces, default=None, help="e.g. 0 or 0,14")
    s.add_argument("--engine", choices=("fast", "mwxml"), default="fast",
                   help="fast: our scanner (C core); mwxml: the mwxml library, slow, the oracle")
    s.add_argument("--threads", type=int, default=1, help="decoder threads (bzip2)")
    s.add_argument("--allow-non-wikipedia", action="store_true",
                   help="accept a dbname that is not a Wikipedia (e.g. elwikivoyage)")
    s.set_defaults(func=cmd_scan)

    s = sub.add_parser("qids", help="page -> Wikidata QID from a page_props SQL dump")
    s.add_argument("page_props", help="page_props.sql(.gz)")
    s.add_argument("--wiki", required=True, help="dbname or language code of the dump's wiki (jawiki, ja)")
    s.add_argument("--out", required=True, help="qids Parquet file to write (wiki, page_id, qid)")
    s.add_argument("--allow-non-wikipedia", action="store_true",
                   help="accept a dbname that is not a Wikipedia (e.g. elwikivoyage)")
    s.set_defaults(func=cmd_qids)

    s = sub.add_parser("download", help="fetch dump files from a mirror, verified")
    s.add_argument("wikis", nargs="+", help="dbnames or language codes, or 'all' (a wiki the mirror "
                                             "lacks, or with no run done, is then passed over with a note)")
    s.add_argument("--date", default="latest", help="YYYYMMDD or latest (newest run done)")
    s.add_argument("--wikidata-date", default="latest",
                   help="the Wikidata JSON dump's date, YYYYMMDD or latest (Wikidata's dates are its own)")
    s.add_argument("--kinds", default="stubs,page_props",
                   help="comma-separated: stubs, export, page_props, multistream, history, wikidata")
    s.add_argument("--mirror", default="https://dumps.wikimedia.org", help="base URL of the tree")
    s.add_argument("--out", required=True, help="local tree to fill (same layout)")
    s.add_argument("--jobs", type=int, default=3, help="parallel downloads")
    s.add_argument("--contact", default=None, help="email or URL for the User-Agent")
    s.add_argument("--user-agent", default=None, help="the whole User-Agent, if you must")
    s.add_argument("--dry-run", action="store_true", help="list the files and sizes only")
    s.set_defaults(func=cmd_download)

    s = sub.add_parser("corpus", help="article corpora with their references")
    corpus = s.add_subparsers(dest="corpus", required=True)
    c = corpus.add_parser("yokai", help="the articles linked from a list page (日本の妖怪一覧)")
    _dump_options(c)
    c.add_argument("--list-page", default="日本の妖怪一覧", help="the list page's title")
    c.set_defaults(func=cmd_corpus_yokai)
    c = corpus.add_parser("origin", help="the articles of items from `wikiorigin subset`")
    c.add_argument("--items", required=True, help="items.parquet (origins schema)")
    _dump_options(c)
    source = c.add_mutually_exclusive_group(required=True)
    source.add_argument("--wikidata", help="Wikidata JSON dump (offline)")
    source.add_argument("--sparql", help="SPARQL endpoint URL (online)")
    c.set_defaults(func=cmd_corpus_origin)

    s = sub.add_parser("build", help="build QA datasets with LLMs")
    build = s.add_subparsers(dest="builder", required=True)
    b = build.add_parser("mcq", help="YokaiEval-style 4-option questions from articles")
    b.add_argument("--articles", required=True, help="articles.parquet")
    b.add_argument("--out", required=True, help="mcq.parquet (dropped rows: OUT.failed.parquet; OUT.lock while it runs)")
    b.add_argument("--model", required=True, help="the generator model")
    b.add_argument("--checker-model", default=None, help="the checker model (default: the generator)")
    _llm_options(b)
    b.add_argument("--language", choices=("ja", "en"), default="ja", help="the language of the questions")
    b.add_argument("--per-article", type=int, default=1, help="questions asked of each article")
    b.add_argument("--seed", type=int, default=0, help="seed of the answer positions' balancing")
    b.add_argument("--dry-run", action="store_true", help="count the calls and tokens only")
    b.set_defaults(func=cmd_build_mcq)
    b = build.add_parser("freeform", help="WikiOriginQA-style questions from an origin corpus")
    b.add_argument("--articles", required=True, help="articles.parquet of `corpus origin`")
    b.add_argument("--out", required=True, help="freeform.parquet (dropped: OUT.failed.parquet; OUT.lock while it runs)")
    b.add_argument("--model", required=True, help="the generator model")
    _llm_options(b)
    b.add_argument("--rounds", type=int, default=1, help="refinement passes")
    b.add_argument("--cutoff", default="2023-12", help="knowledge cut-off for the criteria")
    b.add_argument("--dry-run", action="store_true", help="count the calls and tokens only")
    b.set_defaults(func=cmd_build_freeform)
    b = build.add_parser("preference", help="CARE-style chosen/rejected pairs (TRL format)")
    b.add_argument("--questions", required=True, help="CARE JSON, or Parquet/JSON with question, answer")
    b.add_argument("--out", required=True,
                   help="preferences.parquet (failed answers and ratings: OUT.failed.parquet; OUT.lock while it runs)")
    b.add_argument("--models", required=True, help="comma-separated models that answer")
    b.add_argument("--judge-model", required=True, help="the model that rates 1-10")
    b.add_argument("--min-gap", type=float, default=2.0, help="least score difference of a pair")
    b.add_argument("--language", default="ja", help="the language of the questions and answers")
    b.add_argument("--dry-run", action="store_true", help="count the calls and tokens only")
    _llm_options(b)
    b.set_defaults(func=cmd_build_preference)
    b = build.add_parser("card", help="a dataset card (README.md) for a dataset's directory")
    b.add_argument("directory", help="the directory of the dataset's Parquet files")
    b.add_argument("--kind", choices=("mcq", "freeform", "preferences"), required=True,
                   help="which dataset the directory holds")
    b.add_argument("--title", required=True, help="the card's title")
    b.add_argument("--description", default="", help="a paragraph under the title")
    b.set_defaults(func=cmd_build_card)

    add_eval_commands(sub, _llm_options, _llm_client)

    s = sub.add_parser("export", help="datasets in other tools' formats")
    export = s.add_subparsers(dest="exporter", required=True)
    x = export.add_parser("lm-eval", help="an lm-evaluation-harness task (YAML + JSONL) with our numbers")
    x.add_argument("dataset", help="mcq.parquet, released YokaiEval rows (JSON/Parquet) or freeform.parquet")
    x.add_argument("--out", required=True, help="directory for TASK.yaml, TASK.jsonl, TASK.README.md")
    x.add_argument("--task", default=None, help="task name (default: wikiorigin_ + the file's stem)")
    x.add_argument("--language", choices=("ja", "en"), default=None,
                   help="multiple choice: answer cue and delimiter (default: the rows' language column, else ja)")
    x.add_argument("--source-language", action="store_true", help="free-form: ask in the item's language")
    x.set_defaults(func=cmd_export_lmeval)

    s = sub.add_parser("origins", help="the first edition of every Wikidata item")
    s.add_argument("tree", help="a local dump tree in the Wikimedia layout")
    s.add_argument("--out", required=True, help="origins Parquet file to write")
    s.add_argument("--wikis", default=None, help="comma-separated (default: all open found)")
    s.add_argument("--source", choices=("stubs", "export", "history"), default="stubs",
                   help="where creation times come from: stub-meta-history XML, full-history XML, or the "
                        "MediaWiki history TSV dumps")
    s.add_argument("--jobs", type=int, default=1, help="local worker processes")
    s.add_argument("--scheduler", default=None, help="Dask scheduler address (tcp://...)")
    s.add_argument("--memory-limit", default="4GB", type=_memory_size,
                   help="DuckDB's memory limit for the reduction, e.g. 4GB, 512MB (default 4GB)")
    s.set_defaults(func=cmd_origins)

    s = sub.add_parser("subset", help="the items that originate in one edition")
    s.add_argument("origins", help="origins.parquet")
    s.add_argument("--wiki", required=True, help="the origin edition (dbname or language code)")
    s.add_argument("--out", required=True, help="items Parquet file to write (origins schema)")
    s.add_argument("--min-editions", type=int, default=1, help="items with at least this many editions")
    s.add_argument("--max-editions", type=int, default=None, help="items with at most this many editions")
    s.add_argument("--min-lead-days", type=float, default=None,
                   help="items whose origin came at least this many days before the runner-up")
    s.add_argument("--sample", type=int, default=None, help="keep N items at random (the same N for a seed)")
    s.add_argument("--seed", type=int, default=0, help="seed of --sample")
    s.set_defaults(func=cmd_subset)
    return p


def main(argv: list[str] | None = None) -> int:
    """The command line: exit 0 done, 2 bad input or environment (one line), 1 an unexpected
    error (one line; ``--debug`` shows the traceback), 130 interrupted."""
    args = _parser().parse_args(argv)
    try:
        return args.func(args)
    except WikioriginError as exc:
        print(f"wikiorigin: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. `wikiorigin languages | head`
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print("wikiorigin: interrupted; finished work is kept (completed files, shards, the request cache): "
              "run the same command again to resume", file=sys.stderr)
        return 130
    except OSError as exc:  # the environment: a full disk, a permission, a file gone
        if args.debug:
            raise
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"wikiorigin: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # the last boundary: one line, not a traceback, for the user
        if args.debug:
            raise
        print(f"wikiorigin: error: unexpected {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''} "
              "(run with --debug for the traceback, and please report it)", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
