"""The notebooks run top to bottom (notebook 02 against the loopback test server with scripted
answers, notebook 03 with the tiny model on CPU), and the stored ones in notebooks/ are the
cells of scripts/make_notebook.py with the outputs those cells give: every code cell run in
order with its output, the plots drawn, no error, and the same key lines as a fresh run."""

import importlib.util
import re
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat", reason="nbformat is not installed (the test or notebooks extra)")
pytest.importorskip("nbclient", reason="nbclient is not installed (the test or notebooks extra)")
pytest.importorskip("ipykernel", reason="ipykernel is not installed (the test or notebooks extra)")

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"

# Lines each notebook prints: a fresh run must print them, and what they match there must be in
# the stored notebook's outputs too (none depends on the tiny model's random weights).
KEYS = {
    "01_origins.ipynb": [
        r"built 384 items from 7 wikis; skipped: eowiki",
        r"\d+ items with a runner-up; median lead \d+ days",
        r"│ jawiki +│ +\d+ │ +\d+ │",
    ],
    "02_build_datasets.ipynb": [
        r"5 articles; \['河童'\] missing",
        r"5 articles: kept [1-9]\d* of \d+ questions; dropped: [a-z ,0-9]+",
        r"'question': 'アンパサンドについて.*'",
        r"3 articles: kept 1 of 3 questions; dropped: [a-z ,0-9]+",
        r"'answers': \['アンパサンド'.*\]",
        r"# YokaiEval mini",
        r"usage: [1-9]\d* calls, \d+ cache hits, .* tokens",
    ],
    "03_evaluate.ipynb": [
        r"tiny-model on cpu",
        r"\{'acc': [0-9.]+, 'acc_norm': [0-9.]+, 'acc_norm_bytes': ",
        r"wikiorigin-eval\|task:mcq\|mode:loglikelihood\|model:tiny-model@",
        r"40 responses joined; 770 belong to questions beyond the first 40",
        r"accuracy 0\.275 \(by the file's GPT-4o verdicts [0-9.]+\), read \d+%, agreement with GPT-4o [0-9.]+",
        r"wikiorigin-eval\|task:mcq\|mode:generate\|model:recorded:calm2-7b-chat\|\S+",
        r"\| 1 \| gpt4o-mini \| 0\.700 \|",
        r"20 articles: p = ",
    ],
}


PLOTTING = {"01_origins.ipynb", "03_evaluate.ipynb"}


def _make_notebook():
    """scripts/make_notebook.py as a module: the cells, and how the notebooks are run."""
    spec = importlib.util.spec_from_file_location("make_notebook", ROOT / "scripts" / "make_notebook.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


make = _make_notebook()


def code_cells(nb) -> list:
    return [c for c in nb.cells if c.cell_type == "code"]


def shown_text(nb) -> str:
    """What the code cells print and show as text."""
    return "".join(
        o.text if o.output_type == "stream" else o.get("data", {}).get("text/plain", "")
        for cell in code_cells(nb)
        for o in cell.outputs
    )


def plotted(nb) -> list[tuple[str, bool]]:
    """Each code cell that shows a figure, and whether one of its outputs is a PNG."""
    return [
        (cell.id, any("image/png" in o.get("data", {}) for o in cell.outputs))
        for cell in code_cells(nb)
        if "plt.show()" in cell.source or "Image(" in cell.source
    ]


def check_stored(name: str, stored) -> None:
    """The stored notebook is the script's cells, each code cell run once in order, with
    outputs, its plots as PNGs, no error and nothing of stderr."""
    written = make.notebook(name)
    assert [(c.cell_type, c.source) for c in stored.cells] == [(c.cell_type, c.source) for c in written.cells], (
        f"{name} is not what scripts/make_notebook.py writes: run it"
    )
    assert stored.metadata == make.METADATA
    cells = code_cells(stored)
    assert [c.execution_count for c in cells] == list(range(1, len(cells) + 1)), f"{name}: not run top to bottom"
    assert [c.id for c in cells if not c.outputs] == [], f"{name}: code cells without outputs"
    outputs = [o for c in cells for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    assert not [o for o in outputs if o.output_type == "stream" and o.name == "stderr"]
    shows = plotted(stored)
    assert [cell for cell, png in shows if not png] == [], f"{name}: figures not shown"
    assert bool(shows) == (name in PLOTTING)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(KEYS))
def test_notebook_runs_and_is_stored_with_its_outputs(name):
    stored = nbformat.read(NOTEBOOKS / name, as_version=4)
    nbformat.validate(stored)
    check_stored(name, stored)

    fresh = make.execute(nbformat.from_dict(stored), name)  # its outputs replaced by a run's
    assert not [o for c in code_cells(fresh) for o in c.outputs if o.output_type == "error"]
    assert plotted(fresh) == plotted(stored)
    now, then = shown_text(fresh), shown_text(stored)
    for key in KEYS[name]:
        found = re.search(key, now)
        assert found, f"{name}: a fresh run prints nothing like {key!r}"
        assert found[0] in then, f"{name}: the stored outputs lack {found[0]!r}: run scripts/make_notebook.py"


def test_stored_notebooks_are_small():
    sizes = {p.name: p.stat().st_size for p in NOTEBOOKS.glob("*.ipynb")}
    assert set(sizes) == set(KEYS)
    assert sum(sizes.values()) < 400_000, sizes
