"""Lazy re-exports for the package ``__init__`` modules: a name in a package's ``__all__`` is
imported from its module on first access, so ``import wikiorigin`` stays cheap (no pyarrow,
torch or transformers until a function that needs them is asked for)."""

from __future__ import annotations

import sys


def attach(package: str, exports: dict[str, str], submodules: tuple[str, ...] = ()):
    """Module ``__getattr__`` and ``__dir__`` for ``package``.

    ``exports`` maps each public name to the module that defines it, relative to ``package``
    (``".scan"``). The returned ``__getattr__`` imports that module on first access and caches
    the value in the package; a name in ``submodules`` is imported as ``package.name`` (so
    ``wikiorigin.evaluators.summarize`` works after a bare ``import wikiorigin``). Any other
    name raises ``AttributeError`` (so ``from package import submodule`` still finds
    sub-modules).
    """
    namespace = sys.modules[package].__dict__

    def load(name: str):  # builtin __import__: importlib itself is not loaded at startup
        __import__(name)
        return sys.modules[name]

    def __getattr__(name: str):
        if name in submodules:
            return load(f"{package}.{name}")
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(load(package + exports[name]), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(exports) | set(submodules))

    return __getattr__, __dir__


def resolve(module) -> None:
    """Import every lazy name of ``module``'s ``__all__`` (documentation tools read
    ``module.__dict__``, where lazy names appear only once accessed)."""
    for name in getattr(module, "__all__", ()):
        getattr(module, name)
