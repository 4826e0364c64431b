"""The few exception types of wikiorigin.

Every message says what was expected, what was seen, and where (file, byte offset, page).
"""

__all__ = ["WikioriginError", "ParameterError", "DumpError", "UnknownWikiError", "MissingExtra"]


class WikioriginError(Exception):
    """Base class: the CLI turns these into a one-line message and exit code 2."""


class ParameterError(WikioriginError):
    """A value a caller must give, or gave wrong, named as the library takes it.

    The message names parameters in braces (``"give {language}"``): ``str(error)`` says
    ``language=`` (and, with ``value``, the value refused: ``language='xx'``), and :meth:`said`
    words them as another interface calls them (the command line: ``--language``,
    ``--language 'xx'``). ``parameter`` is the parameter at fault, ``value`` the value refused
    (``...`` when the message quotes none), ``also`` other parameters the message names (as
    alternatives: ``give {paraphrases} or {paraphraser}``)."""

    def __init__(self, parameter: str, message: str, value=..., *, also: tuple[str, ...] = ()):
        self.parameter, self.message, self.value, self.also = parameter, message, value, tuple(also)
        super().__init__(self.said())

    def said(self, names: dict[str, str] | None = None) -> str:
        """The message with each parameter called as ``names`` calls it (``{"language":
        "--language"}``); a parameter ``names`` leaves out is called as the library takes it
        (``language=``)."""
        names = names or {}
        text = self.message
        for name in (self.parameter, *self.also):
            called = names.get(name) or f"{name}="
            if name == self.parameter and self.value is not ...:
                called += (" " if name in names else "") + repr(self.value)
            text = text.replace("{" + name + "}", called)
        return text

    def __reduce__(self):  # pickled across processes with its parts, not its message
        return _parameter_error, (type(self), self.parameter, self.message, self.value, self.also)


def _parameter_error(kind, parameter, message, value, also):
    return kind(parameter, message, value, also=also)


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
