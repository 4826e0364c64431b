"""A griffe extension for the API pages (mkdocs.yml): the docstrings' reStructuredText roles and
literal-block markers shown as Markdown. ``:func:`~.markup.split_reasoning``` becomes
`` `split_reasoning` ``, ``:data:`PAGES``` becomes `` `PAGES` ``, and a paragraph ending in
``::`` before an indented example ends in ``:``."""

from __future__ import annotations

import re

import griffe

_ROLE = re.compile(r":(?:py:)?(?:data|func|class|meth|mod|attr|exc|obj|const):`(~?)([^`]+)`")


def _role(match: re.Match) -> str:
    short, target = match.group(1), match.group(2).lstrip(".")
    return f"`{target.rsplit('.', 1)[-1] if short else target}`"


def markdown(text: str) -> str:
    """A docstring's roles as code spans, and ``::`` before a literal block as ``:``."""
    text = _ROLE.sub(_role, text)
    return re.sub(r"(?<=\S)::\n\n", ":\n\n", text)


class RstRoles(griffe.Extension):
    """Rewrite every docstring of the loaded package (aliases point at their targets)."""

    def on_package(self, *, pkg: griffe.Module, **kwargs) -> None:
        todo = [pkg]
        while todo:
            obj = todo.pop()
            if obj.docstring is not None:
                obj.docstring.value = markdown(obj.docstring.value)
            todo.extend(m for m in obj.members.values() if not m.is_alias)
