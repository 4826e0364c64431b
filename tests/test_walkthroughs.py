"""The commands of the how-to guides and the walkthroughs run as written, on the bundled samples.

Every ``console`` block of docs/how-to/*.md and docs/tutorials/*.md holds commands as a reader
types them (``$ wikiorigin ...``) and, under each, lines of what it prints (``...`` for any
text). Each page runs top to bottom in a scratch directory of its own (``tests/`` linked in it,
for the bundled files it names) through ``wikiorigin.cli.main``, with the stand-ins of
scripts/recipe.py: the bundled tree plus a jawiki run of yokai articles served as the dump
mirror on loopback (its URL for https://dumps.wikimedia.org), a scripted OpenAI-compatible
server on loopback (its URL for http://localhost:8000/v1, and as OPENAI_BASE_URL), and a tiny
random model (tests/tiny_model.py) for /models/my-model, and a stand-in for the Hugging Face hub
(tests/hub_server.py, as HF_ENDPOINT). Every command must exit 0 and print the
lines the page shows under it. Where a person acts (the review page in the browser), the test
records two annotators' decisions with the review store before the next command runs.

Then each walkthrough's own files are checked: the paper's preset in the provenance, the table,
the judge's agreement, the card and croissant.json.
"""

import contextlib
import importlib.util
import io
import json
import re
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.hub_server import FakeHub
from tests.mirror import Mirror
from tests.openai_server import ChatServer
from wikiorigin.cli import main

pytest.importorskip("transformers", reason="the walkthroughs evaluate a local model (the eval extra)")

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("recipe", ROOT / "scripts" / "recipe.py")
recipe = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(recipe)

HOW_TO = ["build-datasets.md", "evaluate.md", "corpora.md", "dumps-and-origins.md", "review.md", "lm-eval.md"]
WALKTHROUGHS = ["yokaieval.md", "wikioriginqa.md", "care.md"]
PAGES = [f"how-to/{p}" for p in HOW_TO] + [f"tutorials/{p}" for p in WALKTHROUGHS]
# The how-to guides go on from one another's files, as their pages say: each runs in a copy of
# the directory the page before it left.
CONTINUES = {
    "how-to/corpora.md": "how-to/dumps-and-origins.md",
    "how-to/build-datasets.md": "how-to/corpora.md",
    "how-to/evaluate.md": "how-to/build-datasets.md",
    "how-to/review.md": "how-to/build-datasets.md",
    "how-to/lm-eval.md": "how-to/build-datasets.md",
}


# Before a command, what a person does on the page (the review in the browser): recipe.people.


@pytest.fixture(scope="module")
def stand_ins(tmp_path_factory, tiny_model_dir):
    """The loopback mirror and LLM server, and the tiny model, for every page."""
    tree = recipe.mirror_tree(tmp_path_factory.mktemp("mirror") / "tree")
    with Mirror(tree) as mirror, ChatServer(answer=recipe.scripted_any) as llm, FakeHub(token="hf_docs") as hub:
        yield {"mirror": mirror.url, "llm": llm.url, "model": tiny_model_dir, "hub": hub}


def run_page(page: str, work: Path, stand_ins: dict) -> list[dict]:
    """Every command of ``page`` in ``work``, in order: its line, argv, exit code and output."""
    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    if not (work / "tests").exists():
        (work / "tests").symlink_to(ROOT / "tests", target_is_directory=True)
    ran = []
    with contextlib.chdir(work):
        for line, command, shown in recipe.console_commands(text):
            argv = recipe.page_argv(command, stand_ins["mirror"], stand_ins["llm"], stand_ins["model"])
            recipe.people(work, argv)
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main(argv)
            ran.append(
                {"line": line, "argv": argv, "code": code, "said": out.getvalue() + err.getvalue(), "shown": shown}
            )
    return ran


@pytest.fixture(scope="module")
def ran(stand_ins, tmp_path_factory):
    """Each page run once: ``{page: (work, [commands])}``, filled as the tests ask."""
    done = {}
    mp = pytest.MonkeyPatch()
    mp.setenv("OPENAI_API_KEY", "test")
    mp.setenv("OPENAI_BASE_URL", stand_ins["llm"])
    mp.setenv("WIKIORIGIN_CONTACT", "docs@example.org")
    mp.setenv("HF_ENDPOINT", stand_ins["hub"].url)  # `build card --push` hands the set to the stand-in hub
    mp.setenv("HF_TOKEN", "hf_docs")

    def get(page):
        if page not in done:
            work = tmp_path_factory.mktemp(Path(page).stem)
            if page in CONTINUES:
                shutil.copytree(get(CONTINUES[page])[0], work, symlinks=True, dirs_exist_ok=True)
            done[page] = (work, run_page(page, work, stand_ins))
        return done[page]

    yield get
    mp.undo()


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES)
def test_every_command_of_the_page_runs_and_prints_what_it_shows(page, ran):
    work, commands = ran(page)
    assert len(commands) >= 3, f"{page}: a page with commands to follow"
    for c in commands:
        where = f"{page}:{c['line']}: `wikiorigin {' '.join(c['argv'])}`"
        assert c["code"] == 0, f"{where} exited {c['code']}:\n{c['said']}"
        for shown in c["shown"]:
            assert recipe.shown_in(shown, c["said"]), f"{where} did not print {shown!r}; it printed:\n{c['said']}"


def named_commands(text: str) -> list[str]:
    """The commands a page's section headings name (``## `wikiorigin build freeform` and `build
    preference```: ``build freeform``, ``build preference``)."""
    return [
        name
        for heading in re.findall(r"^## (.*`wikiorigin .*)$", text, re.M)
        for name in re.findall(r"`(?:wikiorigin )?([a-z]+(?: [a-z-]+)?)`", heading)
    ]


def test_every_how_to_page_has_commands_that_a_test_runs():
    """Each how-to guide is run here (its ``console`` commands) or is the Python API's (its
    ``python`` blocks, run by tests/test_docs_examples.py)."""
    for page in sorted((ROOT / "docs" / "how-to").glob("*.md")):
        text = page.read_text(encoding="utf-8")
        if page.name in HOW_TO:
            assert recipe.console_commands(text), page.name
        else:
            assert "```python" in text and "```console" not in text, f"{page.name}: commands no test runs"


@pytest.mark.parametrize("name", HOW_TO)
def test_the_how_to_pages_run_each_command_they_describe(name):
    text = (ROOT / "docs" / "how-to" / name).read_text(encoding="utf-8")
    run = [" ".join(recipe.page_argv(c, "m", "l", Path("x"))) for _, c, _ in recipe.console_commands(text)]
    named = named_commands(text)
    assert named, name
    assert [n for n in named if not any(r == n or r.startswith(n + " ") for r in run)] == []


@pytest.mark.slow
def test_yokaieval_walkthrough_builds_with_the_paper_s_preset_and_makes_the_table(ran):
    from wikiorigin.files import read_provenance

    work, _ = ran("tutorials/yokaieval.md")
    built = read_provenance(work / "work" / "yokaieval" / "test.parquet")
    assert built["preset"] == "yokaieval" and built["builder"] == "mcq"
    rows = pq.read_table(work / "work" / "yokaieval" / "test.parquet").to_pylist()
    reviewed = pq.read_table(work / "work" / "yokaieval-reviewed" / "test.parquet").to_pylist()
    assert rows and len(reviewed) == len(rows) - 2  # a tie is no majority
    assert (work / "work" / "table" / "comparison.md").read_text(encoding="utf-8").count("\n| ") >= 2
    report = (work / "work" / "results" / "my-model" / "report.md").read_text(encoding="utf-8")
    assert rows[0]["type"] in report and rows[0]["region"] in report
    croissant = json.loads((work / "work" / "yokaieval-reviewed" / "croissant.json").read_text(encoding="utf-8"))
    assert "preset yokaieval" in croissant["rai:dataCollection"]
    based_on = [s["name"] for s in croissant["isBasedOn"]]
    assert based_on == ["articles: yokai-articles.parquet", "reviewed: test.parquet"]
    assert "alice and bob: Cohen's kappa" in croissant["rai:dataAnnotationAnalysis"]


@pytest.mark.slow
def test_wikioriginqa_walkthrough_builds_with_the_paper_s_preset(ran):
    from wikiorigin.files import read_provenance

    work, commands = ran("tutorials/wikioriginqa.md")
    steps = [" ".join(c["argv"][:2]) for c in commands]
    for step in ("download", "scan", "origins", "subset", "wikidata extract", "corpus origin", "build freeform"):
        assert any(s.startswith(step) for s in steps), step
    built = read_provenance(work / "work" / "qa" / "freeform.parquet")
    assert built["preset"] == "wikioriginqa" and built["builder"] == "freeform"
    summary = json.loads((work / "work" / "results" / "my-model" / "summary.json").read_text(encoding="utf-8"))
    assert summary["n"] == pq.ParquetFile(work / "work" / "qa" / "freeform.parquet").metadata.num_rows > 0


@pytest.mark.slow
def test_care_walkthrough_pairs_the_ratings_and_measures_the_judge(ran):
    from wikiorigin.files import read_provenance

    work, _ = ran("tutorials/care.md")
    assert read_provenance(work / "work" / "care" / "preferences.parquet")["preset"] == "care"
    summary = json.loads((work / "work" / "care" / "judge" / "summary.json").read_text(encoding="utf-8"))
    agreement = summary["agreement"]
    assert agreement["n"] == 14 and agreement["pearson"]["r"] > 0.9  # the scripted judge follows the people
    rated = json.loads((work / "work" / "care" / "my-model" / "summary.json").read_text(encoding="utf-8"))
    assert rated["n"] == 150 and rated["by_category"]


@pytest.mark.slow
@pytest.mark.parametrize("page", [f"tutorials/{p}" for p in WALKTHROUGHS])
def test_a_walkthrough_runs_as_processes_as_its_page_says(page, tmp_path, capsys):
    """`python scripts/recipe.py --page PAGE` (each walkthrough says so): every command as its
    own process, the review's decisions recorded between them."""
    assert recipe.main(["--page", str(ROOT / "docs" / page), "--out", str(tmp_path / "run")]) == 0, capsys.readouterr()
