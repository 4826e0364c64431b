"""The ``wikiorigin`` command, one module per stage: :mod:`.dumps` (languages, download, scan,
qids), :mod:`.origins` (origins, subset), :mod:`.corpus`, :mod:`.build`, :mod:`.eval`,
:mod:`.export` and :mod:`.review`. Each registers its commands with ``add_commands(sub)``, every command's options
beside its handler; the option groups several share (LLM, model under evaluation) are in
:mod:`.options`. Thin: a handler parses options, calls one library function, prints a summary.

:func:`main` is the top level: exit 0 done, 2 bad input or environment, 1 an unexpected error,
130 interrupted (Ctrl-C), 143 stopped by SIGTERM (handled as Ctrl-C: the work finished is kept,
temporary files and worker processes go). What a run holds (its output checked, what killed
runs left swept, the whole-run lock) is the library's (:mod:`wikiorigin.runs`), not the
command line's."""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import threading
from contextlib import contextmanager

from .. import __version__
from ..errors import ParameterError, WikioriginError

__all__ = ["main", "parser"]


class _Help(argparse.HelpFormatter):
    """Every option's help says its default, unless it has none or says it already."""

    def _get_help_string(self, action):
        text = action.help or ""
        if (
            "%(default)" in text
            or "default" in text
            or not action.option_strings
            or action.default is None
            or action.default is False
            or action.default is argparse.SUPPRESS
        ):
            return text
        return f"{text} (default: %(default)s)" if text else "(default: %(default)s)"


class _Parser(argparse.ArgumentParser):
    """Every command's parser (sub-commands inherit it): help with defaults, errors in one line."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", _Help)
        super().__init__(*args, **kwargs)

    def error(self, message: str):
        """A wrong option is one line, like every other error (exit 2); --help has the usage."""
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


_STAGES = ("dumps", "origins", "wikidata", "corpus", "build", "eval", "export", "review")
# The stage module of each command, so that a command imports and builds only its own stage's
# options (all of them take 0.03 s, a tenth of a scan's start). Only a hint: a command its stage
# turns out not to have is parsed with every stage's commands, as is a name missing here.
_STAGE_OF = {
    "languages": "dumps",
    "download": "dumps",
    "scan": "dumps",
    "qids": "dumps",
    "origins": "origins",
    "subset": "origins",
    "wikidata": "wikidata",
    "corpus": "corpus",
    "build": "build",
    "eval": "eval",
    "export": "export",
    "review": "review",
}


def _stage(name: str):
    """The stage module ``wikiorigin.cli.NAME``, imported when a command needs it."""
    return importlib.import_module(f"{__name__}.{name}")


def parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``wikiorigin`` parser, with every stage's commands, in the order of the stages; given
    a ``command``, with only the commands of its stage (the parser ``main`` uses)."""
    p = _Parser(
        prog="wikiorigin",
        description="Culture-specific QA datasets from Wikipedia and Wikidata dumps.",
    )
    p.add_argument("--version", action="version", version=f"wikiorigin {__version__}")
    p.add_argument("--debug", action="store_true", help="show the traceback of an unexpected error")
    sub = p.add_subparsers(dest="command", required=True)
    stage = _STAGE_OF.get(command) if command is not None else None
    for each in (stage,) if stage is not None else _STAGES:
        _stage(each).add_commands(sub)
    if stage is not None and command not in sub.choices:
        return parser()
    return p


_parser = parser  # the name the tests import


# The optional dependencies and the extra (pyproject.toml) that installs each.
_EXTRAS = {
    "torch": "eval",
    "transformers": "eval",
    "dask": "dask",
    "distributed": "dask",
    "starlette": "review",
    "uvicorn": "review",
}


def _unexpected(exc: Exception) -> int:
    first = str(exc).splitlines()[0] if str(exc) else ""
    print(
        f"wikiorigin: error: unexpected {type(exc).__name__}: {first} "
        "(run with --debug for the traceback, and please report it)",
        file=sys.stderr,
    )
    return 1


def _printable_output() -> None:
    """Text the terminal's encoding cannot show (a Japanese title under ``PYTHONIOENCODING=ascii``
    or a C locale) is printed backslash-escaped, never an error: a summary line printed after
    the outputs are written must not turn a finished run into a failed one."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")


@contextmanager
def _terminate_as_interrupt():
    """While the block runs, SIGTERM (``kill``, a scheduler's stop, a closing container) raises
    ``KeyboardInterrupt`` as Ctrl-C does, so that the same clean-up runs (temporary files
    removed, worker processes ended, caches closed) and the same resume line is printed. Yields
    the list of the signals received. A second SIGTERM while stopping ends the process at once."""
    received: list[int] = []

    def stop(signum, frame):
        if received:
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
        received.append(signum)
        raise KeyboardInterrupt

    if threading.current_thread() is not threading.main_thread():  # main() called from a thread
        yield received
        return
    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield received
    finally:
        signal.signal(signal.SIGTERM, previous)


def _input_files(args) -> list[str]:
    """The files a command was given to read (options naming existing files, not ``--out``)."""
    values = []
    for name, value in vars(args).items():
        if name != "out":
            values += value if isinstance(value, list) else [value]
    return [os.path.abspath(v) for v in values if isinstance(v, str) and os.path.isfile(v)]


def _paths(frame, keys=None):
    """The file paths among a frame's local values (of the names ``keys``, when given)."""
    for key, value in frame.f_locals.items():
        if isinstance(value, (str, os.PathLike)) and (keys is None or key in keys):
            yield os.fspath(value)


def _reading(exc: BaseException, args) -> str | None:
    """The input file pyarrow was reading when it raised ``exc``: the file its reader was
    opening (``source``), else the command's input file that the code calling into pyarrow
    holds. None when pyarrow was not reading a file (it was writing one, or converting rows)."""
    frames, tb = [], exc.__traceback__
    while tb is not None:  # outermost first
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    first = next((i for i, f in enumerate(frames) if str(f.f_globals.get("__name__", "")).startswith("pyarrow")), 0)
    if not first:  # not raised in pyarrow
        return None
    for frame in frames[first:]:
        for path in _paths(frame, ("source", "where", "path_or_paths")):
            if os.path.isfile(path):
                return path
    inputs = set(_input_files(args))
    return next((p for p in _paths(frames[first - 1]) if os.path.abspath(p) in inputs), None)


def _unreadable(exc: BaseException, args) -> str | None:
    """One line for an input file pyarrow could not read (a damaged or hostile Parquet file:
    Arrow's errors, its I/O errors that name no file, text that is not UTF-8), naming the file;
    None when ``exc`` is not that."""
    arrow = sys.modules.get("pyarrow")
    if arrow is None or not isinstance(exc, (arrow.lib.ArrowException, OSError, UnicodeDecodeError)):
        return None
    if isinstance(exc, OSError) and exc.filename:
        return None
    where = _reading(exc, args)
    if where is None:
        return None
    first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return f"{where}: cannot be read ({type(exc).__name__}: {first}): a damaged file, or not one this command reads"


def _symlink_loop(exc: RuntimeError) -> str | None:
    """pathlib's ``Symlink loop from '...'`` (Python before 3.13; later ones raise ``OSError``)."""
    text = str(exc)
    if text.startswith("Symlink loop from "):
        path = text.removeprefix("Symlink loop from ").strip("'\"")
        return f"{path}: a symbolic link that leads back to itself (a symlink loop); give the file it should name"
    return None


def _interrupted(received: list[int]) -> int:
    """The resume line of a run stopped by Ctrl-C or SIGTERM (what it wrote so far, its lock and
    its temporary files, were let go by the library as the interrupt passed through it)."""
    what = "interrupted" if not received else f"stopped by {signal.Signals(received[0]).name}"
    print(
        f"wikiorigin: {what}; finished work is kept (completed files, shards, the request cache): "
        "run the same command again to resume",
        file=sys.stderr,
    )
    return 128 + (received[0] if received else signal.SIGINT)


def _missing_extra(exc: ImportError, args) -> int:
    module = (exc.name or "").split(".")[0]
    extra = _EXTRAS.get(module)
    if extra is None or args.debug:
        if args.debug:
            raise exc
        return _unexpected(exc)
    print(
        f"wikiorigin: error: `wikiorigin {args.command}` needs {module}, which is not installed: "
        f"pip install -e '.[{extra}]' in the wikiorigin checkout",
        file=sys.stderr,
    )
    return 2


def _run(args, received: list[int]) -> int:
    """The command, its errors one line each (see :func:`main`)."""
    try:
        return args.func(args)
    except WikioriginError as exc:  # a library parameter said as the command's flag (``--cache``)
        from .options import flags

        said = exc.said(flags(args, exc)) if isinstance(exc, ParameterError) else exc
        print(f"wikiorigin: error: {said}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. `wikiorigin languages | head`
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        return _interrupted(received)
    except ImportError as exc:  # an optional dependency not installed: the environment
        return _missing_extra(exc, args)
    except Exception as exc:  # the last boundary: one line, not a traceback, for the user
        if args.debug:
            raise
        problem = _unreadable(exc, args) or (_symlink_loop(exc) if isinstance(exc, RuntimeError) else None)
        if problem is not None:
            print(f"wikiorigin: error: {problem}", file=sys.stderr)
            return 2
        if isinstance(exc, OSError):  # the environment: a full disk, a permission, a file gone
            where = f"{exc.filename}: " if exc.filename else ""
            print(f"wikiorigin: error: {where}{exc.strerror or exc}", file=sys.stderr)
            return 2
        return _unexpected(exc)


def main(argv: list[str] | None = None) -> int:
    """The command line: exit 0 done, 2 bad input or environment (one line), 1 an unexpected
    error (one line; ``--debug`` shows the traceback), 130 interrupted (Ctrl-C), 143 stopped by
    SIGTERM (as Ctrl-C: finished work kept, temporary files and worker processes gone, the
    resume line printed). Text the terminal cannot show is printed backslash-escaped."""
    _printable_output()
    given = sys.argv[1:] if argv is None else argv
    args = parser(next((word for word in given if not word.startswith("-")), None)).parse_args(argv)
    with _terminate_as_interrupt() as received:
        return _run(args, received)
