"""What every run that writes holds, whoever calls it (a command, a notebook, a script):
:func:`guarded_run`.

``with guarded_run(out, inputs=..., cache=...) as lock: ...`` checks the output against the
run's inputs and its request cache (:func:`check_paths`), sweeps what runs killed outright left
beside ``out`` (and inside it, a results directory: :mod:`wikiorigin.leftovers`, a dead run's
``OUT.lock``), takes the whole-run lock (:class:`~wikiorigin.lock.RunLock`: a second run on
``out`` is refused, naming the first) and lets it go when the block ends, however it ends; a
block that ends on an exception (Ctrl-C, SIGTERM handled as it, an error) removes its own
temporary files too. Errors are :class:`~wikiorigin.errors.ParameterError` naming the
parameters (``out``, ``cache``, an input's name), so the command line says its flags.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from .errors import ParameterError
from .leftovers import sweep
from .lock import RunLock, clear_stale

__all__ = ["guarded_run", "check_paths", "check_cache", "sweep_leftovers"]

PathLike = str | os.PathLike
Inputs = Mapping[str, object] | Iterable[object]


def _named(inputs: Inputs | None) -> list[tuple[str | None, Path]]:
    """The inputs that are paths, each with its parameter's name (None when given unnamed)."""
    if inputs is None:
        return []
    pairs = inputs.items() if isinstance(inputs, Mapping) else ((None, v) for v in inputs)
    return [(name, Path(v)) for name, v in pairs if isinstance(v, (str, os.PathLike)) and str(v)]


def cache_paths(cache: PathLike | Iterable[PathLike | None] | None) -> list[Path]:
    """The request caches given as one path, several (None passed over), or None."""
    if cache is None:
        return []
    if isinstance(cache, (str, os.PathLike)):
        return [Path(cache)]
    return list(dict.fromkeys(Path(c) for c in cache if c is not None))


def check_paths(
    out: PathLike,
    *,
    inputs: Inputs | None = (),
    cache: PathLike | Iterable[PathLike | None] | None = None,
    parameter: str = "out",
    siblings: Iterable[PathLike] = (),
) -> None:
    """Before any work: ``out``, and the files written beside it (``siblings``), are none of the
    run's ``inputs`` (paths, or a mapping of parameter names to paths: the messages name them),
    and the request ``cache`` (a path, or several) is none of the inputs, not ``out``, not a file
    written beside it (its lock, ``siblings``) nor inside it (a results directory): opening a
    cache as SQLite would destroy that file, writing ``out`` would destroy the cache. A file
    written beside ``out`` that is a directory is refused too. Raises
    :class:`~wikiorigin.errors.ParameterError`."""
    target = Path(out).resolve()
    beside = [Path(s) for s in siblings]
    for _, path in _named(inputs):
        if path.resolve() == target:
            raise ParameterError(
                parameter, f"{out}: the output would overwrite the input {path}; give another {{{parameter}}}"
            )
        for written in beside:
            if path.resolve() == written.resolve():
                raise ParameterError(
                    parameter,
                    f"{out}: the file written beside it, {written.name}, would overwrite the input {path}; "
                    f"give another {{{parameter}}}",
                )
    for written in beside:
        if written.is_dir():  # a run writes a file there: refused before any work, not after
            raise ParameterError(
                parameter, f"{out}: {written.name} beside it is a directory, where the run writes a file; move it"
            )
    check_cache(cache, out, inputs=inputs, parameter=parameter, siblings=siblings)


def check_cache(
    cache: PathLike | Iterable[PathLike | None] | None,
    out: PathLike,
    *,
    inputs: Inputs | None = (),
    parameter: str = "out",
    siblings: Iterable[PathLike] = (),
) -> None:
    """The request ``cache`` (a path, or several) none of the ``inputs``, nor ``out``, its lock,
    a file of ``siblings`` or one inside ``out`` (see :func:`check_paths`): checked before the
    cache is opened. Raises :class:`~wikiorigin.errors.ParameterError` about ``cache``."""
    target = Path(out).resolve()
    beside = {target, RunLock(target).path, *(Path(s).resolve() for s in siblings)}
    named = _named(inputs)
    for path in cache_paths(cache):
        _check_one(path, Path(out), target, beside, named, parameter)


def _check_one(cache: Path, out: Path, target: Path, beside: set, named: list, parameter: str) -> None:
    where = cache.resolve()
    found = next(((name, path) for name, path in named if path.resolve() == where), None)
    if found is not None:
        name, path = found
        what, values = ("{" + name + "}", {name: str(path)}) if name else (f"the input {path}", {})
    elif where in beside or where.is_relative_to(target):
        what = ("" if where == target else "a file of ") + "{" + parameter + "}"
        values = {parameter: str(out)}
    else:
        return
    raise ParameterError(
        "cache",
        f"{{cache}}: the request cache would overwrite {what}; give another file for the cache",
        str(cache),
        also=values,
    )


def sweep_leftovers(out: PathLike, *, mine: bool = False) -> list[Path]:
    """Remove what runs killed outright left beside ``out`` (temporary files named after it,
    spill folders, a dead run's ``OUT.lock``) and inside it when it is a directory; with
    ``mine``, this process's too (a run stopping). Returns what was removed."""
    out = Path(out)
    removed = sweep(out.parent, [out], mine=mine)
    if out.is_dir():
        removed += sweep(out, mine=mine)
    if not mine and RunLock(out).path.is_file() and clear_stale(out):
        removed.append(RunLock(out).path)
    return removed


@contextmanager
def guarded_run(
    out: PathLike,
    *,
    inputs: Inputs | None = (),
    cache: PathLike | Iterable[PathLike | None] | None = None,
    parameter: str = "out",
    siblings: Iterable[PathLike] = (),
) -> Iterator[RunLock]:
    """Hold everything a run writing ``out`` needs (see the module docstring): the paths checked
    (:func:`check_paths`), what dead runs left swept (:func:`sweep_leftovers`), the whole-run
    :class:`~wikiorigin.lock.RunLock` taken (a second run on ``out`` is refused with a
    :class:`~wikiorigin.errors.ParameterError` naming it) and yielded, to hand to the
    ``save(..., lock=)`` of what the run makes. The lock goes when the block ends; a block
    ended by an exception also removes this process's temporary files of ``out``."""
    check_paths(out, inputs=inputs, cache=cache, parameter=parameter, siblings=siblings)
    sweep_leftovers(out)
    lock = RunLock(out, parameter=parameter)
    lock.acquire()
    try:
        yield lock
    except BaseException:
        sweep_leftovers(out, mine=True)
        raise
    finally:
        lock.release()
