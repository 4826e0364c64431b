"""Write constraints.txt: the installed version of every package in wikiorigin's dependency tree.

    .venv/bin/python scripts/constraints.py > constraints.txt

Walks the requirements of wikiorigin with every extra (and of what they require, with their
markers evaluated for this interpreter) and pins each package at the version installed here.
torch is left out: the Makefile pins it (TORCH), so that a GPU machine can keep its own build.
"""

from __future__ import annotations

import re
import sys
from importlib import metadata

from packaging.requirements import Requirement

LEFT_OUT = {"wikiorigin", "torch"}


def _name(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def tree(root: str = "wikiorigin") -> dict[str, str]:
    """Canonical name -> installed version of every distribution ``root`` needs, with all extras."""
    extras = metadata.metadata(root).get_all("Provides-Extra") or []
    todo = [(root, set(extras))]
    seen: dict[str, set[str]] = {}
    while todo:
        dist_name, wanted = todo.pop()
        key = _name(dist_name)
        if key in seen and wanted <= seen[key]:
            continue
        seen.setdefault(key, set()).update(wanted)
        try:
            dist = metadata.distribution(dist_name)
        except metadata.PackageNotFoundError:
            continue  # a requirement whose marker holds but is not installed: left to pip
        for line in dist.requires or []:
            req = Requirement(line)
            envs = [{"extra": e} for e in (wanted or {""})]
            if req.marker is None or any(req.marker.evaluate(env) for env in envs):
                todo.append((req.name, set(req.extras)))
    versions = {}
    for key in seen:
        try:
            versions[key] = metadata.version(key)
        except metadata.PackageNotFoundError:
            pass
    return versions


if __name__ == "__main__":
    pins = tree()
    print("# The versions CI installs with (pip install -c constraints.txt): every package of")
    print("# wikiorigin's dependency tree, all extras, as installed on the project's test machine")
    print(
        f"# (Python {sys.version_info.major}.{sys.version_info.minor}). Made by scripts/constraints.py;"
        " torch is pinned by the Makefile."
    )
    for key in sorted(pins):
        if key not in LEFT_OUT:
            print(f"{key}=={pins[key]}")
