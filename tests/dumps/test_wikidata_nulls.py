"""A Wikidata dump never writes null where an entity holds an object (labels, aliases,
sitelinks, claims) or a list of statements: such a line is one line naming it, exit 2, not
read as an entity without names, links or places (an article would lose its place without a
word). Wikidata's own empty ``[]`` stays empty. A file with more after the closing line ``]``
is said to be that, not "cut short"."""

import pytest

from tests.corpora.test_wikidata_files import _dump_lines, _extract, _whole, _with


def _nulled(key: str):
    def change(data):
        if key == "statements":
            data["claims"]["P131"] = None
        else:
            data[key] = None

    return change


# the item asked for (read whole), or a place: a place keeps no aliases or sitelinks, and one
# without claims names no P131, so it is not read
@pytest.mark.parametrize(
    "key, asked",
    [(key, True) for key in ("labels", "aliases", "sitelinks", "claims", "statements")]
    + [(key, False) for key in ("labels", "statements")],
)
def test_null_where_a_dump_holds_an_object_is_one_line_naming_it(data_dir, tmp_path, capsys, key, asked):
    lines = _dump_lines(data_dir)
    item = [i for i, line in enumerate(lines) if b'"id":"Q900104"' in line][0]
    at = item if asked else next(i for i, line in enumerate(lines) if b'"P131"' in line and i != item)
    lines[at] = _with(lines[at].decode(), _nulled(key))
    dump = tmp_path / "wikidata.json"
    dump.write_bytes(_whole(lines))
    code, err, out = _extract(capsys, tmp_path, dump)
    assert code == 2 and err.count("\n") == 1 and not out.exists(), err
    assert f"{dump}: line {at + 2}: an entity of unexpected types (" in err


def test_wikidatas_own_empty_lists_are_empty(data_dir, tmp_path, capsys):
    lines = _dump_lines(data_dir)
    item = [i for i, line in enumerate(lines) if b'"id":"Q900104"' in line][0]
    lines[item] = _with(lines[item].decode(), lambda d: d.update(labels=[], aliases=[], sitelinks=[], claims=[]))
    dump = tmp_path / "wikidata.json"
    dump.write_bytes(_whole(lines))
    code, err, out = _extract(capsys, tmp_path, dump)
    assert code == 0 and out.exists(), err


@pytest.mark.parametrize("tail", [b"garbage\n", b"\0" * 64, b"]\nmore\n"])
def test_more_after_the_closing_line_is_said_as_such(data_dir, tmp_path, capsys, tail):
    dump = tmp_path / "wikidata.json"
    dump.write_bytes(_whole(_dump_lines(data_dir)) + tail)
    code, err, out = _extract(capsys, tmp_path, dump)
    assert code == 2 and err.count("\n") == 1 and not out.exists(), err
    assert f"{dump}: more after the dump's closing line ']'" in err and "cut short" not in err
