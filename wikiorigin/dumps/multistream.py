"""Random access to a ``pages-articles-multistream`` dump through its index.

The index has a line ``offset:page_id:title`` per page; :class:`MultistreamIndex` holds it as
Arrow and numpy arrays. :class:`Multistream` fetches a page by title or id by decompressing
only the bzip2 stream that holds it (about 100 pages), several streams in parallel. Titles are
normalized as MediaWiki does (:class:`~wikiorigin.dumps.titles.TitleNormalizer`) and redirects
(``#REDIRECT``, ``#転送``, ... all read from ``<redirect title=...>``) can be followed.
"""

from __future__ import annotations

import bisect
import bz2
import io
import re
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import DumpError
from ..progress import Progress
from .compression import open_dump
from .pagexml import PageText, find_pages
from .titles import TitleNormalizer
from .xmlhead import SiteInfo, read_header

__all__ = ["Multistream", "MultistreamIndex"]


@dataclass(slots=True)
class _Entry:
    offset: int
    page_id: int


_INDEX_LINE = re.compile(rb"^\d+:\d+:")
_INDEX_BLOCK = 1 << 24  # bytes of index text parsed at a time


def _read_index(path: Path):
    """``(titles, stream offsets, page ids)`` of a multistream index (``offset:page_id:title``
    lines), parsed with Arrow kernels a few MB at a time; a malformed line is a DumpError."""
    titles, offsets, ids = [], [], []
    with open_dump(path) as stream:
        rest = b""
        while True:
            chunk = stream.read(_INDEX_BLOCK)
            data = rest + chunk
            cut = data.rfind(b"\n") + 1 if chunk else len(data)
            block, rest = data[:cut], data[cut:]
            if block.strip():
                t, o, i = _parse_index_block(block, path)
                titles.append(t)
                offsets.append(o)
                ids.append(i)
            if not chunk:
                break
    if not ids:
        return pa.array([], pa.large_string()), np.zeros(0, np.int64), np.zeros(0, np.int64)
    return (pa.chunked_array(titles, pa.large_string()).combine_chunks(), np.concatenate(offsets), np.concatenate(ids))


def _parse_index_block(block: bytes, path: Path):
    try:
        text = pa.array([block.decode("utf-8")], pa.large_string())
    except UnicodeDecodeError as exc:
        raise DumpError(f"{path}: not UTF-8 near byte {exc.start} of a block") from None
    lines = pc.split_pattern(text, "\n").flatten()
    lines = lines.filter(pc.not_equal(lines, ""))
    parts = pc.split_pattern(lines, ":", max_splits=2)
    try:
        if not pc.all(pc.equal(pc.list_value_length(parts), 3)).as_py():
            raise pa.ArrowInvalid("a line without two colons")
        offsets = pc.list_element(parts, 0).cast(pa.int64())
        ids = pc.list_element(parts, 1).cast(pa.int64())
    except pa.ArrowInvalid:
        bad = next(line for line in lines.to_pylist() if not _INDEX_LINE.match(line.encode()))
        raise DumpError(f"{path}: not a multistream index line: {bad.encode()[:60]!r}") from None
    return pc.list_element(parts, 2), offsets.to_numpy(), ids.to_numpy()


class MultistreamIndex:
    """A multistream index (``offset:page_id:title`` lines) held as Arrow and numpy arrays:
    titles sorted for a binary search (UTF-8 byte order is code point order, so Python's
    comparisons agree), page ids sorted, each with the row it came from. A few bytes a page
    and no Python object per line: English Wikipedia's ~24 M lines fit in a few GB."""

    def __init__(self, path):
        self.path = Path(path)
        titles, self._offsets, self._ids = _read_index(self.path)
        if not len(self._ids):
            raise DumpError(f"{self.path}: an empty multistream index")
        order = pc.sort_indices(titles)
        self._titles, self._title_rows = titles.take(order), order.to_numpy()
        self._id_order = np.argsort(self._ids, kind="stable")
        self._ids_sorted = self._ids[self._id_order]

    def __len__(self) -> int:
        return len(self._ids)

    def titles(self) -> list[str]:
        """Every title, in the index's order."""
        return self._titles.take(pa.array(np.argsort(self._title_rows))).to_pylist()

    def page_ids(self) -> list[int]:
        """Every page id of the index, in index order."""
        return self._ids.tolist()

    def stream_offsets(self) -> list[int]:
        """The byte offsets of the dump's streams, sorted, each once."""
        return np.unique(self._offsets).tolist()

    def _entry(self, row) -> _Entry | None:
        return None if row is None else _Entry(int(self._offsets[row]), int(self._ids[row]))

    def by_title(self, title: str) -> _Entry | None:
        """The entry (stream offset, page id) of the page titled exactly ``title``, or None."""
        titles = self._titles
        lo, hi = 0, len(titles)
        while lo < hi:
            mid = (lo + hi) // 2
            if titles[mid].as_py() < title:
                lo = mid + 1
            else:
                hi = mid
        found = lo < len(titles) and titles[lo].as_py() == title
        return self._entry(int(self._title_rows[lo]) if found else None)

    def by_id(self, page_id: int) -> _Entry | None:
        """The entry (stream offset, page id) of page ``page_id``, or None."""
        at = int(np.searchsorted(self._ids_sorted, page_id))
        found = at < len(self._ids_sorted) and self._ids_sorted[at] == page_id
        return self._entry(int(self._id_order[at]) if found else None)


def _by_stream(entries: Iterable[tuple]) -> dict[int, list]:
    """``{stream offset: [(key, page id)]}`` of ``(key, entry)`` pairs, the streams in the order
    first met; keys without an entry left out."""
    by_stream: dict[int, list] = {}
    for key, entry in entries:
        if entry is not None:
            by_stream.setdefault(entry.offset, []).append((key, entry.page_id))
    return by_stream


class Multistream:
    """Random access to a pages-articles-multistream dump through its index.

    ``get(titles_or_ids)`` decompresses only the streams holding the wanted pages, on
    ``threads`` threads (bz2 decompression releases the GIL). Titles are normalized first;
    with ``follow_redirects`` a redirect is replaced by its target (a loop or a target
    that is not in the dump is reported in ``problems`` and the redirect itself returned).
    """

    def __init__(self, dump, index, threads: int = 2):
        self.dump, self.index, self.threads = Path(dump), Path(index), threads
        self.entries = MultistreamIndex(self.index)
        self.size = self.dump.stat().st_size
        self.offsets = self.entries.stream_offsets() + [self.size]
        self.site = self._siteinfo()
        self.normalize = TitleNormalizer(self.site)
        self.problems: list[str] = []

    def __len__(self) -> int:
        return len(self.entries)

    def titles(self) -> list[str]:
        """Every title in the index, in the index's order."""
        return self.entries.titles()

    def page_ids(self) -> list[int]:
        """Every page id of the dump's index, in index order."""
        return self.entries.page_ids()

    def _read_stream(self, offset: int) -> bytes:
        at = bisect.bisect_right(self.offsets, offset)
        end = self.offsets[at] if at < len(self.offsets) else self.size
        if not 0 <= offset < end <= self.size:
            raise DumpError(
                f"{self.index}: stream offset {offset} lies outside {self.dump} "
                f"({self.size} bytes): does the index belong to this dump?"
            )
        with open(self.dump, "rb") as f:
            f.seek(offset)
            raw = f.read(end - offset)
        try:
            return bz2.BZ2Decompressor().decompress(raw)
        except (OSError, EOFError, ValueError) as exc:
            if raw.startswith(b"BZh"):  # a stream starts there, as the index says: it is damaged
                raise DumpError(
                    f"{self.dump}: the bzip2 stream at byte {offset} ({end - offset} bytes) is damaged ({exc})"
                ) from None
            raise DumpError(
                f"{self.dump}: no bzip2 stream at byte {offset} as {self.index} says ({exc}): "
                "does the index belong to this dump?"
            ) from None

    def _siteinfo(self) -> SiteInfo:
        first = self.offsets[0]
        with open(self.dump, "rb") as f:
            head = f.read(first) if first else b""
        try:
            data = bz2.BZ2Decompressor().decompress(head) if head else self._read_stream(first)
        except (OSError, EOFError, ValueError) as exc:
            raise DumpError(
                f"{self.dump}: not a bzip2 multistream dump: its first {first} bytes are no bzip2 stream ({exc})"
            ) from None
        info, _ = read_header(io.BytesIO(data).read, self.dump)
        return info

    def entry(self, key: str | int) -> _Entry | None:
        """The index entry of a page id (int) or a title (str, tried as given, then normalized),
        or None if the index has no such page."""
        if isinstance(key, int):
            return self.entries.by_id(key)
        return self.entries.by_title(key) or self.entries.by_title(self.normalize(key))

    def get(self, keys: Iterable[str | int], follow_redirects: bool = True, max_hops: int = 5) -> dict:
        """``{key: PageText}`` for the keys found; the others are left out (see ``missing``)."""
        keys = list(keys)
        pages = self._fetch({k: self.entry(k) for k in keys})
        if follow_redirects:
            self._follow(pages, max_hops)
        return pages

    def missing(self, keys: Iterable[str | int]) -> list:
        """The keys (page ids or titles) the index does not have."""
        return [k for k in keys if self.entry(k) is None]

    def each(self, keys: Iterable[str | int]) -> Iterator[tuple[str | int, PageText]]:
        """``(key, page)`` for each key found (redirects not followed), stream by stream in the
        dump's order (by page id within a stream), only a few streams decompressed ahead: the pages held stay few however
        many keys there are. Each stream is decompressed once."""
        entries = {k: self.entry(k) for k in dict.fromkeys(keys)}
        found = [(k, e) for k, e in entries.items() if e is not None]
        return self._pages(_by_stream(sorted(found, key=lambda e: (e[1].offset, e[1].page_id))))

    def _fetch(self, entries: dict) -> dict:
        return dict(self._pages(_by_stream(entries.items())))

    def _pages(self, by_stream: dict) -> Iterator[tuple[str | int, PageText]]:
        """The pages of ``by_stream`` (``{offset: [(key, page id)]}``), stream by stream in its
        order, at most twice ``threads`` streams decompressed ahead (bz2 releases the GIL)."""

        def read(offset):
            data = self._read_stream(offset)
            where = f"{self.dump}: stream at byte {offset}"
            return offset, find_pages(data, (pid for _, pid in by_stream[offset]), where)

        workers = max(1, self.threads)
        offsets = iter(by_stream)
        with (
            ThreadPoolExecutor(workers) as pool,
            Progress(
                f"{self.dump.name}: articles", total=sum(map(len, by_stream.values())), unit="article"
            ) as progress,
        ):
            ahead = deque(pool.submit(read, offset) for offset in islice(offsets, 2 * workers))
            try:
                while ahead:
                    offset, pages = ahead.popleft().result()
                    following = next(offsets, None)
                    if following is not None:
                        ahead.append(pool.submit(read, following))
                    for key, page_id in by_stream[offset]:
                        if pages[page_id] is None:
                            raise DumpError(
                                f"{self.dump}: page {page_id} is not in the stream at byte {offset} "
                                f"where {self.index} puts it: does the index belong to this dump?"
                            )
                        yield key, pages[page_id]
                    progress.update(len(by_stream[offset]))
            finally:
                for future in ahead:
                    future.cancel()

    def _follow(self, pages: dict, max_hops: int) -> None:
        """Replace each redirect in ``pages`` by its target, hop by hop: the targets of one hop
        are fetched together (each stream read once, on the pool's threads). A loop, a target
        not in the dump or more than ``max_hops`` redirects is reported in ``problems``."""
        problems: dict = {}
        chasing = {key: (page, {page.page_id}) for key, page in pages.items()}  # key: (now, seen)
        for _ in range(max_hops):
            targets = {}
            for key, (current, seen) in chasing.items():
                if current.redirect is None:
                    pages[key] = current
                    continue
                target = self.entry(current.redirect)
                if target is None:
                    problems[key] = f"{key!r}: redirect to {current.redirect!r}, not in the dump"
                    pages[key] = current
                elif target.page_id in seen:
                    problems[key] = f"{key!r}: redirect loop at {current.redirect!r}"
                else:
                    seen.add(target.page_id)
                    targets[key] = target
            if not targets:
                break
            chasing = {key: (page, chasing[key][1]) for key, page in self._fetch(targets).items()}
        else:  # still redirected after max_hops: the redirect itself is kept
            for key in chasing:
                problems[key] = f"{key!r}: more than {max_hops} redirects"
        self.problems.extend(problems[key] for key in pages if key in problems)
