"""Pages put aside on disk while a corpus is checked, and taken back one at a time to convert.

A multistream dump is cheapest read stream by stream in the dump's order (each bzip2 stream
decompressed once), but a corpus is written in its items' order. :class:`PageSpill` joins the
two in flat memory: the pages are written to a file as they are read (pickled, zlib level 1:
a third of the text's size) and read back by position in any order. The file lies in a folder
beside the output, removed when the spill is closed, or by the next run writing there if this
one is killed (:mod:`wikiorigin.leftovers`).
"""

from __future__ import annotations

import os
import pickle
import shutil
import tempfile
import zlib
from pathlib import Path

from ..dumps.pages import PageText
from ..leftovers import spill_prefix

__all__ = ["PageSpill"]


class PageSpill:
    """``with PageSpill(out) as spill:`` ``ref = spill.put(page)`` writes a page aside;
    ``spill.take(ref)`` reads it back (any number of times, in any order)."""

    def __init__(self, beside):
        self.folder = Path(tempfile.mkdtemp(prefix=spill_prefix(), dir=Path(beside).parent))
        self.path = self.folder / "pages.bin"
        try:
            self._file = open(self.path, "w+b")  # noqa: SIM115 - closed by close()
        except OSError:
            shutil.rmtree(self.folder, ignore_errors=True)
            raise
        self._end = 0
        self._flushed = True

    def put(self, page: PageText) -> tuple[int, int]:
        """Write ``page`` at the end of the file; returns where it lies (offset, length)."""
        data = zlib.compress(pickle.dumps(page, pickle.HIGHEST_PROTOCOL), 1)
        self._file.write(data)
        at, self._end = self._end, self._end + len(data)
        self._flushed = False
        return at, len(data)

    def take(self, ref: tuple[int, int]) -> PageText:
        """The page that :meth:`put` wrote where ``ref`` says."""
        if not self._flushed:
            self._file.flush()
            self._flushed = True
        at, size = ref
        return pickle.loads(zlib.decompress(os.pread(self._file.fileno(), size, at)))

    def close(self) -> None:
        """Close the file and remove its folder."""
        self._file.close()
        shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> PageSpill:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
