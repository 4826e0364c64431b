"""What the results of the file stages share (origins: :class:`~wikiorigin.origin.OriginsResult`;
corpora: :class:`~wikiorigin.corpora.result.CorpusResult`): the Parquet file the run wrote, the
settings that ran, the files it read, a signature of them, and :meth:`StageResult.save`."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from . import __version__

__all__ = ["StageResult", "sha256_file", "stage_signature"]


def sha256_file(path) -> str:
    """The SHA-256 of the file ``path`` (hex), read in 4 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(4 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _value(value) -> str:
    if isinstance(value, (list, tuple)):
        return ",".join(_value(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return str(value)


def stage_signature(stage: str, settings: dict, inputs: dict[str, str]) -> str:
    """One line: the ``stage``, each setting that is not None (``name:value``, by name), each
    input by name with the first 12 hex digits of its SHA-256 (``in:NAME=DIGEST``), and the
    package's version."""
    parts = [stage]
    parts += [f"{k}:{_value(v)}" for k, v in sorted(settings.items()) if v is not None]
    parts += [f"in:{name}={digest[:12]}" for name, digest in inputs.items()]
    return "|".join([*parts, f"version:{__version__}"])


@dataclass(frozen=True)
class StageResult:
    """A stage's output: ``path`` (the Parquet file the run wrote), ``settings`` (what was asked,
    as the signature says it), ``inputs`` (the files read: their names and SHA-256 digests are
    signed, read when :attr:`signature` is first asked for). :meth:`save` writes the output
    elsewhere; :meth:`table` reads it."""

    STAGE = "stage"

    path: Path
    settings: dict = field(default_factory=dict)
    inputs: tuple[Path, ...] = ()

    @cached_property
    def digests(self) -> dict[str, str]:
        """Each input file's SHA-256 by its name (a folder's files by their path in it)."""
        found = {}
        for source in self.inputs:
            source = Path(source)
            files = sorted(p for p in source.rglob("*") if p.is_file()) if source.is_dir() else [source]
            for file in files:
                name = file.relative_to(source.parent).as_posix() if source.is_dir() else file.name
                found[name] = sha256_file(file)
        return found

    @property
    def signature(self) -> str:
        """What ran, in one line (:func:`stage_signature`): the stage, its settings, each input
        by name and SHA-256 (every input read once, the first time this is asked for)."""
        return stage_signature(self.STAGE, self.settings, self.digests)

    def table(self):
        """The output as a ``pyarrow.Table`` (read from :attr:`path`)."""
        import pyarrow.parquet as pq

        return pq.read_table(self.path)

    def save(self, out) -> Path:
        """The output written to ``out`` too (a copy, whole or not at all: its provenance
        unchanged), under the whole-run guard (:func:`~wikiorigin.runs.guarded_run`: ``out``
        none of the run's inputs, what a killed run left swept, ``OUT.lock`` held); returns
        ``out``. Saving to :attr:`path` itself writes nothing."""
        from .errors import WikioriginError
        from .files import atomic, check_output
        from .runs import guarded_run

        out = Path(out)
        if not self.path.is_file():
            raise WikioriginError(f"{self.path}: the run's output is gone; run the stage again to save it")
        if out.exists() and os.path.samefile(out, self.path):
            return out
        check_output(out, inputs=[*self.inputs, self.path])
        with guarded_run(out, inputs=[*self.inputs, self.path]):
            with atomic(out) as tmp:
                shutil.copyfile(self.path, tmp)
        return out
