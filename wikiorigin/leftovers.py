"""What a run that was killed leaves beside its outputs, found and removed by the next run.

A run that ends in any way Python sees (done, an error, Ctrl-C, SIGTERM) removes its own
temporary files. One that is killed outright (``kill -9``, the machine going down, a worker
process stopped by its parent) cannot, so each temporary file and folder carries the id of the
process that made it: ``.NAME.PID.tmp…`` (:func:`~wikiorigin.files.temporary_name`) and spill
folders ``wikiorigin-duckdb-PID-…`` (:data:`SPILL_PREFIX`: DuckDB's, and those of the one
Wikidata pass and of ``corpus origin``'s pages, named alike so that one sweep finds them all;
the name is kept for the folders older runs left). One whose process no longer
runs is left over, and :func:`sweep` removes it when a run writes beside it again; a process
that still runs keeps its files, whatever it is.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

__all__ = ["SPILL_PREFIX", "spill_prefix", "running", "sweep"]

SPILL_PREFIX = "wikiorigin-duckdb-"
"""The start of the name of a spill folder (DuckDB's, the Wikidata pass's, the page spill's);
:func:`spill_prefix` adds the process id."""

_TEMPORARY = re.compile(r"\.(?P<name>.+)\.(?P<pid>[0-9]+)\.tmp(\..*)?\Z", re.DOTALL)
_SPILL = re.compile(re.escape(SPILL_PREFIX) + r"(?P<pid>[0-9]+)-")


def spill_prefix() -> str:
    """The prefix of this process's spill folders (for :func:`tempfile.mkdtemp`)."""
    return f"{SPILL_PREFIX}{os.getpid()}-"


def running(pid: int) -> bool:
    """Whether a process ``pid`` exists (a zombie, one of another user, or this one counts)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, run by someone else
        return True
    return True


def _owner(name: str, names: set[str] | None) -> int | None:
    """The process id in a leftover's name, or None when the name is not one we make (or is the
    temporary file of another output than ``names``)."""
    temporary = _TEMPORARY.match(name)
    if temporary and (names is None or temporary["name"] in names):
        return int(temporary["pid"])
    spill = _SPILL.match(name)
    return int(spill["pid"]) if spill else None


def _remove(path: Path) -> bool:
    try:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
    except FileNotFoundError:
        return False
    except OSError:  # not ours to remove (permissions): leave it
        return False
    return True


def sweep(directory, outputs=None, *, mine: bool = False) -> list[Path]:
    """Remove from ``directory`` the temporary files and DuckDB spill folders of processes that
    no longer run (and of this process too with ``mine``: a run stopping cleans up after
    itself); ``outputs`` limits the temporary files to those of these file names (a name too
    long for its temporary name counts by its hash, as :func:`~wikiorigin.files.temporary_name`
    makes it; none: spill folders only). Returns what was removed; a missing directory has
    nothing to remove."""
    import hashlib

    directory = Path(directory)
    names = None
    if outputs is not None:
        names = set()
        for output in outputs:
            name = Path(output).name
            names |= {name, hashlib.sha1(name.encode()).hexdigest()[:20]}
    try:
        entries = list(directory.iterdir())
    except OSError:
        return []
    removed = []
    for path in entries:
        pid = _owner(path.name, names)
        if pid is None or (running(pid) and not (mine and pid == os.getpid())):
            continue
        if _remove(path):
            removed.append(path)
    return removed
