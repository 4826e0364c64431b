"""Open any dump file for streaming, by its magic bytes.

``open_dump(path)`` returns a :class:`DumpStream`: a binary reader of the decompressed bytes that
also reports how many compressed bytes it has consumed (for progress bars). Formats:

- gzip: isal in a thread of its own, several blocks ahead of the caller, each block handed
  over as isal wrote it (decompression overlaps the caller's work; isal releases the GIL),
  else the standard library's zlib;
- bzip2: indexed_bzip2 with ``threads`` decoder threads (multistream files are normal bzip2
  files with several streams), else the standard library's bz2;
- xz (lzma), zstd (zstandard), and plain files.

A truncated or corrupt file raises :class:`~wikiorigin.errors.DumpError` naming the file, the
compressed byte offset reached and the decompressed byte offset delivered so far. Everything
read before the damage has already been delivered to the caller. When the damage shows only in
a gzip member's closing CRC-32 or length check, the data decoded cleanly but some of it is
wrong (a stored block carries its bytes as they are, so a changed byte decodes): the error is
then :class:`ChecksumError`, and everything delivered from that member is unverified.
"""

from __future__ import annotations

import bz2
import io
import lzma
import os
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ..errors import DumpError
from ._gzipthread import GZIP_AHEAD as GZIP_AHEAD, GZIP_BLOCK as GZIP_BLOCK, _GzipThread

if TYPE_CHECKING:
    import zstandard

__all__ = ["ChecksumError", "DumpStream", "open_dump", "detect_format", "FORMATS"]

FORMATS = ("gzip", "bzip2", "xz", "zstd", "plain")
"""The compressions :func:`open_dump` reads, detected from the first bytes."""

_MAGIC = (
    (b"\x1f\x8b", "gzip"),
    (b"BZh", "bzip2"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
)

# What the decompressors raise on damaged input. indexed_bzip2 reports a torn file as a bare
# RuntimeError and a corrupt block as ValueError.
_DECODE_ERRORS: tuple[type[BaseException], ...] = (
    EOFError,
    OSError,
    zlib.error,
    lzma.LZMAError,
    ValueError,
    RuntimeError,
)
try:  # pragma: no cover - depends on the install
    from zstandard import ZstdError as _ZstdError

    _DECODE_ERRORS += (_ZstdError,)
except ImportError:  # pragma: no cover
    pass
try:  # pragma: no cover - depends on the install
    from isal import igzip_lib as _igzip_lib

    _DECODE_ERRORS += (_igzip_lib.IsalError,)  # type: ignore[operator]  # isal's stub types the class as an instance
except ImportError:  # pragma: no cover
    pass


class ChecksumError(DumpError):
    """The data decoded, but the check at the end of a gzip member (CRC-32, length) failed:
    the bytes delivered before it are unverified, not merely cut short."""


# zlib's messages for a member whose trailer does not match the data it decoded
_TRAILER_FAILURES = ("incorrect data check", "incorrect length check")


def detect_format(head: bytes) -> str:
    """The compression format named by the first bytes of a file."""
    for magic, name in _MAGIC:
        if head.startswith(magic):
            return name
    return "plain"


class _CountingFile(io.RawIOBase):
    """A raw file that remembers the furthest byte handed out (reads may run ahead)."""

    def __init__(self, path: Path):
        self._f = open(path, "rb", buffering=0)
        self.furthest = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        n = self._f.readinto(b)
        pos = self._f.tell()
        if pos > self.furthest:
            self.furthest = pos
        return n

    def seek(self, offset: int, whence: int = 0) -> int:
        return self._f.seek(offset, whence)

    def tell(self) -> int:
        return self._f.tell()

    def close(self) -> None:
        self._f.close()
        super().close()


class DumpStream:
    """Decompressed bytes of one dump file. Use :func:`open_dump` to make one.

    ``read(n)`` returns up to ``n`` bytes (``b""`` at the end). ``compressed_pos`` and
    ``compressed_size`` give progress; ``pos`` counts decompressed bytes delivered.
    """

    def __init__(self, path: Path, fmt: str, raw: _CountingFile, reader):
        self.path = path
        self.format = fmt
        self._raw = raw
        self._reader = reader
        self.pos = 0
        self.compressed_size = os.path.getsize(path)
        self._salvaged = b""  # what decodes cleanly after a damaged read, not yet delivered
        self._error: tuple[str, str] | None = None  # the message around the place, once damaged
        self._unverified = False  # the damage showed only in a closing check

    @property
    def compressed_pos(self) -> int:
        """Compressed bytes read so far (at most the file's size): the place for progress."""
        return min(self._raw.furthest, self.compressed_size)

    def read(self, n: int = 1 << 22) -> bytes:
        """Up to ``n`` decompressed bytes (``b""`` at the end). Corrupt or truncated data does not
        raise here: what decodes cleanly is delivered, then the error is raised at its place."""
        if self._error is not None:
            return self._read_salvaged(n, self._error)
        try:
            data = self._reader.read(n)
        except _DECODE_ERRORS as exc:
            self._error = error = (
                f"{self.path}: {self.format} data is corrupt or truncated near compressed byte "
                f"{self.compressed_pos} (after ",
                f" decompressed bytes): {type(exc).__name__}: {exc}",
            )
            self._salvaged, self._unverified = _salvage(self.path, self.format, self.pos)
            return self._read_salvaged(n, error)
        if not data and not self.pos and self.format == "bzip2":
            self._check_empty_bzip2()
        self.pos += len(data)
        return data

    def _check_empty_bzip2(self) -> None:
        """indexed_bzip2's threads read a file cut within its first block (``BZh9`` alone) as
        empty: an end with nothing decoded is checked by the bz2 module, which tells it."""
        import bz2

        try:
            with bz2.open(self.path, "rb") as stream:  # the first block is damaged: fails within it
                stream.read(1 << 24)
        except (OSError, EOFError, ValueError) as exc:
            raise DumpError(
                f"{self.path}: bzip2 data is corrupt or truncated near compressed byte {self.compressed_size} "
                f"(after 0 decompressed bytes): {type(exc).__name__}: {exc}"
            ) from None

    def _read_salvaged(self, n: int, error: tuple[str, str]) -> bytes:
        """What decodes cleanly after the last delivered byte, then the error."""
        data = self._salvaged[:n]
        self._salvaged = self._salvaged[n:]
        if not data:
            if self._unverified:
                raise ChecksumError(
                    f"{self.path}: {self.format} data decodes but fails its CRC-32/length "
                    f"check at the end of a member, near compressed byte {self.compressed_pos} "
                    f"(after {self.pos} decompressed bytes): the damage lies somewhere in that "
                    f"member, so what was read from it is unverified (a stored block passes a "
                    f"changed byte through)"
                )
            raise DumpError(f"{error[0]}{self.pos}{error[1]}")
        self.pos += len(data)
        return data

    def lines(self, block: int = 1 << 22):
        """The decompressed bytes line by line (without the newline)."""
        rest = b""
        while chunk := self.read(block):
            lines = (rest + chunk).split(b"\n")
            rest = lines.pop()
            yield from lines
        if rest:
            yield rest

    def close(self) -> None:
        """Close the decoder and the file."""
        self._reader.close()
        self._raw.close()

    def __enter__(self) -> DumpStream:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class _Decompressor(Protocol):
    """What :func:`_salvage` asks of an incremental decompressor (zlib's, bz2's, lzma's)."""

    @property
    def eof(self) -> bool: ...

    @property
    def unused_data(self) -> bytes: ...

    def decompress(self, data: bytes) -> bytes: ...


def _salvage(path: Path, fmt: str, skip: int, limit: int = 1 << 28) -> tuple[bytes, bool]:
    """Decode ``path`` again, incrementally, and return the clean bytes after ``skip``, and
    whether the damage showed only in a gzip member's closing CRC-32/length check.

    Fast readers lose what they had decoded in the call that failed (a threaded gzip reader
    even its queue). So that nothing before the damage is lost, the file is decoded once more
    with the standard library's incremental decompressors, up to the first bad byte.
    """
    makers: dict[str, Callable[[], _Decompressor]] = {
        "gzip": lambda: zlib.decompressobj(wbits=31),
        "bzip2": bz2.BZ2Decompressor,
        "xz": lzma.LZMADecompressor,
    }
    if fmt not in makers:
        return b"", False
    out, produced, trailer = [], 0, False
    dec = makers[fmt]()
    with open(path, "rb") as f:
        try:
            while produced < skip + limit and (raw := f.read(1 << 16)):
                while raw:
                    data = dec.decompress(raw)
                    raw = dec.unused_data if dec.eof else b""
                    if dec.eof:
                        dec = makers[fmt]()
                    if produced + len(data) > skip:
                        out.append(data[max(0, skip - produced) :])
                    produced += len(data)
        except zlib.error as exc:
            trailer = any(failure in str(exc) for failure in _TRAILER_FAILURES)
        except _DECODE_ERRORS:
            pass
    return b"".join(out), trailer


def _open_gzip(raw: _CountingFile, threads: int):
    try:
        from isal import igzip_threaded
    except ImportError:
        import gzip

        return gzip.GzipFile(fileobj=raw, mode="rb")
    if threads == 0:  # in the caller's thread
        return igzip_threaded.open(raw, "rb", threads=0)
    return _GzipThread(raw)


def _open_bzip2(raw: _CountingFile, threads: int):
    try:
        import indexed_bzip2
    except ImportError:
        return bz2.BZ2File(raw, "rb")
    return indexed_bzip2.open(raw, parallelization=max(1, threads))


class _ZstdReader:
    """zstd frames one after another; a frame cut short is an error, not a quiet end."""

    def __init__(self, raw: _CountingFile, dctx: zstandard.ZstdDecompressor):
        self._raw = raw
        self._dctx = dctx
        self._obj = self._dctx.decompressobj()
        self._fed = False  # bytes fed to the current frame

    def read(self, n: int) -> bytes:
        out = []
        size = 0
        while size < n:
            chunk = self._raw.read(1 << 20)
            if not chunk:
                if self._fed and not self._obj.eof:
                    raise EOFError("zstd frame ended before its end")
                break
            while chunk:
                data = self._obj.decompress(chunk)
                self._fed = True
                out.append(data)
                size += len(data)
                chunk = self._obj.unused_data if self._obj.eof else b""
                if self._obj.eof:
                    self._obj, self._fed = self._dctx.decompressobj(), False
        return b"".join(out)

    def close(self) -> None:
        pass


def _open_zstd(raw: _CountingFile, threads: int):
    try:
        import zstandard
    except ImportError:  # pragma: no cover - zstandard is a dependency
        raise DumpError(f"{raw._f.name}: zstd file, but zstandard is not installed (pip install zstandard)") from None
    return _ZstdReader(raw, zstandard.ZstdDecompressor())


_OPENERS = {
    "gzip": _open_gzip,
    "bzip2": _open_bzip2,
    "xz": lambda raw, threads: lzma.LZMAFile(raw, "rb"),
    "zstd": _open_zstd,
    "plain": lambda raw, threads: raw,
}


def open_dump(path: str | os.PathLike, threads: int = 1) -> DumpStream:
    """Open a dump file of any supported compression for streaming.

    The format comes from the file's first bytes, never its name. ``threads`` is the number of
    decoder threads for bzip2 (gzip always decompresses in one background thread; pass 0 to
    decompress in the caller's thread).
    """
    path = Path(path)
    if not path.is_file():
        raise DumpError(f"{path}: no such file")
    raw = _CountingFile(path)
    head = raw.read(8) or b""
    raw.seek(0)
    fmt = detect_format(head)
    try:
        reader = _OPENERS[fmt](raw, threads)
    except _DECODE_ERRORS as exc:
        raw.close()
        raise DumpError(f"{path}: cannot open as {fmt}: {exc}") from exc
    return DumpStream(path, fmt, raw, reader)
