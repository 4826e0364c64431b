"""What an evaluation task returns (:mod:`~wikiorigin.evaluators.tasks`): the scored items, the
summary, the settings that ran and their signature, and a :meth:`RunResult.save` that writes
the results directory as ``wikiorigin eval`` does.

:class:`Summary` is the summary as ``summary.json`` holds it (a dict, its keys unchanged) whose
keys read as attributes too: ``result.summary.accuracy``, ``result.summary["by_type"]``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import WikioriginError
from .signature import signature

__all__ = ["Summary", "RunResult"]


class Summary(dict):
    """A run's summary: the dict ``summary.json`` holds (the same keys), whose keys are also
    attributes (``summary.accuracy``; a dict inside reads the same way, ``summary.by_type``).
    An attribute that is no key raises ``AttributeError`` naming the keys there are."""

    __slots__ = ()

    def __getattr__(self, name: str):
        try:
            value = self[name]
        except KeyError:
            raise AttributeError(f"this summary has no {name!r}; it has {', '.join(self)}") from None
        return Summary(value) if isinstance(value, dict) and not isinstance(value, Summary) else value

    def __dir__(self):
        return sorted(set(super().__dir__()) | {k for k in self if isinstance(k, str) and k.isidentifier()})


@dataclass(frozen=True)
class RunResult:
    """One evaluation run: the scored ``items`` (one per question, article or answer), the
    ``summary``, the ``settings`` that ran (:mod:`~wikiorigin.evaluators.signature`: from the
    task's configuration and the model's own description, never given twice), what the results
    files' provenance records (``meta``: the inputs), and the LLM clients the run sent requests
    through (``clients``: an endpoint under evaluation, a judge, a paraphraser; their usage
    and failures). ``join``: how recorded responses joined the questions (None when none were
    joined). :meth:`save` writes the results directory."""

    kind: str
    items: list[dict]
    summary: Summary
    settings: dict
    meta: dict = field(default_factory=dict)
    clients: tuple = ()
    join: dict | None = None
    writer: Callable | None = field(default=None, repr=False)

    @property
    def signature(self) -> str:
        """The one-line signature of what ran (:func:`~wikiorigin.evaluators.signature.signature`
        of :attr:`settings`): the one ``summary.json`` and ``report.md`` carry once saved."""
        return signature(self.settings)

    def save(self, directory, *, lock=None) -> Path:
        """Write the results directory: ``items.parquet`` (with provenance), ``summary.json``
        (the summary with ``settings`` and ``signature``), ``report.md`` and the plots, as
        ``wikiorigin eval`` writes them; returns the directory. The directory is locked while it
        is written (``DIRECTORY.lock``, :class:`~wikiorigin.llm.lock.RunLock`): a second run
        writing it is refused. ``lock``: a :class:`~wikiorigin.llm.lock.RunLock` on
        ``directory`` the caller already holds (the command line holds one over the whole
        run), used instead of taking another."""
        from ..llm.lock import RunLock

        directory = Path(directory)
        if lock is not None:
            if Path(lock.out) != directory or not lock.held:
                raise WikioriginError(
                    f"{directory}: the lock given is not held on this directory "
                    f"({lock.out}); give none, and one is taken while the files are written"
                )
            return self._write(directory)
        with RunLock(directory, parameter="directory"):
            return self._write(directory)

    def _write(self, directory: Path) -> Path:
        self.writer(directory, self.items, dict(self.summary), self.meta, settings=self.settings)
        return directory
