"""Packaging: every dependency of pyproject.toml (and of every extra) is pinned in
constraints.txt, the versions CI installs with, so a dependency added without a pin fails here
rather than installing whatever is newest; the package is marked as typed; the compiled core
stays optional."""

import re
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib", reason="Python 3.11 reads TOML")
ROOT = Path(__file__).resolve().parents[1]


def _name(requirement: str) -> str:
    return re.sub(r"[-_.]+", "-", re.match(r"[A-Za-z0-9._-]+", requirement).group(0)).lower()


def test_every_dependency_is_pinned_for_ci():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    wanted = {_name(r) for r in project["dependencies"]}
    for requirements in project["optional-dependencies"].values():
        wanted |= {_name(r) for r in requirements}
    pinned = {
        _name(line)
        for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#") and "==" in line
    }
    # torch is pinned by the Makefile (TORCH), so that a GPU machine can keep its own build
    assert sorted(wanted - pinned - {"torch"}) == [], "run scripts/constraints.py > constraints.txt"


def test_the_package_is_typed_and_ships_its_data():
    assert (ROOT / "wikiorigin" / "py.typed").exists()
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["package-data"]
    assert "py.typed" in data["wikiorigin"] and "review/static/*" in data["wikiorigin"]


def test_the_compiled_core_is_optional():
    assert "optional=True" in (ROOT / "setup.py").read_text(encoding="utf-8")
