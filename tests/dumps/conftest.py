"""Fixtures of the dump readers' tests."""

import pytest

from wikiorigin.dumps import scanner as fast_scan


@pytest.fixture(params=["compiled", "python"])
def scan_path(request, monkeypatch):
    """The fast engine's two paths: the compiled core and pure Python."""
    if request.param == "python":
        monkeypatch.setattr(fast_scan, "CORE", None)
    elif fast_scan.CORE is None:
        pytest.skip("the compiled core is not built (no C compiler at install)")
    return request.param
