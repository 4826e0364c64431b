"""Synthetic dumps with the real structure, and the answers they encode.

For tests and benchmarks: :func:`write_history_xml` writes a stub-meta-history (no text) or a
pages-meta-history (with text) export of any size, with imported revisions (old timestamps,
``imported>`` / ``en>`` contributors, listed in id order before or after local ones), IP and
suppressed contributors, redirects and escaped titles; it returns the records a correct scan
must produce. :func:`write_page_props_sql` writes a MySQL ``page_props`` dump.

:func:`write_origin_tree` writes a multi-wiki tree in the Wikimedia layout with known origins:
stub-meta-history and page_props per wiki, optionally the pages-articles multistream dump and
its index (the same page ids and titles as the stubs) and the ``dumpstatus.json`` a mirror
serves; :func:`write_wikidata_json` writes a Wikidata JSON dump of the items with their labels,
aliases and sitelinks, and its ``md5sums.txt``.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

from .stubs import PageCreation

__all__ = [
    "write_history_xml", "write_history_tsv", "write_page_props_sql", "page_props_rows",
    "write_origin_tree", "expected_origins", "write_articles_xml", "write_multistream", "page_xml",
    "write_multistream_pages", "write_dumpstatus", "write_wikidata_json", "entity_json",
]

_EPOCH = datetime(2001, 1, 15, tzinfo=timezone.utc)
_WORDS = ("Kappa", "Tengu", "Oni", "Yuki-onna", "Nue", "Baku", "Tanuki", "Kitsune", "Rokurokubi")
_HEADER = """<mediawiki xmlns="http://www.mediawiki.org/xml/export-{v}/" \
xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" \
xsi:schemaLocation="http://www.mediawiki.org/xml/export-{v}/ \
http://www.mediawiki.org/xml/export-{v}.xsd" version="{v}" xml:lang="en">
  <siteinfo>
    <sitename>Wikipedia</sitename>
    <dbname>{dbname}</dbname>
    <base>https://example.org/wiki/Main_Page</base>
    <generator>MediaWiki 1.41.0-wmf.1</generator>
    <case>first-letter</case>
    <namespaces>
      <namespace key="0" case="first-letter" />
      <namespace key="1" case="first-letter">Talk</namespace>
      <namespace key="2" case="first-letter">User</namespace>
      <namespace key="10" case="first-letter">Template</namespace>
    </namespaces>
  </siteinfo>
"""
_PREFIX = {0: "", 1: "Talk:", 2: "User:", 10: "Template:"}


def _ts(seconds: int) -> str:
    return _when(seconds).strftime("%Y-%m-%dT%H:%M:%SZ")


def _when(seconds: int) -> datetime:
    return _EPOCH + timedelta(seconds=seconds)


def _contributor(rng: random.Random, imported: bool) -> str:
    r = rng.random()
    if imported:
        prefix = rng.choice(("imported&gt;", "en&gt;", "de&gt;"))
        return f"<contributor>\n        <username>{prefix}User{rng.randrange(999)}</username>\n      </contributor>"
    if r < 0.05:
        return '<contributor deleted="deleted" />'
    if r < 0.25:
        return f"<contributor>\n        <ip>10.{rng.randrange(256)}.{rng.randrange(256)}.1</ip>\n      </contributor>"
    uid = rng.randrange(1, 10**6)
    return f"<contributor>\n        <username>Editor {uid} &amp; co</username>\n        <id>{uid}</id>\n      </contributor>"


def _comment(rng: random.Random, i: int) -> str:
    if rng.random() < 0.03:
        return f"revert &gt; {i} &lt;b&gt;"
    return f"/* Section {i} */ copy-edit &amp; links"


def _text(rng: random.Random, rid: int, with_text: bool, size: int) -> str:
    if not with_text:
        return f'<text bytes="{size}" sha1="phoiac9h4m842xq45sp7s6u21eteeq1" location="tt:{rid}" id="{rid}" />'
    body = " ".join(rng.choices(_WORDS, k=size // 8))
    body = f"&lt;ref&gt;{body[:40]}&lt;/ref&gt; '''{body}''' [[Link|x]] {{{{Infobox|a=b}}}}"
    return f'<text bytes="{len(body)}" xml:space="preserve">{body}</text>'


def _page(rng, pid, rid, version, with_text, text_size) -> tuple[str, PageCreation, int]:
    ns = rng.choices((0, 1, 2, 10), (70, 15, 10, 5))[0]
    title = f"{_PREFIX[ns]}{rng.choice(_WORDS)} &amp; &quot;{pid}&quot;"
    redirect = ns == 0 and rng.random() < 0.15
    n_local = 1 + min(int(rng.expovariate(0.25)), 60)
    n_imported = rng.choice((1, 2, 4)) if rng.random() < 0.05 else 0
    if rng.random() < 0.01:  # every revision imported: no local creation
        n_local = 0
        n_imported = max(n_imported, 1)
    start = rng.randrange(0, 700_000_000)
    local_ts = sorted(start + rng.randrange(0, 50_000_000) for _ in range(n_local))
    imported_ts = sorted(rng.randrange(0, max(1, start)) for _ in range(n_imported))
    # Imported revisions get ids after (usually) or before the local ones: id order != time order.
    kinds = [(t, False) for t in local_ts]
    kinds = [(t, True) for t in imported_ts] + kinds if rng.random() < 0.3 else kinds + [
        (t, True) for t in imported_ts
    ]
    lines = [f"  <page>\n    <title>{title}</title>\n    <ns>{ns}</ns>\n    <id>{pid}</id>\n"]
    if redirect:
        lines.append(f'    <redirect title="{rng.choice(_WORDS)}" />\n')
    first_rid = rid
    best = {False: None, True: None}
    for i, (t, imported) in enumerate(kinds):
        parent = f"\n      <parentid>{rid - 1}</parentid>" if i else ""
        origin = f"\n      <origin>{rid}</origin>" if version == "0.11" else ""
        lines.append(
            f"    <revision>\n      <id>{rid}</id>{parent}\n      <timestamp>{_ts(t)}</timestamp>\n"
            f"      {_contributor(rng, imported)}\n"
            f"      <comment>{_comment(rng, i)}</comment>{origin}\n"
            f"      <model>wikitext</model>\n      <format>text/x-wiki</format>\n"
            f"      {_text(rng, rid, with_text, text_size)}\n"
            f"      <sha1>phoiac9h4m842xq45sp7s6u21eteeq1</sha1>\n    </revision>\n"
        )
        prev = best[imported]
        if prev is None or t < prev[0]:
            best[imported] = (t, rid)
        rid += 1
    lines.append("  </page>\n")
    local, imp = best[False], best[True]
    earliest = min((b for b in (local, imp) if b), key=lambda b: (b[0], b[1] - first_rid))
    record = PageCreation(
        page_id=pid,
        namespace=ns,
        title=title.replace("&amp;", "&").replace("&quot;", '"'),
        is_redirect=redirect,
        created_at=_when(local[0]) if local else None,
        first_revision_at=_when(earliest[0]),
        created_revision_id=local[1] if local else None,
        revisions=len(kinds),
        imported_revisions=n_imported,
    )
    return "".join(lines), record, rid


def write_history_xml(
    out,
    target_bytes: int,
    *,
    seed: int = 0,
    with_text: bool = False,
    text_size: int = 400,
    version: str = "0.10",
    dbname: str = "testwiki",
    first_page_id: int = 1,
    close: bool = True,
) -> Iterator[PageCreation]:
    """Write about ``target_bytes`` of XML to the binary file ``out``; yield the expected records.

    Iterate the result to completion to write the whole file. ``close=False`` leaves the
    document without ``</mediawiki>`` (a torn file is then made by cutting its bytes).
    """
    rng = random.Random(seed)
    written = 0
    out.write(_HEADER.format(v=version, dbname=dbname).encode())
    pid, rid = first_page_id, first_page_id * 10
    while written < target_bytes:
        xml, record, rid = _page(rng, pid, rid, version, with_text, text_size)
        data = xml.encode()
        out.write(data)
        written += len(data)
        pid += rng.randrange(1, 4)
        yield record
    if close:
        out.write(b"</mediawiki>\n")


def page_props_rows(n: int, seed: int = 0) -> Iterator[tuple[int, str, bytes]]:
    """``n`` page_props rows: about one in three is a ``wikibase_item``."""
    rng = random.Random(seed)
    props = ("wikibase_item", "page_image_free", "wikibase-shortdesc", "defaultsort")
    page = 1
    for _ in range(n):
        prop = rng.choices(props, (40, 25, 25, 10))[0]
        if prop == "wikibase_item":
            value = f"Q{rng.randrange(1, 10**8)}".encode()
        elif prop == "wikibase-shortdesc":
            value = f"It's a \\ \"short\" description\nof {page}".encode()
        else:
            value = f"File_{page}.jpg".encode()
        yield page, prop, value
        page += rng.randrange(0, 3)


def _sql_string(value: bytes) -> str:
    text = value.decode("utf-8")
    for a, b in (("\\", "\\\\"), ("'", "\\'"), ('"', '\\"'), ("\n", "\\n"), ("\r", "\\r"), ("\0", "\\0")):
        text = text.replace(a, b)
    return f"'{text}'"


def write_page_props_sql(out, rows, rows_per_insert: int = 2000) -> None:
    """Write ``(page, propname, value)`` rows as a MariaDB ``page_props`` dump (text file ``out``)."""
    out.write(
        "/*M!999999\\- enable the sandbox mode */ \n"
        "-- MariaDB dump 10.19-11.4.5-MariaDB, for debian-linux-gnu (x86_64)\n--\n"
        "-- Host: db1234    Database: testwiki\n"
        "DROP TABLE IF EXISTS `page_props`;\n"
        "CREATE TABLE `page_props` (\n"
        "  `pp_page` int(10) unsigned NOT NULL,\n"
        "  `pp_propname` varbinary(60) NOT NULL,\n"
        "  `pp_value` blob NOT NULL,\n"
        "  `pp_sortkey` float DEFAULT NULL,\n"
        "  PRIMARY KEY (`pp_page`,`pp_propname`)\n"
        ") ENGINE=InnoDB DEFAULT CHARSET=binary ROW_FORMAT=COMPRESSED;\n\n"
        "LOCK TABLES `page_props` WRITE;\n"
    )
    batch = []
    for page, prop, value in rows:
        sortkey = "NULL" if prop != "page_image_free" else "0"
        batch.append(f"({page},'{prop}',{_sql_string(value)},{sortkey})")
        if len(batch) == rows_per_insert:
            out.write("INSERT INTO `page_props` VALUES " + ",".join(batch) + ";\n")
            batch = []
    if batch:
        out.write("INSERT INTO `page_props` VALUES " + ",".join(batch) + ";\n")
    out.write("UNLOCK TABLES;\n")


def write_history_tsv(out, records, wiki: str = "testwiki", old_layout: bool = False) -> None:
    """Write MediaWiki-history TSV lines (text file ``out``) for ``records``.

    Each page gets a ``page``/``create`` event and one ``revision``/``create`` event per
    revision; the answers are the records themselves (counts aside, which page events lack).
    """
    from .history import HISTORY_FIELDS, _OLD_LAYOUT_DROPS

    fields = [f for f in HISTORY_FIELDS if not (old_layout and f in _OLD_LAYOUT_DROPS)]

    def line(**values) -> str:
        return "\t".join(str(values.get(f, "")) for f in fields) + "\n"

    def hive(when) -> str:
        return when.strftime("%Y-%m-%d %H:%M:%S.0") if when else ""

    for r in records:
        page = dict(
            wiki_db=wiki, page_id=r.page_id, page_title=r.title.replace(" ", "_"),
            page_title_historical=r.title.replace(" ", "_"), page_namespace=r.namespace,
            page_namespace_historical=r.namespace,
            page_is_redirect="true" if r.is_redirect else "false", page_is_deleted="false",
            page_creation_timestamp=hive(r.created_at or r.first_revision_at),
            page_first_edit_timestamp=hive(r.first_revision_at),
        )
        for i in range(r.revisions):
            out.write(line(event_entity="revision", event_type="create",
                           event_timestamp=hive(r.first_revision_at), revision_id=i + 1, **page))
        out.write(line(event_entity="page", event_type="create",
                       event_timestamp=hive(r.created_at), event_comment="tab\\tin comment", **page))


# --- a multi-wiki dump tree with known origins ------------------------------------------------


def _stub_page(page: dict, rid: int) -> tuple[str, int]:
    """One <page> of a stub-meta-history from a spec (see :func:`write_origin_tree`)."""
    title = page["title"].replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    lines = [f"  <page>\n    <title>{title}</title>\n    <ns>{page.get('ns', 0)}</ns>\n"
             f"    <id>{page['page_id']}</id>\n"]
    if page.get("redirect"):
        lines.append('    <redirect title="Elsewhere" />\n')
    for when, user in page["revisions"]:
        user = user.replace(">", "&gt;")
        lines.append(
            f"    <revision>\n      <id>{rid}</id>\n      <timestamp>{when}</timestamp>\n"
            f"      <contributor>\n        <username>{user}</username>\n        <id>7</id>\n"
            f"      </contributor>\n      <model>wikitext</model>\n      <format>text/x-wiki</format>\n"
            f'      <text bytes="10" sha1="phoiac9h4m842xq45sp7s6u21eteeq1" id="{rid}" />\n'
            f"      <sha1>phoiac9h4m842xq45sp7s6u21eteeq1</sha1>\n    </revision>\n"
        )
        rid += 1
    lines.append("  </page>\n")
    return "".join(lines), rid


def _gzip_text(path):
    """A gzip text writer whose bytes do not depend on the time (mtime 0)."""
    import gzip
    import io

    return io.TextIOWrapper(gzip.GzipFile(path, "wb", mtime=0), encoding="utf-8")


def write_origin_tree(root, pages: list[dict], date: str = "20260801", without_page_props=(),
                      multistream: bool = False, dumpstatus: bool = False) -> dict:
    """Write a Wikimedia-layout tree of stub-meta-history and page_props files for ``pages``.

    Each page is ``{"wiki", "page_id", "title", "qid", "revisions": [(ISO time, user)], "ns",
    "redirect", "text"}``; a user with ``>`` is an imported revision. With ``multistream``,
    each wiki also gets its ``pages-articles-multistream.xml.bz2`` and index: the pages of the
    stubs that a pages-articles dump holds (no talk namespaces), with their last revision (same
    id and time as in the stub) and ``text`` (default: a short article with one footnote); a
    redirect keeps its ``<redirect>``. With ``dumpstatus``, each run directory gets the
    ``dumpstatus.json`` a mirror publishes (jobs done, sizes, sha1 and md5 of every file).
    Returns the expected origins (qid -> dict of origin_wiki, origin_created_at, n_wikis,
    tied, editions), computed here independently of :mod:`wikiorigin.origin`.
    """
    from pathlib import Path

    by_wiki: dict[str, list[dict]] = {}
    for page in pages:
        by_wiki.setdefault(page["wiki"], []).append(page)
    for wiki, wiki_pages in by_wiki.items():
        directory = Path(root) / wiki / date
        directory.mkdir(parents=True, exist_ok=True)
        wiki_pages = sorted(wiki_pages, key=lambda p: p["page_id"])
        body, rid, last_rids = [], 1000, []
        for page in wiki_pages:
            xml, rid = _stub_page(page, rid)
            body.append(xml)
            last_rids.append(rid - 1)
        head = _HEADER.format(v="0.11", dbname=wiki)
        with _gzip_text(directory / f"{wiki}-{date}-stub-meta-history.xml.gz") as f:
            f.write(head + "".join(body) + "</mediawiki>\n")
        if multistream:
            articles = [_article_xml(page, last_rid) for page, last_rid in zip(wiki_pages, last_rids)
                        if page.get("ns", 0) % 2 == 0]
            prefix = directory / f"{wiki}-{date}-pages-articles-multistream"
            write_multistream_pages(_HEADER.format(v="0.11", dbname=wiki).encode(), articles,
                                    f"{prefix}.xml.bz2", f"{prefix}-index.txt.bz2", pages_per_stream=20)
        if wiki not in without_page_props:
            rows = [(p["page_id"], "wikibase_item", p["qid"].encode()) for p in wiki_pages if p.get("qid")]
            with _gzip_text(directory / f"{wiki}-{date}-page_props.sql.gz") as f:
                write_page_props_sql(f, rows, rows_per_insert=50)
        if dumpstatus:
            write_dumpstatus(directory, wiki, date)
    return expected_origins([p for p in pages if p["wiki"] not in without_page_props])


def _article_text(page: dict) -> str:
    if page.get("redirect"):
        return "#REDIRECT [[Elsewhere]]"
    first = min(when for when, _ in page["revisions"])[:4]
    return (f"'''{page['title']}''' is an article of {page['wiki']}, begun in {first}."
            f"<ref>{{{{Cite book|title=Sources of {page['title']}|year={first}}}}}</ref>\n\n"
            f"== References ==\n{{{{Reflist}}}}\n")


def _article_xml(page: dict, revision_id: int) -> bytes:
    when = page["revisions"][-1][0]  # the revision listed last in the stub: id ``revision_id``
    return page_xml(page["page_id"], page["title"], page.get("text") or _article_text(page),
                    ns=page.get("ns", 0), timestamp=when, revision_id=revision_id,
                    redirect="Elsewhere" if page.get("redirect") else None)


_JOBS = (("xmlstubsdump", "stub-meta-history"), ("pagepropstable", "page_props"),
         ("articlesmultistreamdump", "pages-articles-multistream"))


def write_dumpstatus(directory, wiki: str, date: str) -> None:
    """``dumpstatus.json`` for the files of one run directory, as the dump servers publish it:
    each job ``done`` with its files' size, sha1, md5 and URL path."""
    import hashlib
    import json
    from pathlib import Path

    jobs = {}
    for job, part in _JOBS:
        files = {}
        for path in sorted(Path(directory).glob(f"{wiki}-{date}-{part}*")):
            data = path.read_bytes()
            files[path.name] = {"size": len(data), "url": f"/{wiki}/{date}/{path.name}",
                                "sha1": hashlib.sha1(data).hexdigest(), "md5": hashlib.md5(data).hexdigest()}
        if files:
            jobs[job] = {"status": "done", "updated": f"{date[:4]}-{date[4:6]}-{date[6:]} 12:00:00",
                         "files": files}
    (Path(directory) / "dumpstatus.json").write_text(json.dumps({"jobs": jobs, "version": "0.8"}, indent=1) + "\n")


def entity_json(qid: str, labels: dict[str, str], aliases: dict[str, list[str]] | None = None,
                sitelinks: dict[str, str] | None = None) -> str:
    """One line of a Wikidata JSON dump: an item with its labels, aliases and sitelinks."""
    import json

    data = {
        "type": "item", "id": qid,
        "labels": {lang: {"language": lang, "value": v} for lang, v in labels.items()},
        "descriptions": {},
        "aliases": {lang: [{"language": lang, "value": v} for v in vs] for lang, vs in (aliases or {}).items()},
        "claims": {},
        "sitelinks": {site: {"site": site, "title": t, "badges": []} for site, t in (sitelinks or {}).items()},
    }
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def write_wikidata_json(root, lines: list[str], date: str = "20260801"):
    """``root/wikidatawiki/entities/DATE/wikidata-DATE-all.json.gz`` (one entity per line between
    ``[`` and ``]``, each line but the last ending with a comma, as Wikidata writes it) and its
    ``wikidata-DATE-md5sums.txt``. Returns the dump's path."""
    import hashlib
    from pathlib import Path

    directory = Path(root) / "wikidatawiki" / "entities" / date
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"wikidata-{date}-all.json.gz"
    with _gzip_text(path) as f:
        f.write("[\n" + ",\n".join(lines) + "\n]\n")
    digest = hashlib.md5(path.read_bytes()).hexdigest()
    (directory / f"wikidata-{date}-md5sums.txt").write_text(f"{digest}  {path.name}\n")
    return path


def expected_origins(pages: list[dict]) -> dict:
    """The origins the rules give for ``pages`` (namespace 0, no redirects, local revisions)."""
    editions: dict[str, dict[str, tuple]] = {}
    for page in pages:
        local = [when for when, user in page["revisions"] if ">" not in user]
        if page.get("ns", 0) != 0 or page.get("redirect") or not local or not page.get("qid"):
            continue
        created = min(local)
        per_wiki = editions.setdefault(page["qid"], {})
        old = per_wiki.get(page["wiki"])
        if old is None or (created, page["page_id"]) < old[:2]:
            per_wiki[page["wiki"]] = (created, page["page_id"], page["title"])
    answers = {}
    for qid, per_wiki in editions.items():
        ordered = sorted((created, wiki, pid, title) for wiki, (created, pid, title) in per_wiki.items())
        answers[qid] = {
            "origin_wiki": ordered[0][1],
            "origin_created_at": ordered[0][0],
            "n_wikis": len(ordered),
            "tied": len(ordered) > 1 and ordered[0][0] == ordered[1][0],
            "editions": [w for _, w, _, _ in ordered],
        }
    return answers


# --- multistream dumps ------------------------------------------------------------------------


def page_xml(page_id: int, title: str, text: str, ns: int = 0,
             timestamp: str = "2026-08-01T00:00:00Z", revision_id: int | None = None,
             redirect: str | None = None) -> bytes:
    """One ``<page>`` element of a pages-articles export (escaped as MediaWiki does);
    ``revision_id`` defaults to ten times the page id, ``redirect`` is the target's title."""
    import html as html_module

    body = html_module.escape(text, quote=True).replace("&#x27;", "'")
    target = f'    <redirect title="{html_module.escape(redirect)}" />\n' if redirect else ""
    return (f"  <page>\n    <title>{html_module.escape(title)}</title>\n    <ns>{ns}</ns>\n"
            f"    <id>{page_id}</id>\n{target}    <revision>\n"
            f"      <id>{revision_id if revision_id is not None else page_id * 10}</id>\n"
            f"      <timestamp>{timestamp}</timestamp>\n      <contributor>\n"
            f"        <username>wikiorigin</username>\n        <id>1</id>\n      </contributor>\n"
            f"      <model>wikitext</model>\n      <format>text/x-wiki</format>\n"
            f'      <text bytes="{len(text.encode())}" xml:space="preserve">{body}</text>\n'
            f"    </revision>\n  </page>\n").encode()


def write_multistream_pages(head: bytes, pages, dump_out, index_out, pages_per_stream: int = 100,
                            compresslevel: int = 9) -> int:
    """Write a multistream dump and its index, as Wikimedia makes them: ``head`` (through
    ``</siteinfo>``) in the first bzip2 stream, then ``pages_per_stream`` of ``pages`` (each a
    whole ``<page>`` element, bytes) per stream, then the footer; the index lists
    ``offset:page_id:title`` (bzip2). Returns the number of pages."""
    import bz2
    import html as html_module
    import re

    meta_re = re.compile(rb"<title>([^<]*)</title>\s*<ns>-?\d+</ns>\s*<id>(\d+)</id>")
    count, offset, group = 0, 0, []
    with open(dump_out, "wb") as out, bz2.open(index_out, "wt", encoding="utf-8") as index:

        def flush():
            nonlocal offset
            for page in group:
                m = meta_re.search(page)
                index.write(f"{offset}:{int(m.group(2))}:{html_module.unescape(m.group(1).decode())}\n")
            chunk = bz2.compress(b"".join(group), compresslevel)
            out.write(chunk)
            offset += len(chunk)
            group.clear()

        chunk = bz2.compress(head, compresslevel)
        out.write(chunk)
        offset += len(chunk)
        for page in pages:
            group.append(page)
            count += 1
            if len(group) == pages_per_stream:
                flush()
        if group:
            flush()
        out.write(bz2.compress(b"</mediawiki>\n", compresslevel))
    return count


def write_multistream(pages_xml, dump_out, index_out, pages_per_stream: int = 100,
                      compresslevel: int = 9, extra_pages: list[bytes] = ()) -> int:
    """Rewrite a pages-articles XML file as a multistream dump and its index (see
    :func:`write_multistream_pages`), ``extra_pages`` after its pages. Streams the source; a
    torn last page in it is left out. Returns the number of pages."""
    import re

    from .compression import open_dump

    page_re = re.compile(rb"  <page>.*?</page>\n", re.S)
    with open_dump(pages_xml) as stream:
        buf = b""
        while b"</siteinfo>" not in buf:
            more = stream.read(1 << 16)
            if not more:
                raise ValueError(f"{pages_xml}: no </siteinfo>")
            buf += more
        head_end = buf.index(b"</siteinfo>") + len(b"</siteinfo>\n")

        def pages(buf):
            while True:
                more = stream.read(1 << 22)
                buf += more
                last = 0
                for m in page_re.finditer(buf):
                    yield m.group(0)
                    last = m.end()
                buf = buf[last:]
                if not more:
                    break
            yield from extra_pages

        return write_multistream_pages(buf[:head_end], pages(buf[head_end:]), dump_out, index_out,
                                       pages_per_stream, compresslevel)


def write_articles_xml(out, target_bytes: int, *, seed: int = 0, dbname: str = "testwiki",
                       text_size: int = 2500) -> int:
    """A pages-articles export (one revision per page, wikitext with references and
    templates) of about ``target_bytes``, to the binary file ``out``. Returns the pages."""
    rng = random.Random(seed)
    out.write(_HEADER.format(v="0.10", dbname=dbname).encode())
    written, page_id = 0, 1
    while written < target_bytes:
        words = " ".join(rng.choices(_WORDS, k=text_size // 8))
        body = (f"{{{{Infobox|name={page_id}}}}}\n'''Article {page_id}''' {words[:200]}"
                f"&lt;ref name=&quot;a{page_id}&quot;&gt;{{{{Cite book|title=Book {page_id}"
                f"|year=2001}}}}&lt;/ref&gt;\n== Section ==\n{words[200:]}&lt;ref&gt;Note&lt;/ref&gt;\n"
                f"== References ==\n{{{{Reflist}}}}\n[[Category:Cat {page_id % 50}]]")
        page = (f"  <page>\n    <title>Article {page_id} &amp; {rng.choice(_WORDS)}</title>\n"
                f"    <ns>0</ns>\n    <id>{page_id}</id>\n    <revision>\n"
                f"      <id>{page_id * 10}</id>\n      <timestamp>{_ts(rng.randrange(700_000_000))}</timestamp>\n"
                f"      <contributor>\n        <username>U</username>\n        <id>1</id>\n"
                f"      </contributor>\n      <model>wikitext</model>\n      <format>text/x-wiki</format>\n"
                f'      <text bytes="{len(body)}" xml:space="preserve">{body}</text>\n'
                f"      <sha1>phoiac9h4m842xq45sp7s6u21eteeq1</sha1>\n    </revision>\n  </page>\n").encode()
        out.write(page)
        written += len(page)
        page_id += 1
    out.write(b"</mediawiki>\n")
    return page_id - 1
