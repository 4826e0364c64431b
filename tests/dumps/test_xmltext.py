"""One XML unescaper for every reader: the references XML defines are replaced, anything else
is kept as it stands, and the compiled core, the Python path, the pages reader and the header
read a title the same way."""

import warnings

import pytest

from wikiorigin.dumps.pages import iter_pages
from wikiorigin.dumps.stubs import scan_pages
from wikiorigin.dumps.xmlhead import read_header
from wikiorigin.dumps.xmltext import element, unescape

CASES = [
    ("plain", "plain"),
    ("A &amp; B &lt;i&gt; &quot;q&quot; &apos;s&apos;", "A & B <i> \"q\" 's'"),
    ("&#039;&#x41;&#X42;&#x1F600;", "'AB\U0001f600"),
    ("&amp;lt;", "&lt;"),  # one pass, never twice
    # kept as they stand, on purpose:
    ("a&nbsp;b", "a&nbsp;b"),  # a name XML does not define (html.unescape gave "a\xa0b")
    ("&amp &lt", "&amp &lt"),  # no ';'
    ("&#0; &#xD800; &#x110000;", "&#0; &#xD800; &#x110000;"),  # not characters XML allows
    ("&#0000000065;", "&#0000000065;"),  # longer than 12 characters, as the core reads it
    ("&#000000065;", "A"),  # 12 characters
    ("& alone", "& alone"),
]


@pytest.mark.parametrize("text,expected", CASES)
def test_unescape(text, expected):
    assert unescape(text) == expected


def test_element_pattern():
    assert element("ns", rb"-?\d+").search(b"<ns>-2</ns>").group(1) == b"-2"
    assert element("title").search(b"<title>a</b></title>") is None


def _dump(titles) -> bytes:
    pages = b"".join(
        b"  <page>\n    <title>" + t.encode() + b"</title>\n    <ns>0</ns>\n    <id>%d</id>\n"
        b"    <revision>\n      <id>%d</id>\n      <timestamp>2005-01-02T03:04:05Z</timestamp>\n"
        b"      <contributor>\n        <username>X</username>\n        <id>1</id>\n      </contributor>\n"
        b'      <text bytes="1">x</text>\n    </revision>\n  </page>\n' % (i + 1, i + 100)
        for i, t in enumerate(titles)
    )
    return (
        b'<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10">\n'
        b"  <siteinfo>\n    <sitename>A &amp; B&nbsp;</sitename>\n  </siteinfo>\n" + pages + b"</mediawiki>\n"
    )


def test_every_reader_reads_a_title_alike(tmp_path, scan_path):
    """The compiled core (or the Python path: conftest's scan_path), the pages-articles reader
    and the header decode references by the same rules."""
    titles = [text for text, _ in CASES]
    path = tmp_path / "titles.xml"
    path.write_bytes(_dump(titles))
    expected = [unescape(t) for t in titles]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert [p.title for p in scan_pages(path)] == expected
        assert [p.title for p in iter_pages(path)] == expected
    with open(path, "rb") as f:
        site, _ = read_header(f.read, path)
    assert site.sitename == "A & B&nbsp;"
