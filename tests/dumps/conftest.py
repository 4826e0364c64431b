"""Fixtures of the dump readers' tests."""

import pytest

from wikiorigin.dumps import stubs


@pytest.fixture(params=["compiled", "python"])
def scan_path(request, monkeypatch):
    """The fast engine's two paths: the compiled core and pure Python."""
    if request.param == "python":
        monkeypatch.setattr(stubs, "CORE", None)
    elif stubs.CORE is None:
        pytest.skip("the compiled core is not built (no C compiler at install)")
    return request.param
