from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).parent.parent / "notebooks"


def run_notebook(path: Path) -> str:
    nbformat = pytest.importorskip("nbformat", reason="the test extra is not installed")
    nbclient = pytest.importorskip("nbclient", reason="the test extra is not installed")
    nb = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}}).execute()
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    return "".join(o.get("text", "") for o in outputs if o.output_type == "stream")


def test_origins_notebook():
    assert "built 384 items from 7 wikis" in run_notebook(NOTEBOOKS / "01_origins.ipynb")


def test_build_notebook_against_the_test_server(monkeypatch):
    from tests.builders.test_freeform import scripted as freeform_answers
    from tests.builders.test_mcq import scripted as mcq_answers
    from tests.openai_server import ChatServer

    def answer(messages):
        task = messages[0]["content"].splitlines()[0]
        return freeform_answers(messages) if task.startswith("task: freeform") else mcq_answers(messages)

    with ChatServer(answer=answer) as server:
        monkeypatch.setenv("WIKIORIGIN_BASE_URL", server.url)
        monkeypatch.setenv("WIKIORIGIN_MODEL", "scripted")
        text = run_notebook(NOTEBOOKS / "02_build_datasets.ipynb")
        assert server.calls
    assert "5 articles;" in text and "usage:" in text and "'kept':" in text


def test_evaluate_notebook():
    text = run_notebook(NOTEBOOKS / "03_evaluate.ipynb")
    assert "agreement with GPT-4o" in text and "20 articles: p =" in text and "acc_norm_bytes" in text
