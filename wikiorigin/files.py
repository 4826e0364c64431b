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
import os
from collections.abc import Iterable
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from . import __version__
from ._inputs import (
    PARTIAL_KEY,
    input_schema,
    partial_reason,
    read_input,
    read_parquet,
    read_rows,
    refuse_partial as refuse_partial,  # re-exported: files.refuse_partial
)
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
        writer = self._opened()
        full = table.num_rows - table.num_rows % self.row_group_rows
        for start in range(0, full, self.row_group_rows):
            writer.write_table(table.slice(start, self.row_group_rows))
        rest = table.slice(full)
        if final and rest.num_rows:
            writer.write_table(rest)
        elif rest.num_rows:
            self._pending, self._pending_rows = [rest], rest.num_rows

    def _opened(self) -> pq.ParquetWriter:
        """The writer :meth:`__enter__` opened."""
        if self._writer is None:
            raise RuntimeError("ParquetSink: write inside its with block")
        return self._writer

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            with _naming(self.path, self._tmp):
                if exc_type is None or self.keep_partial is not None:
                    self._flush(final=True)
                writer = self._opened()
                if exc_type is not None and self.keep_partial is not None:  # said in the file itself
                    writer.add_key_value_metadata({PARTIAL_KEY: (str(exc) or exc_type.__name__)[:500]})
                writer.close()
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
        encoded = [b"" if v is None else v.encode() for v in values]
        offsets = array("i", accumulate(map(len, encoded), initial=0))
        return pa.Array.from_buffers(kind, n, [valid, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))], nulls)
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


def _same(a: Path, b: Path) -> bool:
    """Whether two paths name one file (the same resolved path, or one file under two names)."""
    if a.resolve() == b.resolve():
        return True
    try:
        return a.samefile(b)
    except OSError:  # either is missing
        return False


def _written_by_us(path: Path) -> bool:
    """Whether a Parquet file has our provenance; a request cache there is left to the cache's
    check, which names it (:func:`wikiorigin.runs.check_cache`)."""
    try:
        with open(path, "rb") as file:
            cache = file.read(16) == b"SQLite format 3\0"
        return cache or bool(schema_provenance(pq.read_schema(path)))
    except (OSError, ValueError):  # not Parquet, or its provenance is not JSON
        return False


def check_output(path, inputs: Iterable = (), suffix: str | None = ".parquet", siblings: Iterable = ()) -> Path:
    """An output file's path, checked before any work: not one of the run's ``inputs``
    (writing it would destroy what the run reads), nor is any of the ``siblings`` (the files
    the run writes beside it: ``OUT.failed.parquet``, ``OUT.parquet.lock``, ...), nor a Parquet
    file among them that wikiorigin did not write (someone's ``OUT.failed.parquet``), not a
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
    for beside in map(Path, siblings):
        if beside.suffix == ".parquet" and beside.is_file() and not _written_by_us(beside):
            raise WikioriginError(
                f"{path}: {beside.name} beside it is not wikiorigin's; a run would replace it: move it"
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
