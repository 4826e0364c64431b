"""The package's logger: ``logging.getLogger("wikiorigin")``.

The library prints nothing: what a caller may want to know along the way (how recorded
responses joined their questions, rows left out, settings two runs differ in) goes to this
logger, at ``INFO`` or ``WARNING``, and the same facts are in the value returned. With no
logging configured, Python shows the warnings on stderr (its last-resort handler) and drops the
rest; ``logging.basicConfig(level=logging.INFO)`` shows both. The command line prints what it
has to say itself.
"""

from __future__ import annotations

import logging

__all__ = ["logger"]

logger = logging.getLogger("wikiorigin")
"""The ``wikiorigin`` logger every library module writes to (its own name, not a child's: one
name to configure)."""
