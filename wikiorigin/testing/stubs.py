"""Random stub-meta-history and pages-meta-history exports, and the records a scan must give.

:func:`write_history_xml` writes an export of any size with the traps of real dumps: imported
revisions (old timestamps, ``imported>`` / ``en>`` contributors, listed in id order before or
after the local ones), pages whose every revision is imported, IP and suppressed
contributors, redirects and escaped titles. It yields the :class:`PageCreation` records that
:mod:`wikiorigin.dumps.stubs` must produce from it.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

from ..dumps.creation import PageCreation
from . import xml

__all__ = ["write_history_xml"]

_PREFIX = {0: "", 1: "Talk:", 2: "User:", 10: "Template:"}


def _contributor(rng: random.Random, imported: bool) -> str:
    r = rng.random()
    if imported:  # the imported-revision rule (see wikiorigin/dumps/creation.py): ">" in the name
        prefix = rng.choice(("imported>", "en>", "de>"))
        return xml.contributor(f"{prefix}User{rng.randrange(999)}")
    if r < 0.05:
        return xml.contributor()
    if r < 0.25:
        return xml.contributor(ip=f"10.{rng.randrange(256)}.{rng.randrange(256)}.1")
    uid = rng.randrange(1, 10**6)
    return xml.contributor(f"Editor {uid} & co", uid)


def _comment(rng: random.Random, i: int) -> str:
    if rng.random() < 0.03:
        return f"revert > {i} <b>"
    return f"/* Section {i} */ copy-edit & links"


def _text(rng: random.Random, rid: int, with_text: bool, size: int) -> str:
    if not with_text:
        return xml.text_stub(rid, size, location=f"tt:{rid}")
    body = " ".join(rng.choices(xml.WORDS, k=size // 8))
    body = f"<ref>{body[:40]}</ref> '''{body}''' [[Link|x]] {{{{Infobox|a=b}}}}"
    return xml.text(body, size=len(xml.escape(body)))  # the escaped length, as it always was here


def _revision_times(rng: random.Random) -> tuple[list[tuple[int, bool]], int]:
    """(seconds, imported) of a page's revisions in id order, and how many are imported."""
    n_local = 1 + min(int(rng.expovariate(0.25)), 60)
    n_imported = rng.choice((1, 2, 4)) if rng.random() < 0.05 else 0
    if rng.random() < 0.01:  # every revision imported: no local creation
        n_local = 0
        n_imported = max(n_imported, 1)
    start = rng.randrange(0, 700_000_000)
    local_ts = sorted(start + rng.randrange(0, 50_000_000) for _ in range(n_local))
    imported_ts = sorted(rng.randrange(0, max(1, start)) for _ in range(n_imported))
    # Imported revisions get ids after (usually) or before the local ones: id order != time order.
    local = [(t, False) for t in local_ts]
    imported = [(t, True) for t in imported_ts]
    return (imported + local if rng.random() < 0.3 else local + imported), n_imported


def _page(rng, pid, rid, version, with_text, text_size) -> tuple[str, PageCreation, int]:
    ns = rng.choices((0, 1, 2, 10), (70, 15, 10, 5))[0]
    title = f'{_PREFIX[ns]}{rng.choice(xml.WORDS)} & "{pid}"'
    redirect = ns == 0 and rng.random() < 0.15
    kinds, n_imported = _revision_times(rng)
    target = rng.choice(xml.WORDS) if redirect else None
    first_rid = rid
    best: dict[bool, tuple[int, int] | None] = {False: None, True: None}  # imported: (time, id)
    revisions = []
    for i, (t, imported) in enumerate(kinds):
        who = _contributor(rng, imported)
        comment = _comment(rng, i)
        content = _text(rng, rid, with_text, text_size)
        revisions.append(
            xml.revision(
                rid,
                xml.iso(t),
                who,
                content,
                parent_id=rid - 1 if i else None,
                comment=comment,
                origin=rid if version == "0.11" else None,
            )
        )
        prev = best[imported]
        if prev is None or t < prev[0]:
            best[imported] = (t, rid)
        rid += 1
    local, imp = best[False], best[True]
    earliest = min((b for b in (local, imp) if b), key=lambda b: (b[0], b[1] - first_rid))
    record = PageCreation(
        page_id=pid,
        namespace=ns,
        title=title,
        is_redirect=redirect,
        created_at=xml.at(local[0]) if local else None,
        first_revision_at=xml.at(earliest[0]),
        created_revision_id=local[1] if local else None,
        revisions=len(kinds),
        imported_revisions=n_imported,
    )
    return xml.page(title, ns, pid, revisions, redirect=target), record, rid


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

    A stub-meta-history (no text), or with ``with_text`` a pages-meta-history whose revisions
    hold about ``text_size`` characters of wikitext; export schema ``version`` (``0.11`` adds
    ``<origin>``). Iterate the result to completion to write the whole file. ``close=False``
    leaves the document without ``</mediawiki>`` (a torn file is then made by cutting its bytes).
    """
    rng = random.Random(seed)
    written = 0
    out.write(xml.header(dbname, version).encode())
    pid, rid = first_page_id, first_page_id * 10
    while written < target_bytes:
        page, record, rid = _page(rng, pid, rid, version, with_text, text_size)
        data = page.encode()
        out.write(data)
        written += len(data)
        pid += rng.randrange(1, 4)
        yield record
    if close:
        out.write(xml.FOOTER.encode())
