"""What every task does around its run: the model checked for the capability it needs before
anything runs, and the requests that failed during the run counted over its LLM clients."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..errors import WikioriginError
from ..protocols import MissingCapability, model_name, require
from .recorded import Recorded

__all__ = ["needs", "client_of", "failures", "MissingCapability", "Named"]


class Named:
    """A model without a ``name`` attribute, named as :func:`~wikiorigin.protocols.model_name`
    names it (its description's ``name`` or ``model``, else its class); everything else is the
    model's own."""

    def __init__(self, model: Any, name: str):
        self.__dict__.update(model=model, name=name)

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.__dict__["model"], attr)


def needs(model: Any, capability: str, what: str) -> Any:
    """``model``, named (:class:`Named`) when it has no ``name``; a one-line error, before
    anything runs, when it lacks the ``capability`` (a key of
    :data:`~wikiorigin.protocols.CAPABILITIES`) that ``what`` needs, or does not describe
    itself. Recorded answers are refused for what they cannot do."""
    if isinstance(model, Recorded):
        raise WikioriginError(
            f"{what} needs a model to ask ({capability}): recorded answers cannot be scored so; "
            "give a model (wo.LocalModel, wo.EndpointModel)"
        )
    require(model, capability, what)
    name = getattr(model, "name", None)
    return model if isinstance(name, str) and name else Named(model, model_name(model, model.describe()))


def client_of(model: object) -> Any:
    """The LLM client of an endpoint model (its requests are counted), else None."""
    return getattr(model, "client", None)


def failures(clients: Iterable[Any]) -> int:
    """Requests that failed after their retries so far, over the distinct LLM clients given
    (None passed over): the difference before and after a run is the run's own."""
    found = {id(c): c for c in clients if c is not None and hasattr(c, "usage")}
    return sum(c.usage.failures for c in found.values())
