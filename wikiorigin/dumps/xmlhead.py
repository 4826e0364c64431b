"""The ``<mediawiki>`` header and ``<siteinfo>`` of an XML export, read from raw bytes.

Both page-creation engines (and the pages-articles reader) start here, so that a file that is not
a dump, an unknown export schema version or a document type declaration (which could define
entities) is refused the same way everywhere.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..errors import DumpError
from .xmltext import element, unescape

__all__ = ["SiteInfo", "SUPPORTED_VERSIONS", "read_header"]

SUPPORTED_VERSIONS = ("0.10", "0.11")
"""The MediaWiki XML export versions the readers know (the ``version`` of ``<mediawiki>``)."""

_ROOT = re.compile(rb"<mediawiki\b([^>]*)>")
_VERSION = re.compile(rb'\bversion="([^"]+)"')
_XMLNS = re.compile(rb'xmlns="http://www\.mediawiki\.org/xml/export-([0-9.]+)/"')
_DBNAME, _SITENAME, _BASE, _CASE = (element(tag) for tag in ("dbname", "sitename", "base", "case"))
_NAMESPACE = re.compile(rb'<namespace key="(-?\d+)"[^>]*?(?:/>|>([^<]*)</namespace>)')

_HEADER_LIMIT = 1 << 20  # the header of a real dump is a few kB


@dataclass(slots=True)
class SiteInfo:
    """What the header says about the wiki and the export."""

    version: str
    dbname: str = ""
    sitename: str = ""
    base: str = ""
    case: str = "first-letter"
    namespaces: dict[int, str] = field(default_factory=dict)


def _text(m: re.Match | None) -> str:
    return unescape(m.group(1).decode("utf-8", "replace")) if m else ""


def read_header(read, path) -> tuple[SiteInfo, bytes]:
    """Read until the end of ``<siteinfo>`` (or the first ``<page>``).

    ``read(n)`` returns decompressed bytes. Returns the site info and the bytes already read
    after the header, which the caller continues from.
    """
    buf = b""
    while True:
        end = buf.find(b"</siteinfo>")
        if end >= 0:
            end += len(b"</siteinfo>")
            break
        page = buf.find(b"<page>")
        if page >= 0:
            end = page
            break
        chunk = read(1 << 16)
        if not chunk or len(buf) > _HEADER_LIMIT:
            end = len(buf)
            break
        buf += chunk
    head = buf[:end]
    root = _ROOT.search(head)
    if root is None:
        excerpt = buf[:60].decode("utf-8", "replace").replace("\n", " ")
        raise DumpError(f"{path}: not a MediaWiki XML export: expected a <mediawiki> root element, found {excerpt!r}")
    if b"<!DOCTYPE" in head[: root.start()] or b"<!ENTITY" in head:
        raise DumpError(f"{path}: refusing an XML document type declaration before <mediawiki>")
    attrs = root.group(1)
    m = _VERSION.search(attrs) or _XMLNS.search(attrs)
    version = m.group(1).decode("ascii", "replace") if m else ""
    if version not in SUPPORTED_VERSIONS:
        raise DumpError(
            f"{path}: unknown export schema version {version or '(none)'!r} at byte "
            f"{root.start()}; supported: {', '.join(SUPPORTED_VERSIONS)}"
        )
    info = SiteInfo(
        version=version,
        dbname=_text(_DBNAME.search(head)),
        sitename=_text(_SITENAME.search(head)),
        base=_text(_BASE.search(head)),
        case=_text(_CASE.search(head)) or "first-letter",
        namespaces={int(k): unescape((name or b"").decode("utf-8", "replace")) for k, name in _NAMESPACE.findall(head)},
    )
    return info, buf[end:]
