"""Synthetic MediaWiki history TSV dumps, as :mod:`wikiorigin.dumps.history` reads them."""

from __future__ import annotations

from collections.abc import Iterable

from ..dumps.creation import PageCreation
from ..dumps.history import HISTORY_FIELDS, OLD_HISTORY_FIELDS

__all__ = ["write_history_tsv"]


def _hive(when) -> str:
    return when.strftime("%Y-%m-%d %H:%M:%S.0") if when else ""


def write_history_tsv(out, records: Iterable[PageCreation], wiki: str = "testwiki", old_layout: bool = False) -> None:
    """Write MediaWiki-history TSV lines (text file ``out``) for ``records``.

    Each page gets one ``revision``/``create`` event per revision, then a ``page``/``create``
    event; the answers are the records themselves (counts aside, which page events lack).
    ``old_layout`` writes the 70 fields of the dumps before 2025, else the 74 of today's.
    """
    fields = OLD_HISTORY_FIELDS if old_layout else HISTORY_FIELDS

    def line(**values) -> str:
        return "\t".join(str(values.get(f, "")) for f in fields) + "\n"

    for r in records:
        page = dict(
            wiki_db=wiki,
            page_id=r.page_id,
            page_title=r.title.replace(" ", "_"),
            page_title_historical=r.title.replace(" ", "_"),
            page_namespace=r.namespace,
            page_namespace_historical=r.namespace,
            page_is_redirect="true" if r.is_redirect else "false",
            page_is_deleted="false",
            page_creation_timestamp=_hive(r.created_at or r.first_revision_at),
            page_first_edit_timestamp=_hive(r.first_revision_at),
        )
        for i in range(r.revisions):
            out.write(
                line(
                    event_entity="revision",
                    event_type="create",
                    event_timestamp=_hive(r.first_revision_at),
                    revision_id=i + 1,
                    **page,
                )
            )
        out.write(
            line(
                event_entity="page",
                event_type="create",
                event_timestamp=_hive(r.created_at),
                event_comment="tab\\tin comment",
                **page,
            )
        )
