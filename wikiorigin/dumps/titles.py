"""MediaWiki's title normalization for one site, as a link or a user writes a title.

Underscores and spaces, the first letter's case per the site's ``<case>``, localized namespace
names from ``<siteinfo>``, a section (``#...``) and a leading ``:`` dropped.
"""

from __future__ import annotations

import re

from .xmlhead import SiteInfo

__all__ = ["TitleNormalizer"]

_SPACES = re.compile(r"[ _]+")


class TitleNormalizer:
    """MediaWiki's title normalization for one site (its namespaces and ``<case>``)."""

    def __init__(self, site: SiteInfo):
        self.site = site
        self.prefixes = {}
        for key, name in site.namespaces.items():
            if name:
                self.prefixes[name.replace("_", " ").casefold()] = (key, name)

    def __call__(self, title: str) -> str:
        """``title`` as MediaWiki stores it on this site (see the module's docstring)."""
        title = _SPACES.sub(" ", title.replace("\u200e", "").replace("\u200f", "")).strip()
        title = title.split("#", 1)[0].strip()
        if title.startswith(":"):
            title = title[1:].strip()
        ns_name, rest = "", title
        if ":" in title:
            prefix, after = title.split(":", 1)
            found = self.prefixes.get(prefix.strip().casefold())
            if found is not None:
                ns_name, rest = found[1], after.strip()
        if self.site.case == "first-letter" and rest:
            rest = rest[0].upper() + rest[1:]
        return f"{ns_name}:{rest}" if ns_name else rest
