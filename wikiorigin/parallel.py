"""Run per-wiki work with joblib: local processes, or a Dask distributed cluster.

``run_tasks(fn, args, jobs=N)`` runs ``fn(*a)`` for each ``a`` in ``args`` on ``N`` local
processes (joblib's loky backend; ``jobs=1`` runs in this process). With ``scheduler`` set to
a Dask scheduler address (``tcp://host:8786``) the same calls go to that cluster through
joblib's Dask backend (``pip install -e '.[dask]'``); the workers must see the same paths
(a shared file system). Results come back in the order of ``args``. No more processes are
started than there are calls.

``stream_tasks(fn, args, jobs=N)`` is the same for a long stream of calls whose results are
consumed as they come (articles converted and written): ``args`` is read only as calls are
given out, at most a few ahead of the result waited for, so that memory stays flat whatever
the length of the stream; results come in the order of ``args``.

The local worker processes end with the call: joblib would keep them for five minutes, for a
next call this program does not make, and a run stopped meanwhile (Ctrl-C, SIGTERM) would
leave them behind with their semaphores and memory-mapped folders. When the call is stopped
they are killed, unfinished tasks and all (their temporary files are then left over:
:func:`wikiorigin.leftovers.sweep`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator

from .errors import ParameterError, WikioriginError

__all__ = ["run_tasks", "stream_tasks", "connect"]


def connect(scheduler: str, timeout: float = 10.0):
    """A Dask client for ``scheduler``; a clear error when it cannot be reached."""
    try:
        from dask.distributed import Client
    except ImportError:
        raise ParameterError(
            "scheduler",
            "{scheduler} needs Dask: pip install -e '.[dask]' in the wikiorigin checkout (dask[distributed])",
        ) from None
    try:
        return Client(scheduler, timeout=timeout)
    except (OSError, TimeoutError) as exc:
        raise WikioriginError(f"cannot reach the Dask scheduler at {scheduler} within {timeout:g} s: {exc}") from None


def _collect(results, done) -> list:
    """The results as they come, each given to ``done`` (progress) on the way."""
    out = []
    for result in results:
        out.append(result)
        if done is not None:
            done(result)
    return out


def _stop_workers(kill: bool) -> None:
    """End joblib's local worker processes now (``kill``: at once, work and all) instead of after
    their five idle minutes. joblib keeps one executor per process for its loky backend; its
    reference is loky's module global (no public handle to it exists)."""
    from joblib.externals.loky import reusable_executor

    executor = getattr(reusable_executor, "_executor", None)
    if executor is not None:
        executor.shutdown(wait=True, kill_workers=kill)


def _kill_workers() -> None:
    """Kill joblib's local worker processes at once, with the calls they hold. Done before the
    executor is shut down, which then finds a broken pool and cleans it up whole; asked to kill
    them itself while calls still wait in its queue, loky's manager thread can fail (a KeyError
    on a call it has just dropped) and leave its queues open."""
    from joblib.externals.loky import reusable_executor
    from joblib.externals.loky.backend.utils import kill_process_tree

    executor = getattr(reusable_executor, "_executor", None)
    for process in list(getattr(executor, "_processes", {}).values()):
        try:
            kill_process_tree(process)
        except ProcessLookupError:
            pass


def _run_local(calls: list, jobs: int, done) -> list:
    """The calls on ``jobs`` local processes (loky), the workers ended when the call ends."""
    from joblib import Parallel

    results = Parallel(n_jobs=jobs, backend="loky", return_as="generator")(calls)
    stopped = True
    try:
        out = _collect(results, done)
        stopped = False
        return out
    finally:
        results.close()
        _stop_workers(kill=stopped)


def run_tasks(fn: Callable, args: Iterable[tuple], *, jobs: int = 1, scheduler=None, done=None) -> list:
    """``[fn(*a) for a in args]``, in parallel. ``scheduler``: an address or a Dask client.
    ``done(result)`` is called for each result as it comes in (progress). Local worker
    processes end with the call (killed when it is stopped: an error, Ctrl-C, SIGTERM)."""
    from joblib import Parallel, delayed, parallel_config

    calls = [delayed(fn)(*a) for a in args]
    if scheduler is None:
        if jobs < 1:
            raise ValueError(f"run_tasks: jobs must be >= 1, not {jobs}")
        jobs = min(jobs, len(calls))  # a worker with nothing to do would only cost its start
        if jobs <= 1:
            return _collect(Parallel(n_jobs=1, backend="sequential", return_as="generator")(calls), done)
        return _run_local(calls, jobs, done)
    client = connect(scheduler) if isinstance(scheduler, str) else scheduler
    try:
        with parallel_config(backend="dask"):
            return _collect(Parallel(n_jobs=-1, return_as="generator")(calls), done)
    finally:
        if isinstance(scheduler, str):
            client.close()


def stream_tasks(
    fn: Callable, args: Iterable[tuple], *, jobs: int = 1, scheduler=None, ahead: int | None = None
) -> Iterator:
    """``fn(*a)`` for each ``a`` of ``args``, yielded in the order of ``args``, computed on
    ``jobs`` local processes (loky; ``jobs=1``: here, one after the other) or on a Dask
    cluster (``scheduler``: an address or a client). ``args`` is read in this thread, only as
    calls are given out: at most ``ahead`` beyond the result waited for (by default one a
    local worker, which has its next call at hand; on Dask twice the cluster's threads), so a
    stream of any length goes through in flat memory. A generator: close it
    (``contextlib.closing``) when stopping early; local workers end with it (killed, their
    unfinished calls with them, when it stops early: an error, Ctrl-C, SIGTERM)."""
    if scheduler is None:
        if jobs < 1:
            raise ValueError(f"stream_tasks: jobs must be >= 1, not {jobs}")
        if jobs == 1:
            for a in args:
                yield fn(*a)
            return
        from joblib.externals.loky import get_reusable_executor

        submit = get_reusable_executor(max_workers=jobs).submit
        ahead = ahead or jobs
    else:
        client = connect(scheduler) if isinstance(scheduler, str) else scheduler
        submit = lambda *a: client.submit(*a, pure=False)  # noqa: E731
        ahead = ahead or 2 * max(1, sum(client.nthreads().values()))
    pending: deque = deque()
    finished = False
    try:
        for a in args:
            pending.append(submit(fn, *a))
            if len(pending) > ahead:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
        finished = True
    finally:
        if scheduler is None:
            if not finished:
                _kill_workers()
            _stop_workers(kill=False)
        else:
            for future in pending:
                future.cancel()
            if isinstance(scheduler, str):
                client.close()
