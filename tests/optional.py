"""Optional dependencies in the tests. A module of an extra that is not installed skips the tests
that need it, saying which extra to install, so that an install without extras collects and runs
the rest; under ``CI=true`` (every extra installed) a missing one fails instead: tests/conftest.py
makes ``pytest.importorskip`` strict there, and :func:`needs` runs the test."""

import importlib
import importlib.util
import os

import pytest

CI = os.environ.get("CI") == "true"


def optional(module: str):
    """``module`` imported, or None when it is not installed (an error under CI); the tests that
    use it carry :func:`needs`."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError:
        if CI:
            raise
        return None


def installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # its parent package is missing
        return False


def needs(*modules: str, extra: str) -> pytest.MarkDecorator:
    """A test that needs ``modules``: skipped where one is not installed, run under CI."""
    missing = [m for m in modules if not installed(m)]
    return pytest.mark.skipif(
        bool(missing) and not CI, reason=f"{', '.join(missing)} not installed: pip install -e '.[{extra}]'"
    )
