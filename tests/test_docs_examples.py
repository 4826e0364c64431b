"""The Python examples of the README, the how-to guides and the tutorials run as written (their
shell commands, the ``console`` blocks, run in tests/test_walkthroughs.py).

Every ``python`` code block runs in a fresh directory, once on a Greek and once on an English
set, unless the line before it is ``<!-- not run -->`` (a tour of names whose files stand for
the reader's own). The files an example names are there, made for the language:

- ``set.parquet``: a multiple-choice set; ``responses.json``: recorded answers to it;
- ``freeform.parquet``: free-form questions;
- ``articles.parquet``: articles of an origin corpus (with a region);
- ``path/to/model``: a tiny local model (tests/tiny_model.py);
- ``tests/``: the repository's, for the examples run from its root;
- the OpenAI API: a loopback server (``OPENAI_BASE_URL``) answering as a chat model would.

Then every evaluation result the example made was asked in the set's language (the prompts a
local model was given, the settings recorded) and saved with its own signature, and every set
it built was written in the articles' language."""

import json
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.openai_server import ChatServer
from tests.test_mcq_languages import Scripted, el_articles, el_multistream, el_set, en_articles  # noqa: F401
from tests.test_tasks import _en_set, _freeform
from wikiorigin.builders.result import BuildResult
from wikiorigin.evaluators import cues, freeform
from wikiorigin.evaluators.models import LocalModel
from wikiorigin.evaluators.results import RunResult
from wikiorigin.evaluators.signature import text_hash
from wikiorigin.languages import language_name

ROOT = Path(__file__).resolve().parents[1]
PAGES = [
    ROOT / "README.md",
    *sorted((ROOT / "docs" / "how-to").glob("*.md")),
    *sorted((ROOT / "docs" / "tutorials").glob("*.md")),
]
NOT_RUN = "<!-- not run -->"


def _blocks(marked: bool = False) -> list:
    """``(page, line, code)`` of every ``python`` block of the pages (those marked not run, with
    ``marked``)."""
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for block in re.finditer(r"^```python\n(.*?)^```", text, re.S | re.M):
            before = text[: block.start()].rstrip("\n").rsplit("\n", 1)[-1]
            if (before.strip() == NOT_RUN) == marked:
                line = text.count("\n", 0, block.start()) + 1
                found.append(pytest.param(page, line, block[1], id=f"{page.relative_to(ROOT)}:{line}"))
    return found


def test_the_pages_have_examples_and_few_are_left_unrun():
    assert len(_blocks()) >= 5  # the evaluation snippet, its free-form and builder twins, the bundled data
    assert len(_blocks(marked=True)) <= 2


@pytest.fixture(scope="module")
def sets(el_set, el_articles, en_articles, tmp_path_factory):  # noqa: F811
    """The files of each language: ``{language: {name: path}}``."""
    made = {}
    for language, mcq_set, articles, (question, answer) in (
        ("el", el_set, el_articles, ("Ποιο πλάσμα εννοείται;", "Λάμια")),
        ("en", None, en_articles, ("Which creature is meant?", "Boggart")),
    ):
        d = tmp_path_factory.mktemp(f"docs-{language}")
        mcq_set = mcq_set or _en_set(d / "set.parquet")
        rows = pq.read_table(mcq_set).to_pylist()
        (d / "responses.json").write_text(
            json.dumps(
                [{"question": r["question"], "choices": r["choices"], "response": r["choices"][1]} for r in rows],
                ensure_ascii=False,
            ),
            encoding="utf-8",
        )
        table = pq.read_table(articles)
        pq.write_table(table.append_column("region", pa.array(["Attica"] * table.num_rows)), d / "articles.parquet")
        made[language] = {
            "set.parquet": mcq_set,
            "responses.json": d / "responses.json",
            "freeform.parquet": _freeform(d / "freeform.parquet", language, question, answer),
            "articles.parquet": d / "articles.parquet",
        }
    return made


class Watched:
    """What the example did: the prompts each local model was given, the results it saved
    (with where), and the sets it built."""

    def __init__(self, monkeypatch):
        self.prompts: list[str] = []
        self.saved: list[tuple[RunResult, Path]] = []
        self.built: list[BuildResult] = []
        generate, save, built_save = LocalModel.generate, RunResult.save, BuildResult.save

        def generating(model, prompts, **kwargs):
            self.prompts += prompts
            return generate(model, prompts, **kwargs)

        def saving(result, directory, **kwargs):
            self.saved.append((result, Path(directory)))
            return save(result, directory, **kwargs)

        def building(result, out, **kwargs):
            self.built.append(result)
            return built_save(result, out, **kwargs)

        monkeypatch.setattr(LocalModel, "generate", generating)
        monkeypatch.setattr(RunResult, "save", saving)
        monkeypatch.setattr(BuildResult, "save", building)


def _asked_in(result: RunResult, language: str) -> None:
    """The run's settings say the prompts of ``language``."""
    settings = result.settings
    if result.kind == "mcq":
        assert settings["language"] == language
        said = cues.instruction(language) if settings["mode"] == "generate" else cues.answer_cue(language)
        assert settings["instruction"] == text_hash(said)
    elif result.kind == "freeform" and settings["language"] == "source":
        assert settings["instruction"] == text_hash(freeform.source_prompt(language))


@pytest.mark.slow
@pytest.mark.parametrize("language", ["el", "en"])
@pytest.mark.parametrize("page,line,code", _blocks())
def test_the_example_runs_as_written(page, line, code, language, sets, tiny_model_dir, tmp_path, monkeypatch):
    for name, path in sets[language].items():
        (tmp_path / name).symlink_to(path)
    (tmp_path / "path" / "to").mkdir(parents=True)
    (tmp_path / "path" / "to" / "model").symlink_to(tiny_model_dir, target_is_directory=True)
    (tmp_path / "tests").symlink_to(ROOT / "tests", target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    watched, scripted = Watched(monkeypatch), Scripted()
    with ChatServer(answer=scripted) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        exec(compile(code, f"{page.name}:{line}", "exec"), {"__name__": "__main__"})  # noqa: S102

    assert len(watched.saved) + len(watched.built) == code.count(".save(")  # each result saved was looked at
    assert watched.prompts or "path/to/model" not in code
    ours = {str(Path(name).resolve()) for name in sets[language]} | set(sets[language])
    for result, directory in watched.saved:
        summary = json.loads((directory / "summary.json").read_text(encoding="utf-8"))
        assert summary["signature"] == result.signature and summary["settings"] == result.settings
        if result.meta.get("questions") in ours:  # a set made for the language, not the bundled data
            _asked_in(result, language)
    for prompt in watched.prompts:  # every prompt a local model was given ends in the set's language
        assert prompt.endswith((cues.instruction(language), cues.name_only(language))), prompt[-80:]
    for result in watched.built:
        assert result.meta["language"] == language
        asked = [s for s in scripted.systems if s.startswith("task: generate")]
        assert asked and all(f"all in {language_name(language)}" in s for s in asked)
