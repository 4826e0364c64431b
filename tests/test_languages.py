import json

import pytest

from wikiorigin.cli import main
from wikiorigin.errors import UnknownWikiError
from wikiorigin.languages import lookup, open_wikis, registry


def test_open_editions_count():
    wikis = open_wikis()
    assert len(wikis) == 348
    names = {w.dbname for w in wikis}
    assert {"jawiki", "enwiki", "simplewiki", "be_x_oldwiki", "zh_min_nanwiki"} <= names
    assert not names & {"test2wiki", "testwiki", "metawiki", "aawiki"}  # test, special, closed


@pytest.mark.parametrize(
    "name,dbname,language,domain",
    [
        ("jawiki", "jawiki", "ja", "ja.wikipedia.org"),
        ("ja", "jawiki", "ja", "ja.wikipedia.org"),
        ("ja.wikipedia.org", "jawiki", "ja", "ja.wikipedia.org"),
        ("https://ja.m.wikipedia.org/wiki/妖怪", "jawiki", "ja", "ja.wikipedia.org"),
        ("be-tarask", "be_x_oldwiki", "be-tarask", "be-tarask.wikipedia.org"),
        ("zh-min-nan", "zh_min_nanwiki", "nan", "zh-min-nan.wikipedia.org"),
        ("nan", "zh_min_nanwiki", "nan", "zh-min-nan.wikipedia.org"),
        ("simple", "simplewiki", "en", "simple.wikipedia.org"),
        ("en", "enwiki", "en", "en.wikipedia.org"),
        ("gsw", "alswiki", "gsw", "als.wikipedia.org"),
        ("no", "nowiki", "nb", "no.wikipedia.org"),
        ("ZH_YUE", "zh_yuewiki", "yue", "zh-yue.wikipedia.org"),
    ],
)
def test_lookup_by_any_name(name, dbname, language, domain):
    wiki = lookup(name)
    assert (wiki.dbname, wiki.language, wiki.domain, wiki.is_open) == (dbname, language, domain, True)


def test_unknown_name_suggests_the_closest():
    with pytest.raises(UnknownWikiError, match=r"not a Wikipedia edition: 'jawikii'; did you mean jawiki"):
        lookup("jawikii")
    with pytest.raises(UnknownWikiError, match="enwiktionary"):
        lookup("enwiktionary")


def test_closed_editions_are_known_but_not_open():
    wiki = registry().lookup("aawiki")
    assert wiki.status == "closed" and not wiki.is_open


def test_cli_languages_json(capsys):
    assert main(["languages", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 348
    assert {"dbname": "jawiki", "language": "ja", "domain": "ja.wikipedia.org", "open": True,
            "status": "open"} in rows


def test_cli_languages_table(capsys):
    assert main(["languages"]) == 0
    out = capsys.readouterr().out
    assert "zh_min_nanwiki" in out and "348 editions open" in out


def test_un_members():
    from wikiorigin.languages import un_members

    members = un_members()
    assert len(members) == 193
    assert not {"VA", "PS", "TW", "XK", "EH"} & set(members)
    assert members["JP"] == "Japan" and "SS" in members


def test_single_country_languages(capsys):
    from wikiorigin.languages import single_country_languages

    rows = {r.language: r for r in single_country_languages()}
    assert (rows["ja"].country, rows["ja"].wiki) == ("JP", "jawiki")
    assert rows["fil"].wiki == "tlwiki"
    assert "en" not in rows and "fr" not in rows and "zh" not in rows  # official in many
    assert "ca" in rows and rows["ca"].country == "AD"  # regional in Spain, official in Andorra
    assert main(["languages", "--single-country"]) == 0
    out = capsys.readouterr().out
    assert f"{len(rows)} languages official in exactly one of the 193 UN member states" in out
