"""The one writer of MediaWiki XML export elements for the synthetic dumps.

Every generator here that writes a stub, history or pages-articles export builds its pages
with :func:`page` and :func:`revision`, so indentation, element order and escaping are the
same in all of them. :func:`header` opens a document through ``</siteinfo>``, :data:`FOOTER`
closes it; :func:`contributor` and :func:`text_stub` / :func:`text` write the parts of a
revision that vary. Text is escaped as MediaWiki escapes it (:func:`escape`). Random exports
give times as seconds after a fixed epoch (:func:`at`, :func:`iso`) and draw words from
:data:`WORDS`.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta, timezone

__all__ = [
    "header",
    "FOOTER",
    "page",
    "revision",
    "contributor",
    "text_stub",
    "text",
    "escape",
    "SHA1",
    "WORDS",
    "at",
    "iso",
]

SHA1 = "phoiac9h4m842xq45sp7s6u21eteeq1"  # the sha1 every synthetic revision claims
"""The revision ``sha1`` every synthetic revision claims."""
FOOTER = "</mediawiki>\n"
"""The closing tag of a MediaWiki XML export."""
WORDS = ("Kappa", "Tengu", "Oni", "Yuki-onna", "Nue", "Baku", "Tanuki", "Kitsune", "Rokurokubi")
"""The words synthetic page titles and texts are made of."""
_EPOCH = datetime(2001, 1, 15, tzinfo=timezone.utc)
_HEADER = """<mediawiki xmlns="http://www.mediawiki.org/xml/export-{v}/" \
xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" \
xsi:schemaLocation="http://www.mediawiki.org/xml/export-{v}/ \
http://www.mediawiki.org/xml/export-{v}.xsd" version="{v}" xml:lang="en">
  <siteinfo>
    <sitename>Wikipedia</sitename>
    <dbname>{dbname}</dbname>
    <base>https://example.org/wiki/Main_Page</base>
    <generator>MediaWiki 1.41.0-wmf.1</generator>
    <case>first-letter</case>
    <namespaces>
      <namespace key="0" case="first-letter" />
      <namespace key="1" case="first-letter">Talk</namespace>
      <namespace key="2" case="first-letter">User</namespace>
      <namespace key="10" case="first-letter">Template</namespace>
    </namespaces>
  </siteinfo>
"""


def at(seconds: int) -> datetime:
    """The UTC time ``seconds`` after the synthetic epoch (2001-01-15)."""
    return _EPOCH + timedelta(seconds=seconds)


def iso(seconds: int) -> str:
    """:func:`at` as an export writes it (``2001-01-15T00:00:00Z``)."""
    return at(seconds).strftime("%Y-%m-%dT%H:%M:%SZ")


def escape(value: str) -> str:
    """``&``, ``<``, ``>`` and ``"`` as entities, as MediaWiki writes element text and
    attributes (an apostrophe stays as it is)."""
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def header(dbname: str, version: str = "0.10") -> str:
    """The start of an export of schema ``version`` for wiki ``dbname``, through ``</siteinfo>``."""
    return _HEADER.format(v=version, dbname=dbname)


def contributor(username: str | None = None, user_id: int | None = None, ip: str | None = None) -> str:
    """A ``<contributor>`` by name (and id when given) or by IP; with neither, a suppressed one."""
    if ip is not None:
        return f"<contributor>\n        <ip>{ip}</ip>\n      </contributor>"
    if username is None:
        return '<contributor deleted="deleted" />'
    uid = f"\n        <id>{user_id}</id>" if user_id is not None else ""
    return f"<contributor>\n        <username>{escape(username)}</username>{uid}\n      </contributor>"


def text_stub(revision_id: int, size: int, location: str | None = None) -> str:
    """The empty ``<text>`` of a stub dump: the size, sha1, optional location and text id."""
    where = f' location="{location}"' if location is not None else ""
    return f'<text bytes="{size}" sha1="{SHA1}"{where} id="{revision_id}" />'


def text(body: str, size: int | None = None) -> str:
    """A ``<text>`` holding ``body`` (escaped); ``size`` defaults to its UTF-8 length."""
    size = len(body.encode()) if size is None else size
    return f'<text bytes="{size}" xml:space="preserve">{escape(body)}</text>'


def revision(
    revision_id: int,
    timestamp: str,
    who: str,
    content: str,
    *,
    parent_id: int | None = None,
    comment: str | None = None,
    origin: int | None = None,
    sha1: bool = True,
) -> str:
    """One ``<revision>`` in export order: id, parent, time, ``who`` (:func:`contributor`),
    comment (escaped here), origin (schema 0.11), model, format, ``content`` (:func:`text` or
    :func:`text_stub`), and the sha1 unless ``sha1`` is false."""
    parts = [f"    <revision>\n      <id>{revision_id}</id>\n"]
    if parent_id is not None:
        parts.append(f"      <parentid>{parent_id}</parentid>\n")
    parts.append(f"      <timestamp>{timestamp}</timestamp>\n      {who}\n")
    if comment is not None:
        parts.append(f"      <comment>{escape(comment)}</comment>\n")
    if origin is not None:
        parts.append(f"      <origin>{origin}</origin>\n")
    parts.append(f"      <model>wikitext</model>\n      <format>text/x-wiki</format>\n      {content}\n")
    if sha1:
        parts.append(f"      <sha1>{SHA1}</sha1>\n")
    parts.append("    </revision>\n")
    return "".join(parts)


def page(title: str, ns: int, page_id: int, revisions: Iterable[str], redirect: str | None = None) -> str:
    """One ``<page>``: ``title`` (escaped here), namespace, id, the ``<redirect>`` to the title
    ``redirect`` if given, then the ``revisions`` (from :func:`revision`)."""
    target = f'    <redirect title="{escape(redirect)}" />\n' if redirect is not None else ""
    return (
        f"  <page>\n    <title>{escape(title)}</title>\n    <ns>{ns}</ns>\n    <id>{page_id}</id>\n"
        f"{target}{''.join(revisions)}  </page>\n"
    )
