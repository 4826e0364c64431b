"""gzip decompressed in a thread of its own, ahead of the reader (part of
:mod:`wikiorigin.dumps.compression`, which re-exports the names): :class:`_GzipThread`."""

from __future__ import annotations

import io
import queue
import threading
from typing import BinaryIO, cast

__all__ = ["GZIP_BLOCK", "GZIP_AHEAD", "_GzipThread"]

GZIP_BLOCK = 1 << 22
"""Decompressed bytes per block of the gzip thread (the scanner reads blocks of this size)."""
GZIP_AHEAD = 8
"""Blocks the gzip thread may decompress ahead of the caller: enough that the caller's pauses
(a row group written, a block's rows converted) do not stop it, 32 MB at most."""


class _GzipThread:
    """gzip decompressed by isal in a thread of its own, up to :data:`GZIP_AHEAD` blocks ahead of
    ``read``. A block the caller asks for whole is handed over as isal made it, not copied. An
    error of the decoder is raised by the ``read`` that reaches it, after every block before."""

    def __init__(self, raw: io.RawIOBase, block: int = GZIP_BLOCK, ahead: int = GZIP_AHEAD):
        from isal import isal_zlib

        # what igzip.open reads with, unbuffered; a raw binary file, where the stub says BinaryIO
        self._gzip = isal_zlib._GzipReader(cast(BinaryIO, raw), 1 << 20)
        self._block = block
        self._queue: queue.Queue = queue.Queue(ahead)
        self._stop = threading.Event()
        self._data, self._at, self._ended = b"", 0, False
        self._thread = threading.Thread(target=self._decompress, name="wikiorigin-gzip", daemon=True)
        self._thread.start()

    def _decompress(self) -> None:
        while not self._stop.is_set():
            try:
                item = self._gzip.read(self._block)
            except Exception as exc:  # handed to the reader, raised in its thread
                item = exc
            while not self._stop.is_set():
                try:
                    self._queue.put(item, timeout=0.05)
                    break
                except queue.Full:
                    pass
            if not isinstance(item, bytes) or not item:
                return

    def read(self, n: int) -> bytes:
        if self._at == len(self._data):
            if self._ended:
                return b""
            item = self._queue.get()
            if isinstance(item, Exception) or not item:
                self._ended = True
                if isinstance(item, Exception):
                    raise item
                return b""
            self._data, self._at = item, 0
        if self._at == 0 and n >= len(self._data):
            data, self._data = self._data, b""
            return data
        data = self._data[self._at : self._at + n]
        self._at += len(data)
        return data

    def close(self) -> None:
        self._stop.set()
        while self._thread.is_alive():  # a thread waiting to put a block goes on, and ends
            try:
                self._queue.get(timeout=0.05)
            except queue.Empty:
                pass
        self._gzip.close()
