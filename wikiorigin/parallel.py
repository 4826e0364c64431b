"""Run per-wiki work with joblib: local processes, or a Dask distributed cluster.

``run_tasks(fn, args, jobs=N)`` runs ``fn(*a)`` for each ``a`` in ``args`` on ``N`` local
processes (joblib's loky backend; ``jobs=1`` runs in this process). With ``scheduler`` set to
a Dask scheduler address (``tcp://host:8786``) the same calls go to that cluster through
joblib's Dask backend (``pip install -e '.[dask]'``); the workers must see the same paths
(a shared file system). Results come back in the order of ``args``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from .errors import WikioriginError

__all__ = ["run_tasks", "connect"]


def connect(scheduler: str, timeout: float = 10.0):
    """A Dask client for ``scheduler``; a clear error when it cannot be reached."""
    try:
        from dask.distributed import Client
    except ImportError:
        raise WikioriginError(
            "--scheduler needs Dask: pip install -e '.[dask]' in the wikiorigin checkout (dask[distributed])"
        ) from None
    try:
        return Client(scheduler, timeout=timeout)
    except (OSError, TimeoutError) as exc:
        raise WikioriginError(
            f"cannot reach the Dask scheduler at {scheduler} within {timeout:g} s: {exc}"
        ) from None


def _collect(results, done) -> list:
    """The results as they come, each given to ``done`` (progress) on the way."""
    out = []
    for result in results:
        out.append(result)
        if done is not None:
            done(result)
    return out


def run_tasks(fn: Callable, args: Iterable[tuple], *, jobs: int = 1, scheduler=None, done=None) -> list:
    """``[fn(*a) for a in args]``, in parallel. ``scheduler``: an address or a Dask client.
    ``done(result)`` is called for each result as it comes in (progress)."""
    from joblib import Parallel, delayed, parallel_config

    calls = [delayed(fn)(*a) for a in args]
    if scheduler is None:
        if jobs < 1:
            raise ValueError(f"run_tasks: jobs must be >= 1, not {jobs}")
        backend = "sequential" if jobs == 1 else "loky"
        return _collect(Parallel(n_jobs=jobs, backend=backend, return_as="generator")(calls), done)
    client = connect(scheduler) if isinstance(scheduler, str) else scheduler
    try:
        with parallel_config(backend="dask"):
            return _collect(Parallel(n_jobs=-1, return_as="generator")(calls), done)
    finally:
        if isinstance(scheduler, str):
            client.close()
