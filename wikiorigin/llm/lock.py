"""Where :class:`~wikiorigin.lock.RunLock` used to live: it locks any output, so it is
:mod:`wikiorigin.lock` now; its names stay importable from here."""

from ..lock import RunLock, clear_stale

__all__ = ["RunLock", "clear_stale"]
