"""Page creation from the MediaWiki history dumps (``other/mediawiki_history/YYYY-MM/<wiki>/``).

These monthly TSV dumps (bz2, no header line) denormalize every revision, page and user event
of a wiki. Each page event carries ``page_creation_timestamp`` (the page's creation on this
wiki: imported revisions are marked ``revision_is_from_before_page_creation`` and do not count)
and ``page_first_edit_timestamp`` (its earliest revision, imported ones included). They survive
the deprecation of the stub dumps.

Column order (wikitech, "MediaWiki history dumps"): the 2025 layout has 74 fields (it added
``event_user_is_temporary``/``_is_permanent`` and ``user_is_temporary``/``_is_permanent``);
earlier dumps have 70. Both are read; the layout is told by the number of fields.

One ``pages`` row per page, from its ``page``/``create`` event (the first seen wins). Revision
counts are not in page events: ``revisions``, ``imported_revisions`` and
``created_revision_id`` are null for this source.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import pyarrow as pa
import pyarrow.compute as pc

from ..errors import DumpError
from ..schemas import PAGE_COLUMNS, TIMESTAMP
from .compression import open_dump

__all__ = ["HISTORY_FIELDS", "OLD_HISTORY_FIELDS", "history_batches"]

HISTORY_FIELDS = (
    "wiki_db",
    "event_entity",
    "event_type",
    "event_timestamp",
    "event_comment",
    "event_user_id",
    "event_user_text_historical",
    "event_user_text",
    "event_user_blocks_historical",
    "event_user_blocks",
    "event_user_groups_historical",
    "event_user_groups",
    "event_user_is_bot_by_historical",
    "event_user_is_bot_by",
    "event_user_is_created_by_self",
    "event_user_is_created_by_system",
    "event_user_is_created_by_peer",
    "event_user_is_anonymous",
    "event_user_is_temporary",
    "event_user_is_permanent",
    "event_user_registration_timestamp",
    "event_user_creation_timestamp",
    "event_user_first_edit_timestamp",
    "event_user_revision_count",
    "event_user_seconds_since_previous_revision",
    "page_id",
    "page_title_historical",
    "page_title",
    "page_namespace_historical",
    "page_namespace_is_content_historical",
    "page_namespace",
    "page_namespace_is_content",
    "page_is_redirect",
    "page_is_deleted",
    "page_creation_timestamp",
    "page_first_edit_timestamp",
    "page_revision_count",
    "page_seconds_since_previous_revision",
    "user_id",
    "user_text_historical",
    "user_text",
    "user_blocks_historical",
    "user_blocks",
    "user_groups_historical",
    "user_groups",
    "user_is_bot_by_historical",
    "user_is_bot_by",
    "user_is_created_by_self",
    "user_is_created_by_system",
    "user_is_created_by_peer",
    "user_is_anonymous",
    "user_is_temporary",
    "user_is_permanent",
    "user_registration_timestamp",
    "user_creation_timestamp",
    "user_first_edit_timestamp",
    "revision_id",
    "revision_parent_id",
    "revision_minor_edit",
    "revision_deleted_parts",
    "revision_deleted_parts_are_suppressed",
    "revision_text_bytes",
    "revision_text_bytes_diff",
    "revision_text_sha1",
    "revision_content_model",
    "revision_content_format",
    "revision_is_deleted_by_page_deletion",
    "revision_deleted_by_page_deletion_timestamp",
    "revision_is_identity_reverted",
    "revision_first_identity_reverting_revision_id",
    "revision_seconds_to_identity_revert",
    "revision_is_identity_revert",
    "revision_is_from_before_page_creation",
    "revision_tags",
)
"""The 74 tab-separated fields of a MediaWiki history TSV line (the 2025 layout), in order."""
# The 70 fields of the dumps before 2025: the 2025 layout less four user fields.
OLD_HISTORY_FIELDS = tuple(
    f
    for f in HISTORY_FIELDS
    if f
    not in {
        "event_user_is_temporary",
        "event_user_is_permanent",
        "user_is_temporary",
        "user_is_permanent",
    }
)
"""The 70 fields of the dumps before 2025: :data:`HISTORY_FIELDS` less four user fields."""
_LAYOUTS = {len(HISTORY_FIELDS): HISTORY_FIELDS, len(OLD_HISTORY_FIELDS): OLD_HISTORY_FIELDS}
_WANTED = (
    "page_id",
    "page_title",
    "page_namespace",
    "page_is_redirect",
    "page_creation_timestamp",
    "page_first_edit_timestamp",
)


def _positions(n_fields: int, path, line_no: int) -> list[int]:
    layout = _LAYOUTS.get(n_fields)
    if layout is None:
        raise DumpError(
            f"{path}: line {line_no}: {n_fields} tab-separated fields; a MediaWiki history "
            f"dump line has {' or '.join(str(n) for n in sorted(_LAYOUTS))}"
        )
    return [layout.index(name) for name in _WANTED]


def _timestamps(values: list[str | None]) -> pa.Array:
    arr = pa.array([v[:19] if v else None for v in values], pa.string())
    return pc.strptime(arr, format="%Y-%m-%d %H:%M:%S", unit="s").cast(TIMESTAMP)


def history_batches(
    paths: Iterable, namespaces: Iterable[int] | None = None, batch_rows: int = 100_000
) -> Iterator[pa.RecordBatch]:
    """``pages`` rows (without ``wiki``) from the page-create events of history TSV files."""
    wanted = None if namespaces is None else frozenset(namespaces)
    seen: set[int] = set()
    rows: list[tuple] = []
    for path in paths:
        with open_dump(path) as stream:
            for line_no, line in enumerate(_whole_lines(stream, path), 1):
                if not line.startswith(b"\tpage\tcreate\t", line.find(b"\t")):
                    continue
                fields = line.rstrip(b"\r\n").split(b"\t")
                pos = _positions(len(fields), path, line_no)
                row = [fields[i].decode("utf-8") or None for i in pos]
                try:
                    page_id, ns = int(row[0] or ""), int(row[2] or "")
                except ValueError:
                    raise DumpError(f"{path}: line {line_no}: bad page_id or namespace") from None
                if page_id in seen or (wanted is not None and ns not in wanted):
                    continue
                seen.add(page_id)
                rows.append((page_id, ns, row[1], row[3] == "true", row[4], row[5]))
                if len(rows) >= batch_rows:
                    yield _batch(rows, path)
                    rows = []
    if rows:
        yield _batch(rows, path)


def _whole_lines(stream, path, block: int = 1 << 22) -> Iterator[bytes]:
    """The lines of ``stream`` (without the newline); a last line without one is a file cut
    short (every line of a dump ends with one): a :class:`~wikiorigin.errors.DumpError`."""
    rest, n = b"", 0
    while chunk := stream.read(block):
        lines = (rest + chunk).split(b"\n")
        rest = lines.pop()
        n += len(lines)
        yield from lines
    if rest:
        raise DumpError(f"{path}: line {n + 1}: the file ends mid-line: cut short")


def _batch(rows: list[tuple], path) -> pa.RecordBatch:
    ids, nss, named, redirects, created, first = zip(*rows)
    try:
        created_at, first_at = _timestamps(list(created)), _timestamps(list(first))
    except pa.ArrowInvalid as exc:
        raise DumpError(f"{path}: malformed timestamp in a page event: {exc}") from None
    titles = [t.replace("_", " ") if t else t for t in named]
    n = len(rows)
    return pa.RecordBatch.from_arrays(
        [
            pa.array(ids, pa.int64()),
            pa.array(nss, pa.int32()),
            pa.array(titles, pa.string()),
            pa.array(redirects, pa.bool_()),
            created_at,
            first_at,
            pa.nulls(n, pa.int64()),
            pa.nulls(n, pa.int32()),
            pa.nulls(n, pa.int32()),
        ],
        schema=PAGE_COLUMNS,
    )
