"""Reading a stage's inputs: :func:`read_parquet` (one table, without importing pandas),
:func:`read_rows` (Parquet or JSON rows), a partial file refused (:data:`PARTIAL_KEY`,
:func:`partial_reason`, :func:`refuse_partial`), and a stage's input checked before any work
(:func:`input_schema`, :func:`read_input`). Moved out of ``files.py``; ``wikiorigin.files`` still
exports these names."""

from __future__ import annotations

import json
import lzma
from collections.abc import Iterable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from .errors import WikioriginError

__all__ = [
    "PARTIAL_KEY",
    "partial_reason",
    "refuse_partial",
    "read_parquet",
    "read_rows",
    "input_schema",
    "read_input",
    "first_repeat",
    "built_incomplete",
]

# The footer key of a file kept as the partial rows of a run that failed (ParquetSink's
# keep_partial): its value says why the run stopped. Renamed, such a file still says it.
PARTIAL_KEY = "wikiorigin.partial"


def partial_reason(path) -> str | None:
    """Why the Parquet file ``path`` holds only the rows kept before a failure, or None for a
    whole file (the footer's :data:`PARTIAL_KEY`, whatever the file is called now)."""
    value = (pq.read_metadata(path).metadata or {}).get(PARTIAL_KEY.encode())
    return value.decode(errors="replace") if value is not None else None


def refuse_partial(path, made_by: str) -> None:
    """A one-line error when ``path`` is a partial file (:func:`partial_reason`): the rows kept
    before a failure are no whole input; ``made_by`` is the command that makes a whole one."""
    why = partial_reason(path)
    if why is not None:
        first = why.splitlines()[0][:200]
        raise WikioriginError(
            f"{path}: the rows kept before a run failed ({first}), not a whole file; make a whole one with `{made_by}`"
        )


def read_parquet(path, columns: list[str] | None = None) -> pa.Table:
    """One Parquet file (the ``columns`` given, in their order; all: None), read as one table.
    Not ``pq.read_table``: that imports ``pyarrow.dataset``, and with it pandas (a fifth of a
    second of start-up). A file whose columns share a name is refused, as ``pq.read_table``
    refuses it (one line naming the file): which of them a stage reads would be a guess."""
    with pq.ParquetFile(path) as file:
        names = file.schema_arrow.names
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise WikioriginError(
                f"{path}: cannot be read (ArrowInvalid: more than one column named "
                f"{', '.join(map(repr, twice))}): a damaged file, or not one this command reads"
            )
        return file.read(columns=columns)


def read_rows(path, columns: list[str] | None = None) -> list[dict]:
    """Rows of a Parquet file or of a JSON file (``.json`` or ``.json.xz``) holding a list of
    objects (a ``{"data": [...]}`` wrapper is opened); a missing file, bad JSON or other shapes
    are errors naming the file."""
    path = Path(path)
    if not path.exists():
        raise WikioriginError(f"{path}: no such file")
    if path.suffix == ".parquet":
        names = pq.read_schema(path).names
        return read_parquet(path, columns=[c for c in columns if c in names] if columns else None).to_pylist()
    opener = lzma.open if path.suffix == ".xz" else open  # released files come xz-compressed too
    try:
        with opener(path, "rt", encoding="utf-8") as f:
            rows = json.load(f)
    except (json.JSONDecodeError, UnicodeDecodeError, lzma.LZMAError, EOFError) as exc:
        raise WikioriginError(f"{path}: not JSON ({str(exc).splitlines()[0]})") from None
    if isinstance(rows, dict):
        rows = rows.get("data") or rows.get("rows") or [rows]
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise WikioriginError(f"{path}: expected a list of objects")
    return rows


def _first_value(path, name: str) -> str:
    """``row N: value`` of a column's first value that is not null (for an error), short."""
    column = read_parquet(path, columns=[name]).column(0)
    for i, value in enumerate(column.to_pylist()):
        if value is not None:
            text = repr(value)
            return f"row {i}: {text[:40]}{'...' if len(text) > 40 else ''}"
    return "every row null"


def input_schema(path, needs: Iterable[str], made_by: str, optional: Iterable[str] = ()) -> pa.Schema:
    """The schema of a stage's input Parquet file, checked before any work: it exists, is
    Parquet, and has the columns the stage ``needs``, each of the kind of type that
    :data:`wikiorigin.schemas.COLUMN_TYPES` gives its name (``large_string`` for ``string``,
    ``int32`` for ``int64``, never bytes for text nor text for a number: the rule of
    :func:`wikiorigin.schemas.column_mismatch`), as are the ``optional`` columns it reads where
    the file has them; else a one-line error naming the file, the column (for a wrong type, the
    first row and its value) and the command that makes such a file (``made_by``)."""
    from .schemas import column_mismatch

    path = Path(path)
    needs = list(needs)
    if not path.exists():
        raise WikioriginError(f"{path}: no such file (make one with `{made_by}`)")
    if path.is_dir():
        raise WikioriginError(f"{path}: a directory, not a Parquet file made by `{made_by}`")
    try:
        schema = pq.read_schema(path)
    except (pa.ArrowInvalid, OSError) as exc:
        raise WikioriginError(
            f"{path}: not a Parquet file ({str(exc).splitlines()[0]}); expected the output of `{made_by}`"
        ) from None
    refuse_partial(path, made_by)
    missing = [c for c in needs if c not in schema.names]
    if missing:
        raise WikioriginError(f"{path}: not the output of `{made_by}`: no column {', '.join(missing)}")
    for name in needs + [c for c in optional if c in schema.names]:
        wrong = column_mismatch(name, schema.field(name).type)
        if wrong:
            raise WikioriginError(f"{path}: column {wrong} ({_first_value(path, name)}): not the output of `{made_by}`")
    return schema


def read_input(
    path, needs: Iterable[str], made_by: str, columns: list[str] | None = None, optional: Iterable[str] = ()
) -> pa.Table:
    """A stage's input Parquet file, checked by :func:`input_schema`, read; a column the stage
    ``needs`` that must be on every row (:data:`wikiorigin.schemas.NOT_NULL`: ``title``,
    ``text``, ``page_id``, ``qid``, ``question``, ...) and is null on one is a one-line error
    naming the file, the first such row and how many there are: before any work is paid for.
    ``optional``: columns read where present, type-checked only."""
    from .schemas import NOT_NULL

    needs = list(needs)
    input_schema(path, needs, made_by, optional)
    table = read_parquet(path, columns=columns)
    for name in needs:
        if name not in NOT_NULL or name not in table.column_names:
            continue
        column = table.column(name)
        if column.null_count:
            first = column.is_null().to_pylist().index(True)
            more = f" ({column.null_count} rows in all)" if column.null_count > 1 else ""
            raise WikioriginError(
                f"{path}: row {first}: {name} is null{more}; the stage needs one on every "
                f"row (the output of `{made_by}` has it)"
            )
    return table


def first_repeat(keys: Iterable) -> tuple[int, int] | None:
    """The first key given again, as (its row, the row it was first given at), or None: an item
    twice in an input would count twice in what is made of it."""
    seen: dict = {}
    for row, key in enumerate(keys):
        first = seen.setdefault(key, row)
        if first != row:
            return row, first
    return None


def built_incomplete(path) -> dict:
    """``{"complete": False, "failed_requests": N}`` when the Parquet set at ``path`` says its
    build was accepted incomplete (requests failed: ``--allow-failures``), else ``{}``."""
    path = Path(path)
    if path.suffix != ".parquet":
        return {}
    from .files import read_provenance

    try:
        built = read_provenance(path)
    except (OSError, ValueError, pa.ArrowInvalid):
        return {}
    if built.get("complete") is not False:
        return {}
    return {"complete": False, "failed_requests": built.get("failed_requests")}
