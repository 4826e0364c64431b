"""The few exception types of wikiorigin.

Every message says what was expected, what was seen, and where (file, byte offset, page).
"""

import shlex

__all__ = ["WikioriginError", "ParameterError", "DumpError", "UnknownWikiError", "MissingExtra"]


class WikioriginError(Exception):
    """Base class: the CLI turns these into a one-line message and exit code 2."""


class ParameterError(WikioriginError):
    """A value a caller must give, or gave wrong, named as the library takes it.

    The message names parameters in braces (``"give {language}"``): ``str(error)`` says
    ``language=`` (and, with ``value``, the value refused: ``language='xx'``), and :meth:`said`
    words them as another interface calls them (the command line: ``--language``, and
    ``--language xx``: the value as a shell takes it). ``parameter`` is the parameter at fault,
    ``value`` the value refused (``...`` when the message quotes none), ``also`` other
    parameters the message names (as alternatives: ``give {paraphrases} or {paraphraser}``), or
    a mapping of them to the values the message quotes (``{min_editions} is more than
    {max_editions}``). A subclass about one parameter fixes it in its own constructor
    (:class:`~wikiorigin.llm.cache.CacheError`: ``cache``)."""

    def __init__(self, parameter: str, message: str, value=..., *, also=()):
        self.parameter, self.message, self.value = parameter, message, value
        self.also = tuple(also)
        self.values = {name: v for name, v in (also.items() if isinstance(also, dict) else ()) if v is not ...}
        if value is not ...:
            self.values[parameter] = value
        super().__init__(self.said())

    def said(self, names: dict[str, str | None] | None = None) -> str:
        """The message with each parameter called as ``names`` calls it (``{"language":
        "--language"}``); a parameter ``names`` leaves out (or maps to None) is called as the
        library takes it (``language=``)."""
        names = names or {}
        text = self.message
        for name in (self.parameter, *self.also):
            flag = names.get(name)
            called = flag or f"{name}="
            if name in self.values:  # a flag's value as typed, in place of its metavar (--paraphrases FILE)
                value = self.values[name]
                called = flag.split()[0] + " " + shlex.quote(str(value)) if flag else called + repr(value)
            text = text.replace("{" + name + "}", called)
        return text

    def __reduce__(self):  # pickled across processes with its parts, whatever a subclass's constructor
        return _rebuilt, (type(self), self.args), self.__dict__


def _rebuilt(kind, args):
    return kind.__new__(kind, *args)


class DumpError(WikioriginError):
    """A dump file is corrupt, torn, of the wrong kind, or in an unknown format."""


class UnknownWikiError(WikioriginError, KeyError):
    """A name that is not a known Wikipedia edition."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class MissingExtra(WikioriginError, ImportError):
    """A feature whose optional dependencies are not installed; the message says which extra
    to install and how. An environment problem (exit 2), still an ``ImportError`` to callers
    that test for one."""
