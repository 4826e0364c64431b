"""Parquet files as the interface between stages: atomic, zstd, with provenance.

Every file the tool writes is written under a temporary name beside its final one, flushed to
disk (fsync) and renamed when complete (:class:`ParquetSink`, :func:`atomic`, :func:`write_text`,
:func:`write_together`), so a crash or a full disk never leaves a half file under the final
name, nor destroys the good file that was there before. Provenance (wikiorigin version, inputs,
parameters) goes into the schema metadata under the key ``wikiorigin``, as JSON.
"""

from __future__ import annotations

import hashlib
import json
import lzma
import os
from collections.abc import Iterable
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from . import __version__
from .errors import WikioriginError

__all__ = [
    "ParquetSink",
    "write_table",
    "atomic",
    "write_text",
    "write_together",
    "write_all",
    "temporary_name",
    "read_provenance",
    "schema_provenance",
    "provenance",
    "read_rows",
    "read_parquet",
    "arrow_table",
    "input_schema",
    "read_input",
    "check_output",
]

_KEY = b"wikiorigin"


def provenance(**fields) -> dict:
    """A provenance record: the package version plus what the caller says."""
    return {"version": __version__, **fields}


def _with_metadata(schema: pa.Schema, meta: dict) -> pa.Schema:
    old = dict(schema.metadata or {})
    old[_KEY] = json.dumps(meta, ensure_ascii=False, sort_keys=True, default=str).encode()
    return schema.with_metadata(old)


def temporary_name(path) -> Path:
    """The temporary file beside ``path`` that becomes it (hidden, with this process's id and
    ``path``'s suffix, for writers that choose the format by it); a name too long to take the
    additions (file names are 255 bytes at most) is hashed instead."""
    path = Path(path)
    name = f".{path.name}.{os.getpid()}.tmp{path.suffix}"  # the suffix kept: writers that go by it
    if len(name.encode()) > 255:
        name = f".{hashlib.sha1(path.name.encode()).hexdigest()[:20]}.{os.getpid()}.tmp{path.suffix[:16]}"
    return path.with_name(name)


@contextmanager
def _naming(path: Path, tmp: Path):
    """An OSError while ``tmp`` is written for ``path`` that names no file (pyarrow's, a full
    disk's or a file-size limit's ``EFBIG``), or the temporary one, names ``path``."""
    try:
        yield
    except OSError as exc:
        if exc.filename not in (None, str(tmp)):
            raise
        reason = os.strerror(exc.errno) if exc.errno else str(exc)
        raise OSError(exc.errno, reason, str(path)) from exc


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextmanager
def atomic(path):
    """``with atomic(path) as tmp:`` write ``tmp`` (any way: a plot, a text); when the block
    ends without an exception the file is flushed to disk and renamed to ``path``; otherwise
    it is removed and what was at ``path`` before is left as it was."""
    path = Path(path)
    tmp = temporary_name(path)
    try:
        with _naming(path, tmp):
            yield tmp
            _fsync(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_text(path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically (:func:`atomic`); returns ``path``."""
    with atomic(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(path)


def write_together(outputs: list[tuple]) -> None:
    """Write several Parquet files as one: ``outputs`` are ``(path, table, schema, meta)``.
    Every file is written in full under its temporary name first (where a full disk or an
    error stops it, nothing is renamed: all the old files stay); only then are they renamed,
    which takes no space."""
    done: list[tuple[Path, Path]] = []
    try:
        for path, table, schema, meta in outputs:
            sink = ParquetSink(path, schema, meta, rename=False)
            with sink:
                sink.write(table)
            done.append((sink._tmp, Path(path)))
        for tmp, path in done:
            os.replace(tmp, path)
    finally:
        for tmp, _ in done:
            tmp.unlink(missing_ok=True)


def write_all(writers: list[tuple]) -> None:
    """Write several files of any kind as one: ``writers`` are ``(path, write)`` pairs, where
    ``write(tmp)`` writes the file (a table, a text, a plot) at the temporary name it is given.
    Every file is written in full and flushed first (where a full disk or an error stops one,
    the temporary files are removed and all the old files stay as they were); only then are
    they renamed, which takes no space. An error that names no file names the file it was
    writing."""
    done: list[tuple[Path, Path]] = []
    try:
        for path, write in writers:
            path = Path(path)
            tmp = temporary_name(path)
            done.append((tmp, path))
            with _naming(path, tmp):
                write(tmp)
                _fsync(tmp)
        for tmp, path in done:
            os.replace(tmp, path)
    finally:
        for tmp, _ in done:
            tmp.unlink(missing_ok=True)


class ParquetSink:
    """Write record batches to ``path`` atomically; use as a context manager.

    On an exception inside the ``with`` block nothing is left under ``path`` (the temporary
    file is removed, or kept as ``keep_partial`` when given, so that what was done is not lost).
    The file is flushed to disk before it is renamed; ``rename=False`` leaves it complete under
    its temporary name (:func:`write_together` renames a set of files at once). ``dictionary``:
    the columns to dictionary-encode (pyarrow's ``use_dictionary``; all by default), for a writer
    of many unique numbers, whose dictionaries would cost time and save no space.
    """

    def __init__(
        self,
        path,
        schema: pa.Schema,
        meta: dict,
        keep_partial=None,
        row_group_rows: int = 1 << 20,
        rename: bool = True,
        dictionary: bool | list[str] = True,
    ):
        self.path = Path(path)
        self.row_group_rows = row_group_rows
        self._pending: list[pa.Table] = []
        self._pending_rows = 0
        self.schema = _with_metadata(schema, meta)
        self.keep_partial = Path(keep_partial) if keep_partial else None
        self.rows = 0
        self._tmp = temporary_name(self.path)
        self._rename = rename  # False: left complete under its temporary name (write_together)
        self._writer: pq.ParquetWriter | None = None
        self._dictionary = dictionary

    def __enter__(self) -> ParquetSink:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            with _naming(self.path, self._tmp):
                self._writer = pq.ParquetWriter(
                    self._tmp, self.schema, compression="zstd", use_dictionary=self._dictionary
                )
        except BaseException:  # a full disk at the file's first bytes: no empty file left
            self._tmp.unlink(missing_ok=True)
            raise
        return self

    def write(self, data: pa.RecordBatch | pa.Table) -> None:
        """Add rows. Row groups have exactly ``row_group_rows`` rows (the last fewer), so the
        file does not depend on how the rows were cut into batches."""
        if not data.num_rows:
            return
        table = data if isinstance(data, pa.Table) else pa.Table.from_batches([data])
        if table.schema.equals(self.schema):  # no cast: pyarrow.compute takes 0.1 s to import
            table = table.replace_schema_metadata(self.schema.metadata)
        else:
            table = table.cast(self.schema)
        self._pending.append(table)
        self._pending_rows += table.num_rows
        self.rows += table.num_rows
        if self._pending_rows >= self.row_group_rows:
            with _naming(self.path, self._tmp):
                self._flush(final=False)

    def _flush(self, final: bool) -> None:
        table = pa.concat_tables(self._pending) if self._pending else None
        self._pending, self._pending_rows = [], 0
        if table is None:
            return
        full = table.num_rows - table.num_rows % self.row_group_rows
        for start in range(0, full, self.row_group_rows):
            self._writer.write_table(table.slice(start, self.row_group_rows))
        rest = table.slice(full)
        if final and rest.num_rows:
            self._writer.write_table(rest)
        elif rest.num_rows:
            self._pending, self._pending_rows = [rest], rest.num_rows

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            with _naming(self.path, self._tmp):
                if exc_type is None or self.keep_partial is not None:
                    self._flush(final=True)
                if exc_type is not None and self.keep_partial is not None:  # said in the file itself
                    self._writer.add_key_value_metadata({PARTIAL_KEY: (str(exc) or exc_type.__name__)[:500]})
                self._writer.close()
                if exc_type is None:
                    _fsync(self._tmp)
        except BaseException:  # a full disk while finishing: nothing under the final name
            self._tmp.unlink(missing_ok=True)
            raise
        if exc_type is None:
            if self._rename:
                os.replace(self._tmp, self.path)
        elif self.keep_partial is not None and self.rows:
            os.replace(self._tmp, self.keep_partial)
        else:
            self._tmp.unlink(missing_ok=True)


def write_table(table: pa.Table | Iterable[pa.RecordBatch], path, schema: pa.Schema, meta: dict) -> int:
    """Write a table (or batches) atomically; returns the number of rows."""
    with ParquetSink(path, schema, meta) as sink:
        for batch in [table] if isinstance(table, pa.Table) else table:
            sink.write(batch)
    return sink.rows


def schema_provenance(schema: pa.Schema) -> dict:
    """The provenance stored in a schema's metadata (empty when wikiorigin wrote none), for a
    caller that has read the file's schema already."""
    return json.loads((schema.metadata or {}).get(_KEY, b"{}"))


def read_provenance(path) -> dict:
    """The provenance stored in a file written by wikiorigin; a partial file's (the rows kept
    before a failure, :func:`partial_reason`) says ``partial``: why it stopped."""
    meta = schema_provenance(pq.read_schema(path))
    why = partial_reason(path)
    return {**meta, "partial": why, "complete": False} if why else meta


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


def arrow_table(columns: dict[str, list], schema: pa.Schema) -> pa.Table:
    """A table of ``schema`` from Python lists by column name, as ``pa.Table.from_pydict`` makes
    it, built from its buffers: ``pa.array`` imports pandas (to ask whether a list is a pandas
    object; a fifth of a second of start-up). Strings, booleans, integers, floats, lists and
    structs of them; ``TypeError`` for another type."""
    return pa.Table.from_arrays([_array(columns[f.name], f.type) for f in schema], schema=schema)


_NUMBERS = {pa.int8(): "b", pa.int16(): "h", pa.int32(): "i", pa.int64(): "q", pa.float32(): "f", pa.float64(): "d"}


def _array(values: list, kind: pa.DataType) -> pa.Array:
    """``values`` (None: null) as an array of ``kind``, from buffers (see :func:`arrow_table`)."""
    from array import array
    from itertools import accumulate

    n, nulls = len(values), values.count(None)
    valid = _bits([v is not None for v in values]) if nulls else None
    if kind in _NUMBERS:
        data = array(_NUMBERS[kind], [0 if v is None else v for v in values])
        return pa.Array.from_buffers(kind, n, [valid, pa.py_buffer(data)], null_count=nulls)
    if pa.types.is_boolean(kind):
        return pa.Array.from_buffers(kind, n, [valid, _bits([bool(v) for v in values])], null_count=nulls)
    if pa.types.is_string(kind):
        data = [b"" if v is None else v.encode() for v in values]
        offsets = array("i", accumulate(map(len, data), initial=0))
        return pa.Array.from_buffers(kind, n, [valid, pa.py_buffer(offsets), pa.py_buffer(b"".join(data))], nulls)
    if pa.types.is_list(kind):
        offsets = array("i", accumulate((0 if v is None else len(v) for v in values), initial=0))
        items = _array([x for v in values if v is not None for x in v], kind.value_type)
        return pa.Array.from_buffers(kind, n, [valid, pa.py_buffer(offsets)], nulls, children=[items])
    if pa.types.is_struct(kind):
        fields = [_array([None if v is None else v.get(f.name) for v in values], f.type) for f in kind]
        return pa.Array.from_buffers(kind, n, [valid], nulls, children=fields)
    raise TypeError(f"arrow_table: no conversion for {kind}")


def _bits(flags: list[bool]) -> pa.Buffer:
    """A bitmap, least significant bit first (Arrow's validity and boolean layout)."""
    out = bytearray((len(flags) + 7) // 8)
    for i, flag in enumerate(flags):
        if flag:
            out[i >> 3] |= 1 << (i & 7)
    return pa.py_buffer(bytes(out))


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


def _same(a: Path, b: Path) -> bool:
    """Whether two paths name one file (the same resolved path, or one file under two names)."""
    if a.resolve() == b.resolve():
        return True
    try:
        return a.samefile(b)
    except OSError:  # either is missing
        return False


def check_output(path, inputs: Iterable = (), suffix: str | None = ".parquet", siblings: Iterable = ()) -> Path:
    """An output file's path, checked before any work: not one of the run's ``inputs``
    (writing it would destroy what the run reads), nor is any of the ``siblings`` (the files
    the run writes beside it: ``OUT.failed.parquet``, ``OUT.parquet.lock``, ...), not a
    directory, its name ending in ``suffix`` (the format written: Parquet unless told otherwise;
    None: any name), its directory made if missing, and writable. What runs killed outright
    left beside it (their temporary files of ``path``, spill folders) is swept
    (:func:`wikiorigin.leftovers.sweep`), whichever stage writes it."""
    path = Path(path)
    inputs = [Path(source) for source in inputs if source is not None]
    for source in inputs:
        if _same(source, path):
            raise WikioriginError(f"{path}: the output would overwrite the input {source}; give another file")
        for beside in siblings:
            if _same(source, Path(beside)):
                raise WikioriginError(
                    f"{path}: the file written beside it, {Path(beside).name}, would overwrite the input "
                    f"{source}; give another file"
                )
    if path.is_dir():
        raise WikioriginError(f"{path}: a directory; give a file name (e.g. {path / ('out' + (suffix or ''))})")
    if suffix and not path.name.endswith(suffix):
        raise WikioriginError(
            f"{path}: give a file name ending in {suffix}, the format written (e.g. {path.stem or path.name}{suffix})"
        )
    parent = path.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise WikioriginError(f"{parent}: cannot make the directory for {path.name} ({exc.strerror})") from None
    if not os.access(parent, os.W_OK):
        raise WikioriginError(f"{parent}: not writable, so {path.name} cannot be written there")
    from .leftovers import sweep

    sweep(parent, [path])
    return path
