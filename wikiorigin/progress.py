"""Progress of long work on stderr: a tqdm bar on a terminal, otherwise one line every
``every`` seconds (30 by default, ``WIKIORIGIN_PROGRESS_SECONDS``), so that logs show it too.

    with Progress("eval", total=len(rows), unit="question") as bar:
        for chunk in chunks:
            ...
            bar.update(len(chunk))
"""

from __future__ import annotations

import os
import sys
import time

__all__ = ["Progress"]


class Progress:
    """Counts done out of ``total`` (None: unknown) and shows it; ``every`` seconds between
    lines when stderr is not a terminal (0: a line at each update); ``note()`` adds a few words."""

    def __init__(
        self, desc: str, total: int | None = None, unit: str = "it", every: float | None = None, stream=None, note=None
    ):
        self.desc, self.total, self.unit, self.done = desc, total, unit, 0
        self.note = note  # a function giving more to say (failures, cost so far), or None
        self.stream = stream or sys.stderr
        self.every = float(os.environ.get("WIKIORIGIN_PROGRESS_SECONDS", 30)) if every is None else every
        self.started = self.last = time.monotonic()
        self._bar = None
        if self.stream.isatty():
            from tqdm import tqdm

            self._bar = tqdm(desc=desc, total=total, unit=unit, file=self.stream, leave=False)

    def update(self, n: int = 1) -> None:
        """Count ``n`` more units done (and move the bar, if any)."""
        self.done += n
        if self._bar is not None:
            if self.note is not None:
                self._bar.set_postfix_str(self.note(), refresh=False)
            self._bar.update(n)
            return
        now = time.monotonic()
        if now - self.last >= self.every:
            self.last = now
            of = f"/{self.total:,}" if self.total is not None else ""
            rate = self.done / max(now - self.started, 1e-9)
            note = f", {self.note()}" if self.note is not None else ""
            print(f"{self.desc}: {self.done:,}{of} {self.unit}s ({rate:,.1f}/s{note})", file=self.stream, flush=True)

    def close(self) -> None:
        """Close the bar, if any."""
        if self._bar is not None:
            self._bar.close()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
