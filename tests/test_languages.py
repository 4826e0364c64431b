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
    assert {"dbname": "jawiki", "language": "ja", "domain": "ja.wikipedia.org", "open": True, "status": "open"} in rows


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


# WikiOriginQA's eight languages, with the state each belongs to and why it counts there.
PAPER_LANGUAGES = [
    ("ja", "JP", "jawiki", "official"),
    ("ps", "AF", "pswiki", "official"),
    ("af", "ZA", "afwiki", "national_by_constitution"),
    ("ca", "AD", "cawiki", "official"),
    ("sk", "SK", "skwiki", "official"),
    ("et", "EE", "etwiki", "official"),
    ("uk", "UA", "ukwiki", "official"),
    ("ka", "GE", "kawiki", "official"),
]


@pytest.mark.parametrize("language,country,wiki,status", PAPER_LANGUAGES)
def test_the_papers_languages_are_candidates(language, country, wiki, status):
    from wikiorigin.languages import single_country_languages

    rows = {r.language: r for r in single_country_languages()}
    assert (rows[language].country, rows[language].wiki, rows[language].status) == (country, wiki, status)


def test_single_country_count_near_the_papers():
    from wikiorigin.languages import single_country_languages

    rows = single_country_languages()
    with_edition = [r for r in rows if r.wiki]
    assert (len(rows), len(with_edition), len({r.wiki for r in with_edition})) == (90, 80, 79)  # paper: 75


def test_constitutional_national_status_counts_regional_does_not():
    from wikiorigin.languages import single_country_languages

    rows = {r.language: r for r in single_country_languages()}
    # South Africa's other official languages come in with Afrikaans; Kurdish (Iraq), Romansh
    for language, country in [("zu", "ZA"), ("xh", "ZA"), ("nso", "ZA"), ("ckb", "IQ"), ("rm", "CH")]:
        assert (rows[language].country, rows[language].status) == (country, "national_by_constitution")
    # official in their own state and, by its constitution, in South Africa / North Macedonia
    assert not {"tn", "st", "ss", "sq"} & set(rows)
    # regional status alone: a candidate stays one (Catalan/Spain, Slovak/Serbia, Uzbek and
    # Turkmen/Afghanistan, Azerbaijani/Russia and Iraq), a regional-only language is none
    assert [rows[x].country for x in ("uz", "tk", "az")] == ["UZ", "TM", "AZ"]
    assert not {"cy", "fy", "se", "gl", "eu", "ta", "te", "iu", "ab", "kl", "tt"} & set(rows)
    assert not {"ln", "kg", "lua"} & set(rows)  # DR Congo's national, not official, languages


def test_official_countries_rule_on_a_small_table():
    from wikiorigin.languages import official_countries

    territories = {  # CLDR's shape: {country: {language: {"official_status": ...}}}
        "ZA": {
            "en": {"official_status": "official"},
            "af": {"official_status": "official_regional"},
            "tn": {"official_status": "official_regional"},
        },
        "BW": {"tn": {"official_status": "official"}, "en": {"official_status": "official"}},
        "ES": {"es": {"official_status": "official"}, "ca": {"official_status": "official_regional"}},
        "AD": {"ca": {"official_status": "official"}},
        "RS": {"sr_Latn": {"official_status": "official"}, "sk": {"official_status": "official_regional"}},
        "UA": {"uk": {"official_status": "official"}, "ru": {"official_status": "de_facto_official"}},
        "XK": {"sq": {"official_status": "official"}},  # not a member: never counts
        "AL": {"sq": {"official_status": "official"}, "el": {"population_percent": 1.0}},
    }
    members = ["ZA", "BW", "ES", "AD", "RS", "UA", "AL"]
    found = official_countries(territories, members, {("ZA", "af"), ("ZA", "tn")})
    assert found["af"] == {"ZA": "national_by_constitution"}
    assert found["tn"] == {"ZA": "national_by_constitution", "BW": "official"}
    assert found["ca"] == {"AD": "official"} and found["sr"] == {"RS": "official"}
    assert found["ru"] == {"UA": "de_facto_official"} and found["sq"] == {"AL": "official"}
    assert "sk" not in found  # regional only
    assert "el" not in found  # spoken, no status
    assert "af" not in official_countries(territories, members)  # without the table: regional only


def test_constitutional_table_is_sourced_and_regional_in_cldr():
    from babel.core import get_global

    from wikiorigin.languages import national_by_constitution, un_members

    table = national_by_constitution()
    territories = get_global("territory_languages")
    assert len(table) == 13 and set(un_members()) >= {country for country, _ in table}
    for (country, language), source in table.items():
        assert "onstitution" in source, (country, language)
        status = territories[country][language]["official_status"]
        assert status == "official_regional", (country, language, status)  # else the entry is void


def test_cli_single_country_json(capsys):
    assert main(["languages", "--single-country", "--json"]) == 0
    rows = {r["language"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["af"] == {
        "language": "af",
        "country": "ZA",
        "country_name": "South Africa",
        "wiki": "afwiki",
        "status": "national_by_constitution",
    }


@pytest.mark.parametrize("name,suggested", [("jp", "jawiki"), ("gr", "elwiki"), ("cz", "cswiki"), ("dk", "dawiki")])
def test_a_country_code_suggests_its_language(name, suggested):
    """`--wiki jp` (Japan) suggests ja: the official languages of the country named."""
    with pytest.raises(UnknownWikiError, match=rf"not a Wikipedia edition: '{name}'; did you mean {suggested}"):
        lookup(name)


# -- English names of every open Wikipedia's language (no prompt says "in arz") -----


def test_every_open_wiki_gets_a_real_english_name():
    from wikiorigin.languages import language_name

    names = {}
    for wiki in open_wikis():
        for code in (wiki.language, wiki.subdomain, wiki.dbname):
            name = language_name(code)
            assert name and name != code and name[0].isupper(), (wiki.dbname, code, name)  # "Fon" is fon's name
        names[wiki.language] = language_name(wiki.language)
    assert len(set(names.values())) == len(names)  # no two content languages share a name


@pytest.mark.parametrize(
    "code,name",
    [
        ("arz", "Egyptian Arabic"),
        ("nan", "Min Nan Chinese"),
        ("zh-min-nan", "Min Nan Chinese"),
        ("lzh", "Literary Chinese"),
        ("zh-classical", "Literary Chinese"),
        ("cdo", "Min Dong Chinese"),
        ("sh", "Serbo-Croatian"),
        ("bat-smg", "Samogitian"),
        ("map-bms", "Banyumasan"),
        ("fiu-vro", "Võro"),
        ("zh-yue", "Cantonese"),
        ("gom", "Goan Konkani"),
        ("nrm", "Norman"),
        ("el", "Greek"),
    ],
)
def test_language_names_beyond_cldr_locales(code, name):
    from wikiorigin.languages import language_name

    assert language_name(code) == name


def test_a_code_without_a_name_never_reaches_a_prompt():
    from wikiorigin.builders.prompts import mcq_prompt
    from wikiorigin.errors import WikioriginError
    from wikiorigin.languages import language_name

    assert "in Egyptian Arabic" in mcq_prompt("arz", "generate", n=1) and "in arz" not in mcq_prompt("arz", "check")
    with pytest.raises(WikioriginError, match="language 'xx-nowhere': no English name known"):
        language_name("xx-nowhere")
    with pytest.raises(WikioriginError, match="no English name known"):
        mcq_prompt("qqq", "generate", n=1)
