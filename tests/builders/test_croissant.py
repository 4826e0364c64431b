"""`build card` writes croissant.json beside the card: Croissant 1.0 metadata that mlcroissant
validates and loads, its records the Parquet rows, row for row, whatever the columns' types
(lists, structs, lists of structs, nulls); it names the licence, the sources, the method and
preset, the models and a review's agreement."""

import json
import math

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.builders.test_freeform import _corpus, origin_articles  # noqa: F401 (fixture)
from tests.builders.test_mcq import articles, make_client, scripted  # noqa: F401
from tests.hub_server import FakeHub
from tests.openai_server import ChatServer
from wikiorigin.builders.mcq import MCQConfig, build_mcq
from wikiorigin.cli import main
from wikiorigin.files import provenance, write_table
from wikiorigin.schemas import FREEFORM, FREEFORM_CRITERIA, PREFERENCES_CONVERSATIONAL, REVIEW as REVIEW_COLUMNS

mlc = pytest.importorskip("mlcroissant", reason="mlcroissant is not installed (the test extra)")


def _plain(value):
    """A value of an mlcroissant record as Python's: text decoded, nested keys by their name."""
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, dict):
        return {k.rsplit("/", 1)[-1]: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if hasattr(value, "tolist"):  # a numpy array or scalar
        return _plain(value.tolist())
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def loaded(directory):
    """croissant.json of ``directory``, validated by mlcroissant: ``{record set: [rows]}``."""
    dataset = mlc.Dataset(directory / "croissant.json")
    issues = dataset.metadata.issues
    assert not issues.errors and not issues.warnings, issues.report()
    return {
        rs.name: [{k.rsplit("/", 1)[-1]: _plain(v) for k, v in r.items()} for r in dataset.records(rs.uuid)]
        for rs in dataset.metadata.record_sets
    }


def _same(records, path):
    rows = pq.read_table(path).to_pylist()
    assert len(records) == len(rows)
    assert records == rows  # float32 values chosen exact in binary


@pytest.mark.slow
def test_a_built_set_s_croissant_loads_its_rows(articles, tmp_path, capsys):  # noqa: F811
    directory = tmp_path / "yokai-mini"
    with ChatServer(answer=scripted) as server:
        build_mcq(articles, directory / "test.parquet", make_client(server, tmp_path), config=MCQConfig(per_article=3))
    argv = ["build", "card", str(directory), "--kind", "mcq", "--title", "Yokai mini", "--description", "Yokai."]
    assert main(argv) == 0
    assert "croissant.json" in capsys.readouterr().out
    meta = json.loads((directory / "croissant.json").read_text(encoding="utf-8"))
    assert meta["conformsTo"] == "http://mlcommons.org/croissant/1.0" and meta["name"] == "Yokai mini"
    assert meta["license"] == "https://creativecommons.org/licenses/by-sa/4.0/" and meta["inLanguage"] == ["ja"]
    assert [s["name"] for s in meta["isBasedOn"]] == ["articles: articles.parquet"]
    assert meta["rai:machineAnnotationTools"] == ["checker: gen", "generator: gen"]
    assert "`wikiorigin build mcq`, YokaiEval's method (" in meta["rai:dataCollection"]
    assert "no human review" in meta["rai:dataAnnotationProtocol"]
    records = loaded(directory)
    assert list(records) == ["test"] and records["test"]
    _same(records["test"], directory / "test.parquet")
    datasets = pytest.importorskip("datasets", reason="the test extra is not installed")
    hub = datasets.load_dataset(str(directory), split="test", cache_dir=str(tmp_path / "hf"))
    assert hub.to_list() == pq.read_table(directory / "test.parquet").to_pylist()


def _freeform_rows():
    criteria = {c: 5 for c in FREEFORM_CRITERIA}
    return [
        {
            "id": "q1",
            "question": "Which creature?",
            "question_source": "どの妖怪か。",
            "answers": ["河童", "Kappa"],
            "qid": "Q1",
            "origin_wiki": "jawiki",
            "title": "河童",
            "url": "https://ja.wikipedia.org/wiki/河童",
            "n_wikis": 3,
            "has_enwiki": True,
            "criteria": criteria,
            "language": "ja",
            "generator": "g",
            "prompt_sha1": "0" * 40,
            "source_revision_id": 12,
        },
        {
            "id": "q2",
            "question": "What?",
            "question_source": None,
            "answers": [],
            "qid": "Q2",
            "origin_wiki": "jawiki",
            "title": "同時",
            "url": None,
            "n_wikis": 1,
            "has_enwiki": False,
            "criteria": {**criteria, "not_trivial": 4},
            "language": "ja",
            "generator": "g",
            "prompt_sha1": "1" * 40,
            "source_revision_id": None,
        },
    ]


def _preference_rows():
    def said(role, text):
        return [{"role": role, "content": text}]

    return [
        {
            "prompt": said("user", "祭りは？"),
            "chosen": said("assistant", "祇園祭"),
            "rejected": said("assistant", "?"),
            "score_chosen": 9.5,
            "score_rejected": 2.0,
            "culture": "Japanese",
            "category": "festival",
            "language": "ja",
            "chosen_model": "a",
            "rejected_model": "b",
        },
        {
            "prompt": said("user", "x"),
            "chosen": said("assistant", "y") * 2,
            "rejected": [],
            "score_chosen": None,
            "score_rejected": 1.25,
            "culture": "Japanese",
            "category": None,
            "language": "ja",
            "chosen_model": "a",
            "rejected_model": "b",
        },
    ]


def _other_types():
    """Columns no builder writes today, that a set may carry tomorrow (a review's, nested lists,
    dictionary-encoded and large text)."""
    schema = pa.schema(
        [
            ("id", pa.large_string()),
            ("grid", pa.list_(pa.list_(pa.int16()))),
            ("kind", pa.dictionary(pa.int8(), pa.string())),
            *REVIEW_COLUMNS,
        ]
    )
    rows = [
        {
            "id": "a",
            "grid": [[1, 2], [3]],
            "kind": "x",
            "review_decision": "accept",
            "review_annotators": ["alice", "bob"],
            "review_accepts": 2,
            "review_rejects": 0,
            "review_edited": [],
        },
        {
            "id": "b",
            "grid": [],
            "kind": None,
            "review_decision": "accept",
            "review_annotators": ["bob"],
            "review_accepts": 1,
            "review_rejects": 1,
            "review_edited": ["question"],
        },
    ]
    return schema, rows


REVIEW = {
    "policy": "majority",
    "annotators": ["alice", "bob"],
    "items": 2,
    "exported": 2,
    "edited": 0,
    "rejected": 0,
    "agreement": {"items": 2, "pairs": [{"annotators": ["alice", "bob"], "items": 2, "cohen_kappa": 0.5}]},
}


@pytest.mark.parametrize(
    "kind, schema, rows, meta",
    [
        ("freeform", FREEFORM, _freeform_rows(), {"builder": "freeform", "preset": "wikioriginqa"}),
        (
            "preferences",
            PREFERENCES_CONVERSATIONAL,
            _preference_rows(),
            {"builder": "preference", "preset": "care", "llm": {"judge": {"model": "judge-1"}}},
        ),
        (
            "freeform",
            FREEFORM,
            _freeform_rows(),
            {"stage": "review export", "kind": "freeform", "review": REVIEW, "source": {"builder": "freeform"}},
        ),
        ("mcq", *_other_types(), {"builder": "mcq"}),
    ],
    ids=["freeform", "preferences-conversational", "reviewed", "other-types"],
)
def test_every_column_type_loads_row_for_row(tmp_path, kind, schema, rows, meta):
    stamp = provenance(**{"stage": "build", **meta, "articles": {"file": "/a/b/articles.parquet", "sha256": "ab"}})
    write_table(pa.Table.from_pylist(rows, schema=schema), tmp_path / "train.parquet", schema, stamp)
    assert main(["build", "card", str(tmp_path), "--kind", kind, "--title", "T"]) == 0
    records = loaded(tmp_path)
    _same(records["train"], tmp_path / "train.parquet")
    described = json.loads((tmp_path / "croissant.json").read_text(encoding="utf-8"))
    assert {"name": "articles: articles.parquet", "sha256": "ab", "@type": "sc:CreativeWork"} in described["isBasedOn"]
    if meta.get("preset"):
        assert f"preset {meta['preset']}" in described["rai:dataCollection"]
    if "review" in meta:
        assert "alice and bob: Cohen's kappa 0.5 over 2 items" in described["rai:dataAnnotationAnalysis"]
        assert "annotators: alice, bob" in described["rai:dataAnnotationProtocol"]


@pytest.fixture
def carded(articles, tmp_path):  # noqa: F811
    """A built set's directory (with its failed rows beside it)."""
    directory = tmp_path / "yokai-mini"
    with ChatServer(answer=scripted) as server:
        build_mcq(articles, directory / "test.parquet", make_client(server, tmp_path), config=MCQConfig(per_article=3))
    return directory


def test_push_hands_the_set_its_card_and_croissant_to_the_hub(carded, monkeypatch, capsys):
    with FakeHub(token="hf_test") as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        monkeypatch.setenv("HF_TOKEN", "hf_test")
        argv = ["build", "card", str(carded), "--kind", "mcq", "--title", "Yokai mini", "--push", "me/yokai-mini"]
        assert main(argv) == 0
    assert capsys.readouterr().out.endswith(f"3 files pushed -> {hub.url}/datasets/me/yokai-mini\n")
    assert [c[:2] for c in hub.created] == [("me/yokai-mini", "dataset")]
    [(repo, sent)] = hub.commits
    assert repo == "me/yokai-mini" and sorted(sent) == ["README.md", "croissant.json", "test.parquet"]
    assert all(sent[name] == (carded / name).read_bytes() for name in sent)  # not the failed rows, not the lock
    [front] = hub.validated
    assert front["configs"] == [{"config_name": "default", "data_files": [{"split": "test", "path": "test.parquet"}]}]
    assert json.loads(sent["croissant.json"])["url"] == f"{hub.url}/datasets/me/yokai-mini"


@pytest.mark.parametrize(
    "token, repo, said",
    [
        (None, "me/x", "'me/x': no Hugging Face token: set HF_TOKEN"),
        ("hf_wrong", "me/x", "/datasets/me/x: the hub refused the upload (Client error '401 Unauthorized'"),
        ("hf_test", "x", "'x': give the repository as owner/name"),
        ("hf_test", "me/a b", "'me/a b': not a repository name of the hub"),
    ],
)
def test_push_without_a_token_or_with_a_refused_one_is_one_line(carded, monkeypatch, capsys, token, repo, said):
    monkeypatch.setattr("huggingface_hub.constants.HF_TOKEN_PATH", str(carded / "no-token"))
    with FakeHub(token="hf_test") as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        monkeypatch.delenv("HF_TOKEN", raising=False)
        if token:
            monkeypatch.setenv("HF_TOKEN", token)
        assert main(["build", "card", str(carded), "--kind", "mcq", "--title", "T", "--push", repo]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and said in err, err
    assert not hub.commits and (carded / "README.md").exists() == (token == "hf_wrong")


def _described_and_loaded(directory, kind, tmp_path) -> None:
    """`build card` of ``directory``; each record set as mlcroissant loads it, and each split as
    `datasets.load_dataset` loads it, equal to its Parquet file's rows."""
    assert main(["build", "card", str(directory), "--kind", kind, "--title", "T", "--description", "D"]) == 0
    records = loaded(directory)
    assert sorted(records) == sorted(p.stem for p in directory.glob("*.parquet") if ".failed" not in p.name)
    for name, rows in records.items():
        _same(rows, directory / f"{name}.parquet")
    datasets = pytest.importorskip("datasets", reason="the test extra is not installed")
    splits = datasets.load_dataset(str(directory), cache_dir=str(tmp_path / "hf"))
    assert sorted(splits) == sorted(records)
    for name in splits:
        assert splits[name].to_list() == pq.read_table(directory / f"{name}.parquet").to_pylist()


@pytest.mark.slow
def test_each_kind_of_set_built_by_its_command_loads_row_for_row(articles, origin_articles, tmp_path):  # noqa: F811
    """Sets as the commands write them: multiple choice in two splits (the yokaieval preset's
    several regions), free-form, preferences in both formats, and a reviewed set with edits."""
    from tests.builders import test_freeform
    from tests.builders.test_preference import CARE, RATED, _argv as preference
    from tests.commands import build_mcq as build_mcq_argv
    from wikiorigin.review.items import load_dataset
    from wikiorigin.review.store import ReviewStore

    mcq, free = tmp_path / "mcq", tmp_path / "freeform"
    with ChatServer(answer=scripted) as server:
        assert main(build_mcq_argv(articles, mcq / "test.parquet", server.url, "--preset", "yokaieval")) == 0
        assert main(build_mcq_argv(articles, mcq / "train.parquet", server.url, "--per-article", "2")) == 0
    with ChatServer(answer=test_freeform.scripted) as server:
        assert main(test_freeform._argv(origin_articles, free / "test.parquet", server.url, "--rounds", "1")) == 0
    _described_and_loaded(mcq, "mcq", tmp_path)
    _described_and_loaded(free, "freeform", tmp_path)
    for form in ("standard", "conversational"):
        out = tmp_path / form / "train.parquet"
        assert (
            main(preference(CARE, "--rated", str(RATED), "--out", str(out), "--preset", "care", "--format", form)) == 0
        )
        _described_and_loaded(out.parent, "preferences", tmp_path)
    data = load_dataset(mcq / "test.parquet")
    store = ReviewStore(tmp_path / "r.sqlite", data.path.name, data.kind, list(data.by_key), data.keyed_by)
    edits = [{"region": "東北, 中部", "ref": [1, 2]}, {"question": "改めた問い"}]
    for item, edit in zip(data.items, edits + [None] * len(data.items)):
        store.add(item.key, item.sha1, "alice", "accept", edits=edit)
    store.close()
    reviewed = tmp_path / "reviewed" / "test.parquet"
    argv = ["review", "export", str(mcq / "test.parquet"), "--db", str(tmp_path / "r.sqlite"), "--out", str(reviewed)]
    assert main(argv) == 0
    assert pq.read_table(reviewed).column("region")[0].as_py() == "東北, 中部"
    _described_and_loaded(reviewed.parent, "mcq", tmp_path)


def test_files_of_any_name_load_as_the_hub_s_splits(tmp_path):
    """A split is named after its file, as the hub's split names allow (`yokai-mini.parquet`:
    `yokai_mini`); the shards of one split (`train-00000-of-00002.parquet`, ...) are one split."""
    datasets = pytest.importorskip("datasets", reason="the test extra is not installed")
    rows = _preference_rows()
    stamp = provenance(stage="build", builder="preference")
    names = ["yokai-mini", "train-00000-of-00002", "train-00001-of-00002"]
    for name, part in zip(names, (rows, rows[:1], rows[1:])):
        table = pa.Table.from_pylist(part, schema=PREFERENCES_CONVERSATIONAL)
        write_table(table, tmp_path / f"{name}.parquet", PREFERENCES_CONVERSATIONAL, stamp)
    assert main(["build", "card", str(tmp_path), "--kind", "preferences", "--title", "T"]) == 0
    splits = datasets.load_dataset(str(tmp_path), cache_dir=str(tmp_path / "hf"))
    assert sorted(splits) == ["train", "yokai_mini"]
    assert (
        splits["yokai_mini"].to_list()
        == splits["train"].to_list()
        == pq.read_table(tmp_path / "yokai-mini.parquet").to_pylist()
    )
    assert sorted(loaded(tmp_path)) == sorted(names)  # croissant.json: a record set a file


def test_a_file_named_with_spaces_loads_row_for_row(tmp_path):
    """mlcroissant takes no ``@id`` holding a space: a file ``yokai set.parquet`` is described
    under ids without one (its name and path as they are), and croissant.json still validates
    and loads its rows."""
    rows = _preference_rows()
    stamp = provenance(stage="build", builder="preference")
    table = pa.Table.from_pylist(rows, schema=PREFERENCES_CONVERSATIONAL)
    write_table(table, tmp_path / "yokai set.parquet", PREFERENCES_CONVERSATIONAL, stamp)
    assert main(["build", "card", str(tmp_path), "--kind", "preferences", "--title", "T"]) == 0
    records = loaded(tmp_path)
    assert list(records) == ["yokai set"]
    _same(records["yokai set"], tmp_path / "yokai set.parquet")
    datasets = pytest.importorskip("datasets", reason="the test extra is not installed")
    splits = datasets.load_dataset(str(tmp_path), cache_dir=str(tmp_path / "hf"))
    assert list(splits) == ["yokai_set"] and splits["yokai_set"].to_list() == records["yokai set"]


@pytest.mark.parametrize(
    "names", [["yokai-mini", "yokai_mini"], ["my set", "my_set"], ["train", "train-00000-of-00001"]]
)
def test_two_files_one_split_name_are_refused(tmp_path, capsys, names):
    """Two sets whose files the hub would read as one split (``yokai-mini`` and ``yokai_mini``
    are both ``yokai_mini``; a file beside its own shards) are one line naming both, exit 2,
    before any card: not one split silently holding both sets' rows."""
    stamp = provenance(stage="build", builder="preference")
    for name in names:
        table = pa.Table.from_pylist(_preference_rows(), schema=PREFERENCES_CONVERSATIONAL)
        write_table(table, tmp_path / f"{name}.parquet", PREFERENCES_CONVERSATIONAL, stamp)
    assert main(["build", "card", str(tmp_path), "--kind", "preferences", "--title", "T"]) == 2
    said = capsys.readouterr().err.strip()
    assert said.count("\n") == 0 and all(f"{n}.parquet" in said for n in names), said
    assert not (tmp_path / "README.md").exists() and not (tmp_path / "croissant.json").exists()
