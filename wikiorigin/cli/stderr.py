"""The library's warnings (its ``wikiorigin`` logger) on stderr while a command runs, one line
each, as the command line words its own."""

from __future__ import annotations

import logging
import sys
from contextlib import contextmanager

__all__ = ["show_log"]


class _Stderr(logging.Handler):
    """A record as one line on the ``sys.stderr`` of the moment (``wikiorigin: warning: ...``)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            print(f"wikiorigin: {record.levelname.lower()}: {record.getMessage()}", file=sys.stderr)
        except Exception:  # noqa: BLE001 -- logging's own rule: a handler never raises
            self.handleError(record)


@contextmanager
def show_log():
    """While a command runs, show the library's warnings (the ``wikiorigin`` logger,
    :mod:`wikiorigin.log`) on stderr, one line each; its lower levels stay quiet (the command
    says those facts itself). The handler goes when the command ends."""
    logger = logging.getLogger("wikiorigin")
    handler = _Stderr(logging.WARNING)
    logger.addHandler(handler)
    try:
        yield
    finally:
        logger.removeHandler(handler)
