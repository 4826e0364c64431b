"""Multi-wiki dump trees in the Wikimedia layout, with the origins they encode.

:func:`write_origin_tree` writes, per wiki, a stub-meta-history and a ``page_props`` dump
from page specs, optionally the pages-articles multistream dump and its index (the same page
ids and titles as the stubs) and the ``dumpstatus.json`` a mirror serves
(:func:`write_dumpstatus`). :func:`expected_origins` gives the answers by the rules, computed
here independently of :mod:`wikiorigin.origin`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path

from . import xml
from .files import gzip_text
from .multistream import write_multistream_pages
from .pages import page_xml
from .sql import write_page_props_sql

__all__ = ["write_origin_tree", "expected_origins", "write_dumpstatus"]

_JOBS = (
    ("xmlstubsdump", "stub-meta-history"),
    ("pagepropstable", "page_props"),
    ("articlesmultistreamdump", "pages-articles-multistream"),
)
_FIRST_REVISION_ID = 1000


def _stub_page(page: dict, rid: int) -> tuple[str, int]:
    """One <page> of a stub-meta-history from a spec, its revisions numbered from ``rid``;
    returns it and the next revision id."""
    revisions = []
    for when, user in page["revisions"]:
        revisions.append(xml.revision(rid, when, xml.contributor(user, 7), xml.text_stub(rid, 10)))
        rid += 1
    redirect = "Elsewhere" if page.get("redirect") else None
    return xml.page(page["title"], page.get("ns", 0), page["page_id"], revisions, redirect=redirect), rid


def _article_text(page: dict) -> str:
    if page.get("redirect"):
        return "#REDIRECT [[Elsewhere]]"
    first = min(when for when, _ in page["revisions"])[:4]
    return (
        f"'''{page['title']}''' is an article of {page['wiki']}, begun in {first}."
        f"<ref>{{{{Cite book|title=Sources of {page['title']}|year={first}}}}}</ref>\n\n"
        f"== References ==\n{{{{Reflist}}}}\n"
    )


def _article_xml(page: dict, revision_id: int) -> bytes:
    when = page["revisions"][-1][0]  # the revision listed last in the stub: id ``revision_id``
    return page_xml(
        page["page_id"],
        page["title"],
        page.get("text") or _article_text(page),
        ns=page.get("ns", 0),
        timestamp=when,
        revision_id=revision_id,
        redirect="Elsewhere" if page.get("redirect") else None,
    )


def _write_wiki(directory: Path, wiki: str, date: str, pages: list[dict], page_props: bool, multistream: bool) -> None:
    """One wiki's run directory: its stub, and its page_props and multistream if asked."""
    body, rid, last_rids = [], _FIRST_REVISION_ID, []
    for page in pages:
        stub, rid = _stub_page(page, rid)
        body.append(stub)
        last_rids.append(rid - 1)
    with gzip_text(directory / f"{wiki}-{date}-stub-meta-history.xml.gz") as f:
        f.write(xml.header(wiki, "0.11") + "".join(body) + xml.FOOTER)
    if multistream:
        articles = [
            _article_xml(page, last_rid) for page, last_rid in zip(pages, last_rids) if page.get("ns", 0) % 2 == 0
        ]
        prefix = directory / f"{wiki}-{date}-pages-articles-multistream"
        write_multistream_pages(
            xml.header(wiki, "0.11").encode(),
            articles,
            f"{prefix}.xml.bz2",
            f"{prefix}-index.txt.bz2",
            pages_per_stream=20,
        )
    if page_props:
        rows = [(p["page_id"], "wikibase_item", p["qid"].encode()) for p in pages if p.get("qid")]
        with gzip_text(directory / f"{wiki}-{date}-page_props.sql.gz") as f:
            write_page_props_sql(f, rows, rows_per_insert=50)


def write_origin_tree(
    root,
    pages: list[dict],
    date: str = "20260801",
    without_page_props: Iterable[str] = (),
    multistream: bool = False,
    dumpstatus: bool = False,
) -> dict:
    """Write a Wikimedia-layout tree of stub-meta-history and page_props files for ``pages``.

    Each page is ``{"wiki", "page_id", "title", "qid", "revisions": [(ISO time, user)], "ns",
    "redirect", "text"}``; a user with ``>`` is an imported revision. The wikis in
    ``without_page_props`` get no page_props dump. With ``multistream``, each wiki also gets its
    ``pages-articles-multistream.xml.bz2`` and index: the pages of the stubs that a
    pages-articles dump holds (no talk namespaces), with their last revision (same id and time
    as in the stub) and ``text`` (default: a short article with one footnote); a redirect keeps
    its ``<redirect>``. With ``dumpstatus``, each run directory gets the ``dumpstatus.json`` a
    mirror publishes (jobs done, sizes, sha1 and md5 of every file). Returns the expected
    origins (see :func:`expected_origins`) of the wikis that have page_props.
    """
    by_wiki: dict[str, list[dict]] = {}
    for page in pages:
        by_wiki.setdefault(page["wiki"], []).append(page)
    for wiki, wiki_pages in by_wiki.items():
        directory = Path(root) / wiki / date
        directory.mkdir(parents=True, exist_ok=True)
        _write_wiki(
            directory,
            wiki,
            date,
            sorted(wiki_pages, key=lambda p: p["page_id"]),
            wiki not in without_page_props,
            multistream,
        )
        if dumpstatus:
            write_dumpstatus(directory, wiki, date)
    return expected_origins([p for p in pages if p["wiki"] not in without_page_props])


def expected_origins(pages: list[dict]) -> dict:
    """The origins the rules give for ``pages`` (namespace 0, no redirects, local revisions):
    qid -> dict of origin_wiki, origin_created_at, n_wikis, tied, editions (wikis by time)."""
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


def write_dumpstatus(directory, wiki: str, date: str) -> None:
    """``dumpstatus.json`` for the files of one run directory, as the dump servers publish it:
    each job ``done`` with its files' size, sha1, md5 and URL path."""
    jobs = {}
    for job, part in _JOBS:
        files = {}
        for path in sorted(Path(directory).glob(f"{wiki}-{date}-{part}*")):
            data = path.read_bytes()
            files[path.name] = {
                "size": len(data),
                "url": f"/{wiki}/{date}/{path.name}",
                "sha1": hashlib.sha1(data).hexdigest(),
                "md5": hashlib.md5(data).hexdigest(),
            }
        if files:
            jobs[job] = {"status": "done", "updated": f"{date[:4]}-{date[4:6]}-{date[6:]} 12:00:00", "files": files}
    (Path(directory) / "dumpstatus.json").write_text(json.dumps({"jobs": jobs, "version": "0.8"}, indent=1) + "\n")
