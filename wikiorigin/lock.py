"""One run per output: two runs writing the same file (a set, a results directory, origins, a
corpus) would pay twice for every call and tear each other's files.

``with RunLock(out): ...`` takes an exclusive lock on ``OUT.lock``, a file next to the output
that holds the PID and the command line of the run writing it; a second run is refused with a
:class:`~wikiorigin.errors.ParameterError` naming that process. The lock is the kernel's
(``flock``; on Windows, ``msvcrt.locking`` on the file's first byte): it goes when its process
does, even on ``kill -9``, so a file left by a dead run is taken over. Neither module is
imported before a lock is taken, so the package imports on any system. The file is removed
when the run ends, and :func:`clear_stale` removes one whose run is gone (killed outright) when
another run writes beside it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from .errors import ParameterError, WikioriginError

__all__ = ["RunLock", "clear_stale"]


class RunLock:
    """An exclusive lock on ``OUT.lock`` for the run writing ``out`` (see the module docstring):
    ``with RunLock(out): ...``, or :meth:`acquire` / :meth:`release`. Acquiring raises
    :class:`~wikiorigin.errors.ParameterError`, naming the holder, while another run holds it;
    ``parameter`` is how the caller took ``out`` (``out``, or a results ``directory``), for that
    error to name."""

    def __init__(self, out: str | os.PathLike, *, parameter: str = "out"):
        self.out = Path(out)
        self.parameter = parameter
        self.path = self.out.with_name(self.out.name + ".lock")
        self._fd: int | None = None

    def __enter__(self) -> RunLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    @property
    def held(self) -> bool:
        """Whether this object holds the lock now."""
        return self._fd is not None

    def acquire(self) -> None:
        """Take the lock and write this process's PID and command line into the lock file. Raises
        :class:`~wikiorigin.errors.ParameterError`, naming the holder, if another run holds it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                _lock(fd)
            except BlockingIOError:
                holder = os.read(fd, 4096).decode(errors="replace").strip()
                os.close(fd)
                raise ParameterError(
                    self.parameter,
                    f"{self.out} is being written by another run "
                    f"({_describe(holder)}); wait for it to end, or give another "
                    f"{{{self.parameter}}}",
                ) from None
            if _same_file(fd, self.path):  # not a file the run before us removed meanwhile
                break
            os.close(fd)
        first = os.pread(fd, 64, 0).split(b"\n", 1)[0].strip()  # the offset stays at 0
        if first and not first.isdigit():  # a file of that name that no run wrote: never replaced
            os.close(fd)
            raise ParameterError(
                self.parameter,
                f"{self.path}: a file that is no run's lock, where the lock of {self.out} goes; "
                f"move it, or give another {{{self.parameter}}}",
            )
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n{' '.join(sys.argv)}\n".encode())
        self._fd = fd

    def release(self) -> None:
        """Remove the lock file and let the lock go (nothing if not held)."""
        if self._fd is None:
            return
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass
        os.close(self._fd)
        self._fd = None


def clear_stale(out: str | os.PathLike) -> bool:
    """Remove ``OUT.lock`` when the process it names no longer runs (a run killed outright
    leaves it): taken over and let go as a new run would, so a run that holds it meanwhile keeps
    it. Returns whether a file was removed."""
    from .leftovers import running

    lock = RunLock(out)
    try:
        pid = lock.path.read_bytes().split(b"\n", 1)[0].strip()
    except OSError:  # none there (or not readable: not ours to judge)
        return False
    if pid and not pid.isdigit():  # not a lock file (an input under that name): never ours to remove
        return False
    if pid.isdigit() and running(int(pid)):
        return False
    try:
        lock.acquire()
    except WikioriginError:  # held after all (its process id not yet written)
        return False
    lock.release()
    return True


def _lock(fd: int) -> None:
    """An exclusive lock on the open file ``fd``, or ``BlockingIOError`` while another holds
    it: ``flock`` where there is one, else (Windows) ``msvcrt.locking`` on the first byte."""
    try:
        import fcntl
    except ImportError:  # Windows
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
        except OSError:
            raise BlockingIOError(f"{fd} is locked") from None
        return
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)


def _same_file(fd: int, path: Path) -> bool:
    try:
        return os.fstat(fd).st_ino == os.stat(path).st_ino
    except FileNotFoundError:
        return False


def _describe(holder: str) -> str:
    pid, _, command = holder.partition("\n")
    if not pid:
        return "its process id not yet written"
    command = command.strip()
    command = command if len(command) <= 160 else command[:157] + "..."
    return f"process {pid}" + (f": {command}" if command else "")
