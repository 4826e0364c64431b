"""The ``wikiorigin`` command, one module per stage: :mod:`.dumps` (languages, download, scan,
qids), :mod:`.origins` (origins, subset), :mod:`.corpus`, :mod:`.build`, :mod:`.eval`,
:mod:`.export` and :mod:`.review`. Each registers its commands with ``add_commands(sub)``, every command's options
beside its handler; the option groups several share (LLM, model under evaluation) are in
:mod:`.options`. Thin: a handler parses options, calls one library function, prints a summary.

:func:`main` is the top level: exit 0 done, 2 bad input or environment, 1 an unexpected error,
130 interrupted."""

from __future__ import annotations

import argparse
import sys

from .. import __version__
from ..errors import WikioriginError
from . import build, corpus, dumps, eval, export, origins, review

__all__ = ["main", "parser"]


class _Help(argparse.HelpFormatter):
    """Every option's help says its default, unless it has none or says it already."""

    def _get_help_string(self, action):
        text = action.help or ""
        if "%(default)" in text or "default" in text or not action.option_strings \
                or action.default is None or action.default is False or action.default is argparse.SUPPRESS:
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


def parser() -> argparse.ArgumentParser:
    """The ``wikiorigin`` parser, with every stage's commands, in the order of the stages."""
    p = _Parser(
        prog="wikiorigin",
        description="Culture-specific QA datasets from Wikipedia and Wikidata dumps.",
    )
    p.add_argument("--version", action="version", version=f"wikiorigin {__version__}")
    p.add_argument("--debug", action="store_true", help="show the traceback of an unexpected error")
    sub = p.add_subparsers(dest="command", required=True)
    for stage in (dumps, origins, corpus, build, eval, export, review):
        stage.add_commands(sub)
    return p


_parser = parser  # the name the tests import


# The optional dependencies and the extra of setup.py that installs each.
_EXTRAS = {"torch": "eval", "transformers": "eval", "scipy": "eval", "dask": "dask", "distributed": "dask",
           "starlette": "review", "uvicorn": "review", "statsmodels": "review"}


def _unexpected(exc: Exception) -> int:
    first = str(exc).splitlines()[0] if str(exc) else ""
    print(f"wikiorigin: error: unexpected {type(exc).__name__}: {first} "
          "(run with --debug for the traceback, and please report it)", file=sys.stderr)
    return 1


def main(argv: list[str] | None = None) -> int:
    """The command line: exit 0 done, 2 bad input or environment (one line), 1 an unexpected
    error (one line; ``--debug`` shows the traceback), 130 interrupted."""
    args = parser().parse_args(argv)
    try:
        return args.func(args)
    except WikioriginError as exc:
        print(f"wikiorigin: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. `wikiorigin languages | head`
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print("wikiorigin: interrupted; finished work is kept (completed files, shards, the request cache): "
              "run the same command again to resume", file=sys.stderr)
        return 130
    except ImportError as exc:  # an optional dependency not installed: the environment
        module = (exc.name or "").split(".")[0]
        extra = _EXTRAS.get(module)
        if extra is None or args.debug:
            if args.debug:
                raise
            return _unexpected(exc)
        print(f"wikiorigin: error: `wikiorigin {args.command}` needs {module}, which is not installed: "
              f"pip install -e '.[{extra}]' in the wikiorigin checkout", file=sys.stderr)
        return 2
    except OSError as exc:  # the environment: a full disk, a permission, a file gone
        if args.debug:
            raise
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"wikiorigin: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # the last boundary: one line, not a traceback, for the user
        if args.debug:
            raise
        return _unexpected(exc)
