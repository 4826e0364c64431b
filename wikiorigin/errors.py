"""The few exception types of wikiorigin.

Every message says what was expected, what was seen, and where (file, byte offset, page).
"""

__all__ = ["WikioriginError", "DumpError", "UnknownWikiError", "MissingExtra"]


class WikioriginError(Exception):
    """Base class: the CLI turns these into a one-line message and exit code 2."""


class DumpError(WikioriginError):
    """A dump file is corrupt, torn, of the wrong kind, or in an unknown format."""


class UnknownWikiError(WikioriginError, KeyError):
    """A name that is not a known Wikipedia edition."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class MissingExtra(WikioriginError, ImportError):
    """A feature whose optional dependencies are not installed; the message says which extra
    to install and how. An environment problem (exit 2), still an ``ImportError`` to callers
    that test for one."""
