"""What every task does around its run: the model checked for the capability it needs before
anything runs, and the requests that failed during the run counted over its LLM clients."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..errors import WikioriginError
from ..protocols import MissingCapability, require
from .recorded import Recorded

__all__ = ["needs", "client_of", "failures", "MissingCapability"]


def needs(model: object, capability: str, what: str) -> None:
    """A one-line error, before anything runs, when ``model`` lacks the ``capability`` (a key
    of :data:`~wikiorigin.protocols.CAPABILITIES`) that ``what`` needs, or does not describe
    itself; recorded answers are refused for what they cannot do."""
    if isinstance(model, Recorded):
        raise WikioriginError(
            f"{what} needs a model to ask ({capability}): recorded answers cannot be scored so; "
            "give a model (wo.LocalModel, wo.EndpointModel)"
        )
    require(model, capability, what)


def client_of(model: object) -> Any:
    """The LLM client of an endpoint model (its requests are counted), else None."""
    return getattr(model, "client", None)


def failures(clients: Iterable[Any]) -> int:
    """Requests that failed after their retries so far, over the distinct LLM clients given
    (None passed over): the difference before and after a run is the run's own."""
    found = {id(c): c for c in clients if c is not None and hasattr(c, "usage")}
    return sum(c.usage.failures for c in found.values())
