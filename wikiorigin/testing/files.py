"""Compressed text files whose bytes depend only on what is written to them."""

from __future__ import annotations

import gzip
import io

__all__ = ["gzip_text"]


def gzip_text(path) -> io.TextIOWrapper:
    """A UTF-8 gzip text writer at ``path`` with mtime 0 in its header, so that the same text
    always gives the same file (fixtures regenerate byte for byte)."""
    return io.TextIOWrapper(gzip.GzipFile(path, "wb", mtime=0), encoding="utf-8")
