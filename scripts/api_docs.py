"""Build the API reference (HTML, pdoc) of the public modules of wikiorigin.

    python scripts/api_docs.py docs/api

Used by ``make docs`` and by tests/test_api_docs.py. The command line package is left out: its
reference is ``wikiorigin --help``. The packages' names are imported lazily, so each public
``__all__`` is resolved first (pdoc reads only what a module has already imported).
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
import warnings
from pathlib import Path

import wikiorigin
from wikiorigin._lazy import resolve

EXCLUDED = ("wikiorigin.cli", "wikiorigin.cli_eval")


def public_modules() -> list[str]:
    """Names of the documented modules: every module of wikiorigin whose dotted name has no
    part starting with ``_``, less the command line (:data:`EXCLUDED` and what lies under it)."""
    names = ["wikiorigin"] + [m.name for m in pkgutil.walk_packages(wikiorigin.__path__, "wikiorigin.")]
    return [n for n in names
            if not any(part.startswith("_") for part in n.split("."))
            and not any(n == e or n.startswith(e + ".") for e in EXCLUDED)]


def build(out: Path) -> list[str]:
    """Write the reference to ``out`` (one HTML page per module); return the modules documented."""
    import pdoc

    names = public_modules()
    for name in names:
        resolve(importlib.import_module(name))
    with warnings.catch_warnings():
        # each package's spec also walks its sub-modules, which are named on their own too
        warnings.filterwarnings("ignore", message="The module specification")
        pdoc.pdoc(*names, output_directory=Path(out))
    return names


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python scripts/api_docs.py OUT_DIR")
    modules = build(Path(sys.argv[1]))
    print(f"API reference of {len(modules)} modules in {sys.argv[1]}/index.html")
