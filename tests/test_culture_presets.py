"""The culture outside the core: YokaiEval's classes, prompts, list page and released-row
adapters are a culture preset (``wikiorigin/presets/yokaieval/``) found by name, like any
other culture's; the core's contracts hold no Japanese default or class."""

import inspect
import json
import re
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.conftest import ROOT
from wikiorigin import presets
from wikiorigin.files import read_provenance
from wikiorigin.labels import load_labels
from wikiorigin.review.export import export_reviewed
from wikiorigin.review.items import load_dataset
from wikiorigin.review.store import ReviewStore

PACKAGE = ROOT / "wikiorigin"
# Kana, CJK ideographs and punctuation, full-width forms.
_JAPANESE = re.compile(r"[\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")
_JA_DEFAULT = re.compile(r"""(==|=|!=|in \(|default=)\s*["']ja["']""")


def _core_files() -> list[Path]:
    """The core's contracts: the file schemas, corpora, builders, the review and the MCQ
    evaluator's questions and report (the language tables of the answer reader are language
    data, not a culture's)."""
    picked = [PACKAGE / "schemas.py", PACKAGE / "evaluators" / "mcq.py", PACKAGE / "evaluators" / "questions.py"]
    picked.append(PACKAGE / "evaluators" / "mcq_report.py")
    for folder in ("corpora", "builders", "review"):
        picked += sorted((PACKAGE / folder).glob("*.py"))
    return picked


def test_the_core_holds_no_japanese_default_or_class():
    found = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()[:60]}"
        for path in _core_files()
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if _JAPANESE.search(line) or _JA_DEFAULT.search(line)
    ]
    assert found == []


def test_the_list_page_is_a_required_argument():
    from wikiorigin.corpora.yokai import build_list_corpus

    assert inspect.signature(build_list_corpus).parameters["list_page"].default is inspect.Parameter.empty
    assert presets.culture("yokaieval").list_page == "日本の妖怪一覧"


def test_old_import_paths_still_work():
    from wikiorigin.corpora.yokai import YOKAI_LIST_PAGE
    from wikiorigin.evaluators.mcq import REGION_LETTERS, clean_region
    from wikiorigin.schemas import MCQ_REGIONS, MCQ_TYPES

    yokai = presets.culture("yokaieval")
    assert YOKAI_LIST_PAGE == yokai.list_page and MCQ_TYPES == list(yokai.types)
    assert MCQ_REGIONS == list(yokai.regions) and clean_region("[[C, D]]") == "複数の地域"
    assert REGION_LETTERS["A"] == "日本全国"


def test_an_unknown_culture_is_a_value_error_naming_the_cultures():
    with pytest.raises(ValueError, match="no culture preset 'korean': the cultures are .*yokaieval"):
        presets.culture("korean")


@pytest.fixture
def folk_culture(tmp_path, monkeypatch):
    """Another culture, registered by name from a module of its own (a Korean list page with
    its own labels and prompts), as a user would add one."""
    (tmp_path / "folk_preset.py").write_text(
        "from wikiorigin.presets import Culture, PromptSet\n"
        "STEPS = {'generate': 'task: generate\\nko {n}', 'check': 'task: check\\nko',\n"
        "         'attribute': 'task: attribute\\nko', 'label': 'task: label\\nko {types} {regions}'}\n"
        "CULTURE = Culture('folk', 'ko', list_page='List of Korean spirits', labels=('folk-ko',),\n"
        "    prompts=PromptSet('folk-ko', 'ko', STEPS, 'task: label\\nko {types}', dict(STEPS)))\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(presets.CULTURES, "folk", "folk_preset")
    yield presets.culture("folk")
    sys.modules.pop("folk_preset", None)


def test_another_culture_is_loaded_by_name_like_yokaieval(folk_culture, tmp_path):
    from wikiorigin.builders.prompts import mcq_prompt, own_prompts

    assert presets.list_labels("ko") == "folk-ko" and presets.list_labels("ja") == "yokai-ja"
    assert presets.by_prompts("folk-ko") is folk_culture.prompts
    labels_file = tmp_path / "folk-ko.json"
    types = [{"class": "deeds", "description": "what it does"}, {"class": "looks", "description": "its looks"}]
    labels_file.write_text(json.dumps({"prompts": "folk-ko", "types": types, "regions": "wikidata"}), "utf-8")
    labels = load_labels(labels_file)  # a labels file may ask for any registered culture's prompts
    own = own_prompts("ko", labels)
    assert own is folk_culture.prompts and own_prompts("el", labels) is None
    assert mcq_prompt("ko", "generate", own=own, n=2) == "task: generate\nko 2"


def _released(path: Path, host: str) -> Path:
    """Two released-style rows (JSON, no language column) of articles on ``host``."""
    rows = [
        {
            "question": f"Which one {i}?",
            "choices": ["a", "b", "c", "d"],
            "answer": "a",
            "url": f"https://{host}/wiki/X{i}",
        }
        for i in range(2)
    ]
    path.write_text(json.dumps(rows), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("host", "language", "licence"), [("en.wikipedia.org", "en", None), ("ja.wikipedia.org", "ja", "cc-by-nc-sa-4.0")]
)
def test_a_review_export_takes_the_language_from_its_rows(tmp_path, host, language, licence):
    path = _released(tmp_path / "released.json", host)
    data = load_dataset(path)
    store = ReviewStore(tmp_path / "review.sqlite", data.path.name, data.kind, list(data.by_key), data.keyed_by)
    for item in data.items:
        store.add(item.key, item.sha1, "alice", "accept")
    store.close()
    export_reviewed(path, tmp_path / "review.sqlite", tmp_path / "out.parquet")
    meta = read_provenance(tmp_path / "out.parquet")
    assert meta["language"] == language and meta.get("license") == licence
    assert pq.read_table(tmp_path / "out.parquet").num_rows == 2
