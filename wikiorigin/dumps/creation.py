"""The records of the page-creation scan, and its rule for imported revisions.

:class:`PageCreation` is one page and when it was created on this wiki; :class:`ScanStats`
counts what a scan saw. The scan engines (:mod:`wikiorigin.dumps.stubs`) summarize the
revisions of a page, or of a piece of a page larger than a block, as a :class:`Summary`;
summaries of consecutive pieces combine with :func:`merge`.
"""

from dataclasses import dataclass, field
from datetime import datetime
from typing import NamedTuple

__all__ = ["PageCreation", "ScanStats", "Earliest", "Summary", "EMPTY", "merge", "is_imported"]

# The rule of an imported revision: its contributor's <username> holds ">" (written "&gt;"
# in the XML: "en>Foo", "imported>Foo"); it is counted, and its timestamp sets the earliest
# time of all revisions, never the creation. The same rule is written in four places, which
# must change together: the compiled core (_scanblock.c, contributor_is_imported), the
# pure-Python path (is_imported below, used by _pyscan.py), the mwxml oracle
# (oracle._mwxml_record) and the generator of test dumps (wikiorigin/testing/stubs.py,
# _contributor and the expected records).


def is_imported(user: bytes) -> bool:
    """Whether a contributor name (raw XML text) marks an imported revision (see above)."""
    return b">" in user or b"&gt;" in user


@dataclass(slots=True)
class PageCreation:
    """One page and when it was created (times are UTC ``datetime``s)."""

    page_id: int
    namespace: int
    title: str
    is_redirect: bool
    created_at: datetime | None
    first_revision_at: datetime | None
    created_revision_id: int | None
    revisions: int
    imported_revisions: int


@dataclass(slots=True)
class ScanStats:
    """Counters of one scan; stats of the parts of a dump add with ``+``."""

    pages: int = 0
    revisions: int = 0
    imported_revisions: int = 0
    bytes: int = 0
    torn_pages: int = 0
    broken_pages: int = 0  # left out for a structural break (see StubScanner)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    cut: list[str] = field(default_factory=list)  # the notes of files that end before their end

    def __add__(self, other: "ScanStats") -> "ScanStats":
        return ScanStats(
            pages=self.pages + other.pages,
            revisions=self.revisions + other.revisions,
            imported_revisions=self.imported_revisions + other.imported_revisions,
            bytes=self.bytes + other.bytes,
            torn_pages=self.torn_pages + other.torn_pages,
            broken_pages=self.broken_pages + other.broken_pages,
            notes=self.notes + other.notes,
            seconds=self.seconds + other.seconds,
            cut=self.cut + other.cut,
        )


class Earliest(NamedTuple):
    """A revision's id and timestamp, as the bytes of the dump (ISO timestamps order as
    times do)."""

    revision_id: bytes
    timestamp: bytes


class Summary(NamedTuple):
    """The revisions of a page, or of a piece of one: how many, how many imported, the
    earliest of all and the earliest local (not imported) one."""

    revisions: int
    imported: int
    first_all: Earliest | None
    first_local: Earliest | None


EMPTY = Summary(0, 0, None, None)
"""The summary of no revisions."""


def _first(a: Earliest | None, b: Earliest | None) -> Earliest | None:
    """The earlier of two revisions; on a tie the one met first in the file (``a``)."""
    if a is None:
        return b
    if b is None or a.timestamp <= b.timestamp:
        return a
    return b


def merge(a: Summary, b: Summary) -> Summary:
    """Combine the summaries of two consecutive pieces of one page."""
    return Summary(
        a.revisions + b.revisions,
        a.imported + b.imported,
        _first(a.first_all, b.first_all),
        _first(a.first_local, b.first_local),
    )
