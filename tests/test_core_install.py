"""The core install (`pip install wikiorigin`, no extra) re-scores recorded answers with their
intervals: `eval mcq --responses` runs in a Python where every installed distribution that the
core's dependencies do not pull in (pyproject.toml read as it is, not the venv's possibly older
metadata) cannot be imported, torch and transformers among them."""

import json
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

tomllib = pytest.importorskip("tomllib", reason="Python 3.11 reads TOML")
ROOT = Path(__file__).resolve().parents[1]
RESPONSES = ROOT / "tests" / "data" / "yokaieval" / "responses-calm2-7b-chat.json.xz"
HEAVY = {"torch", "transformers"}

# A meta path finder that refuses the modules of distributions outside the core, as an install
# without extras lacks them, and notes each refusal; then the code under test; then what was
# imported, as JSON.
_CORE_ONLY = """
import json, sys
from importlib.abc import MetaPathFinder

absent, refused = set({absent!r}), []

class Absent(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in absent:
            refused.append(name)
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, Absent())
{code}
print(json.dumps({{"refused": refused, "modules": sorted({{m.split(".")[0] for m in sys.modules}})}}))
"""


def _core_closure(also: tuple[str, ...] = ()) -> set[str]:
    """The distributions `pip install wikiorigin` installs (and `pip install ALSO`): the core's
    requirements in pyproject.toml and, recursively, theirs without extras (as installed here)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    todo = [Requirement(r) for r in [*project["dependencies"], *also]]
    seen = {"wikiorigin"}
    while todo:
        req = todo.pop()
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        name = canonicalize_name(req.name)
        if name in seen:
            continue
        seen.add(name)
        todo += [Requirement(r) for r in metadata.requires(req.name) or ()]
    return seen


def _outside_the_core(also: tuple[str, ...] = ()) -> set[str]:
    """The top-level modules here of no distribution of the core install (nor of ``also``)."""
    core = _core_closure(also)
    owners = metadata.packages_distributions()
    return {m for m, dists in owners.items() if not {canonicalize_name(d) for d in dists} & core}


def _core_only(code: str, cwd: Path) -> dict:
    absent = _outside_the_core()
    assert HEAVY <= absent
    run = subprocess.run(
        [sys.executable, "-c", _CORE_ONLY.format(absent=sorted(absent), code=code)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_eval_mcq_scores_recorded_answers_with_intervals_in_the_core_install(tmp_path):
    out = tmp_path / "run"
    argv = ["eval", "mcq", "--responses", str(RESPONSES), "--out", str(out)]
    seen = _core_only(f"from wikiorigin import cli\nassert cli.main({argv!r}) == 0", tmp_path)
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    low, high = summary["accuracy_ci95"]
    assert low < summary["accuracy"] < high and summary["n"] == 810
    assert not HEAVY & {name.split(".")[0] for name in seen["refused"]}, "the scoring reached for torch"
    assert (out / "accuracy_by_type.png").stat().st_size > 0


@pytest.mark.slow
def test_the_statistics_and_tasks_import_no_torch(tmp_path):
    code = "import wikiorigin, wikiorigin.evaluators.stats, wikiorigin.evaluators.tasks, wikiorigin.evaluators.recorded"
    seen = _core_only(code, tmp_path)
    assert not HEAVY & {name.split(".")[0] for name in seen["refused"]}
    assert not HEAVY & set(seen["modules"])


def test_the_intervals_need_no_extra():
    closure = _core_closure()
    assert {"scipy", "statsmodels"} <= closure
    assert not HEAVY & closure


@pytest.mark.slow
def test_the_suite_collects_without_extras():
    """A test file imports an extra's module (torch, psutil, lm_eval, ...) only through
    ``pytest.importorskip`` or tests/optional.py: an install without extras collects every file."""
    absent = _outside_the_core(also=("pytest",))
    code = f"import pytest, sys\nsys.exit(pytest.main(['--collect-only', '-q', '-p', 'no:cacheprovider', {str(ROOT / 'tests')!r}]))"
    env = {k: v for k, v in os.environ.items() if k != "CI"}  # under CI a missing extra fails, as it should
    run = subprocess.run(
        [sys.executable, "-c", _CORE_ONLY.format(absent=sorted(absent), code=code)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout[-3000:]
