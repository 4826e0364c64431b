"""Recorded answers as the model under evaluation: a released responses file, the released
human answers, rows with a ``response``, or the responses a task's own rows carry. Nothing is
asked; the answers are read and scored as a model's would be."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from ..log import logger
from .questions import attach_responses, read_questions

__all__ = ["Recorded", "recorded_name", "join_said"]

_COMPRESSED = (".xz", ".gz", ".bz2", ".zst")


def recorded_name(path) -> str:
    """The model a responses file records, from its name: ``responses-gpt4o-mini.json.xz`` ->
    ``gpt4o-mini`` (the released files' naming; any other name without its extensions)."""
    name = Path(path).name
    for suffix in _COMPRESSED:
        name = name.removesuffix(suffix)
    return Path(name).stem.removeprefix("responses-")


def join_said(source, join: dict) -> str:
    """One line on how recorded responses from ``source`` joined their questions (what did not
    join is said: counted as unanswered, or not used)."""
    line = f"{source}: {join['matched']} responses joined the questions"
    if join["missing"]:
        line += f"; {join['missing']} questions have no response (counted as unanswered)"
    if join["duplicates"]:
        line += f"; {join['duplicates']} responses repeat a question already answered (not used)"
    if join["unmatched"]:
        line += f"; {join['unmatched']} responses match no question, e.g. {join['unmatched_questions'][0][:60]!r}"
    return line


class Recorded:
    """Recorded answers in place of a model (:mod:`~wikiorigin.evaluators.tasks`): those of the
    file ``path`` (a released YokaiEval responses file, the released human answers, or rows
    with a ``response``), joined to the task's questions by their choices and question stem
    (:func:`~wikiorigin.evaluators.questions.attach_responses`); with no ``path``, or the
    task's own file, the responses the task's rows carry. ``name`` names the answers in the
    items and the signature (``recorded:NAME``): by default the model the file's name records
    (:func:`recorded_name`: ``path``'s, else the task's file's; :meth:`name_for`). Reading the
    file waits for the run."""

    def __init__(self, path=None, *, name: str | None = None):
        self.path = None if path is None else Path(path)
        self.given_name = name

    @property
    def name(self) -> str:
        """The answers' name: the one given, else the model ``path``'s name records, else
        ``recorded`` (a task names them after its own file: :meth:`name_for`)."""
        return self.name_for(None)

    def name_for(self, source) -> str:
        """The answers' name in a task whose rows come from ``source`` (a file, or None): the
        one given, else the model the responses file's name records, else the one ``source``'s
        name records, else ``recorded``."""
        if self.given_name:
            return self.given_name
        where = self.path if self.path is not None else source
        return recorded_name(where) if where is not None and Path(str(where)).suffix else "recorded"

    def describe(self) -> dict[str, Any]:
        """What answers: ``model`` (``recorded:NAME``) and, for a file, its name (``file``)
        and its SHA-256 (``sha256``: the same name with other answers is another run). A task
        names answers without a name of their own after its file (:meth:`name_for`)."""
        described: dict[str, Any] = {"model": f"recorded:{self.name}"}
        if self.path is not None:
            digest = hashlib.sha256()
            with open(self.path, "rb") as file:
                for block in iter(lambda: file.read(1 << 20), b""):
                    digest.update(block)
            described.update(file=self.path.name, sha256=digest.hexdigest())
        return described

    def __repr__(self) -> str:
        return f"Recorded({None if self.path is None else str(self.path)!r}, name={self.given_name!r})"

    def joined(self, rows: list[dict], source) -> tuple[list[dict], dict | None]:
        """The multiple-choice ``rows`` (read from ``source``) with these responses: as they
        are when the responses are theirs (no ``path``, or ``path`` is ``source``), else joined
        to them; and how they joined (None when nothing was joined), also logged."""
        if self.path is None or _same_file(self.path, source):
            return rows, None
        joined, join = attach_responses(rows, read_questions(self.path), source=str(self.path), target=str(source))
        logger.info(join_said(self.path, join))
        return joined, join


def _same_file(path: Path, other) -> bool:
    try:
        return path.resolve() == Path(other).resolve()
    except (OSError, TypeError):
        return False
