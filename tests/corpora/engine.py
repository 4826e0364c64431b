"""What the rendering tests need: MediaWiki (Debian's ``mediawiki`` package, see
:data:`wikiorigin.render.mediawiki.INSTALL`)."""

from __future__ import annotations

import os

import pytest

from wikiorigin.render.mediawiki import INSTALL, find_mediawiki


def require_mediawiki() -> None:
    """Skip the calling test module without MediaWiki, saying how to install it; under
    ``CI=true`` (every dependency installed) fail instead."""
    if find_mediawiki() is None:
        message = f"rendering needs MediaWiki: {INSTALL}"
        if os.environ.get("CI") == "true":
            pytest.fail(message + " (CI=true: these tests must run)", pytrace=False)
        pytest.skip(message, allow_module_level=True)
