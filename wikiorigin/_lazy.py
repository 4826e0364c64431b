"""Lazy re-exports for the package ``__init__`` modules: a name in a package's ``__all__`` is
imported from its module on first access, so ``import wikiorigin`` stays cheap (no pyarrow,
torch or transformers until a function that needs them is asked for)."""

from __future__ import annotations

import importlib


def attach(package: str, exports: dict[str, str]):
    """Module ``__getattr__`` and ``__dir__`` for ``package``.

    ``exports`` maps each public name to the module that defines it, relative to ``package``
    (``".scan"``). The returned ``__getattr__`` imports that module on first access and caches
    the value in the package; a name not in ``exports`` raises ``AttributeError`` (so
    ``from package import submodule`` still finds sub-modules).
    """
    namespace = importlib.import_module(package).__dict__

    def __getattr__(name: str):
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(exports[name], package), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(exports))

    return __getattr__, __dir__


def resolve(module) -> None:
    """Import every lazy name of ``module``'s ``__all__`` (documentation tools read
    ``module.__dict__``, where lazy names appear only once accessed)."""
    for name in getattr(module, "__all__", ()):
        getattr(module, name)
