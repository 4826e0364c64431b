"""The API reference (issue 13, item 7): it builds with pdoc, has a page per sub-package, and
every name a public module lists in ``__all__`` has a docstring; ``import wikiorigin`` stays cheap.
The command line is left out (its reference is ``wikiorigin --help``)."""

import importlib
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pdoc", reason="the API reference needs pdoc: pip install -e .[test]")
import pdoc.doc  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SUBPACKAGES = ["builders", "corpora", "dumps", "evaluators", "llm", "testing"]


def _api_docs():
    spec = importlib.util.spec_from_file_location("api_docs", ROOT / "scripts" / "api_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


API_DOCS = _api_docs()
MODULES = API_DOCS.public_modules()


def _docs(name: str) -> pdoc.doc.Module:
    module = importlib.import_module(name)
    API_DOCS.resolve(module)
    return pdoc.doc.Module(module)


def test_reference_has_a_page_per_module(tmp_path):
    built = API_DOCS.build(tmp_path)
    assert built == MODULES
    assert (tmp_path / "wikiorigin.html").is_file()
    for sub in SUBPACKAGES:
        assert (tmp_path / "wikiorigin" / f"{sub}.html").is_file(), sub
    for name in MODULES:
        assert (tmp_path / (name.replace(".", "/") + ".html")).is_file(), name
    assert not list((tmp_path / "wikiorigin").glob("cli*"))
    page = (tmp_path / "wikiorigin.html").read_text(encoding="utf-8")
    assert "build_origins" in page and "evaluate_generate" in page


def test_command_line_is_left_out():
    assert "wikiorigin.dumps" in MODULES and "wikiorigin.dumps.scan" in MODULES
    assert not [n for n in MODULES if n.startswith("wikiorigin.cli")]
    assert not [n for n in MODULES if "._" in n]


@pytest.mark.parametrize("name", MODULES)
def test_module_has_docstring_and_all(name):
    module = importlib.import_module(name)
    assert (module.__doc__ or "").strip(), f"{name} has no module docstring"
    assert isinstance(getattr(module, "__all__", None), list), f"{name} has no __all__"
    assert all(isinstance(n, str) for n in module.__all__), f"{name}.__all__ must list strings"


def _constant_docstring(value) -> str:
    """A re-exported constant (``from .answers import PARSER_VERSION``, ``MCQ_TYPES as TYPES``)
    is documented where it is assigned: the docstring of the same object in any public module."""
    for other in MODULES:
        docs = _docs(other)
        for public in docs.obj.__all__:
            member = docs.members.get(public)
            if (isinstance(member, pdoc.doc.Variable) and member.docstring.strip()
                    and getattr(docs.obj, public) is value):
                return member.docstring
    return ""


@pytest.mark.parametrize("name", MODULES)
def test_every_public_name_has_a_docstring(name):
    docs = _docs(name)
    module = docs.obj
    missing = []
    for public in module.__all__:
        member = docs.members.get(public)
        assert member is not None, f"{name}.__all__ names {public!r}, which {name} lacks"
        text = member.docstring.strip()
        if not text and isinstance(member, pdoc.doc.Variable):
            text = _constant_docstring(getattr(module, public)).strip()
        if not text:
            missing.append(f"{type(member).__name__.lower()} {public}")
    assert not missing, f"{name}: no docstring on " + ", ".join(missing)


def test_import_is_cheap():
    code = ("import sys, wikiorigin; "
            "print(sorted(m for m in ('pyarrow', 'torch', 'transformers', 'duckdb', 'numpy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("package", ["wikiorigin"] + [f"wikiorigin.{s}" for s in SUBPACKAGES])
def test_lazy_names_resolve(package):
    module = importlib.import_module(package)
    for public in module.__all__:
        assert getattr(module, public) is not None
        assert public in dir(module)
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        getattr(module, "nope")


@pytest.mark.parametrize("name", MODULES)
def test_every_public_method_and_function_has_a_docstring(name):
    """Beyond ``__all__``: the public methods of the classes a module exports, and its public
    functions (no leading underscore) that ``__all__`` leaves out."""
    docs = _docs(name)
    missing = []
    for public in docs.obj.__all__:
        member = docs.members.get(public)
        if isinstance(member, pdoc.doc.Class) and member.modulename == name:
            missing += [f"{public}.{m.name}" for m in member.own_members
                        if isinstance(m, pdoc.doc.Function) and not m.name.startswith("_")
                        and not m.docstring.strip()]
    for key, value in vars(docs.obj).items():
        if (callable(value) and getattr(value, "__module__", None) == name and not key.startswith("_")
                and key not in docs.obj.__all__ and not isinstance(value, type)
                and not (getattr(value, "__doc__", None) or "").strip()):
            missing.append(key)
    assert not missing, f"{name}: no docstring on " + ", ".join(missing)


def test_package_docstring_example_runs(tmp_path):
    """The example on the reference's front page (``wikiorigin``'s docstring), run as written from
    a directory where ``tests/`` is the repository's."""
    import re
    import textwrap

    import wikiorigin

    code = textwrap.dedent(re.search(r"::\n\n((?:    .*\n|\n)+)", wikiorigin.__doc__)[1])
    (tmp_path / "tests").symlink_to(ROOT / "tests")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    counts, accuracy = out.stdout.splitlines()
    assert re.fullmatch(r"\d+ items; \d+ tied", counts)
    assert 0 < float(accuracy) < 1
