"""The API reference: every public module has its page on the documentation site, and every name
a public module lists in ``__all__`` has a docstring, as mkdocstrings reads them (griffe, from the
source); ``import wikiorigin`` stays cheap. The command line is left out (its reference is the
commands page, generated from the parser)."""

import importlib
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

griffe = pytest.importorskip("griffe", reason="the API docstrings are read with griffe: pip install -e .[test]")

ROOT = Path(__file__).resolve().parents[1]
SUBPACKAGES = ["builders", "corpora", "dumps", "evaluators", "llm", "testing"]


def _gen_reference():
    spec = importlib.util.spec_from_file_location("gen_reference", ROOT / "scripts" / "gen_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GEN = _gen_reference()
MODULES = GEN.public_modules()
PACKAGE = griffe.load("wikiorigin", search_paths=[str(ROOT)], resolve_aliases=False)


def _static(name: str):
    """The griffe object of a dotted path, aliases followed to what they name (None if absent)."""
    try:
        obj = PACKAGE[name.removeprefix("wikiorigin").lstrip(".")] if name != "wikiorigin" else PACKAGE
    except KeyError:
        return None
    try:
        return obj.final_target if obj.is_alias else obj
    except (griffe.AliasResolutionError, griffe.CyclicAliasError):
        return None


def _member(module_name: str, public: str):
    """The object documented under ``module_name.public``: a member of the module, or, for a
    package that imports its names on first use, the object in the module its ``_EXPORTS`` names."""
    found = _static(f"{module_name}.{public}")
    if found is None:
        defining = GEN.lazy_exports(module_name).get(public)
        if defining:
            found = _static(f"{defining}.{public}")
    return found


def test_every_public_module_has_a_page():
    pages = GEN.api_pages()
    text = "\n".join(pages.values())
    for name in MODULES:
        assert f"::: {name}\n" in text, name
    assert "reference/api/index.md" in pages and "reference/api/wikiorigin.md" in pages
    for sub in SUBPACKAGES:
        assert f"reference/api/wikiorigin.{sub}.md" in pages, sub


def test_the_site_navigation_lists_every_api_page():
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    missing = [path for path in GEN.api_pages() if path not in nav]
    assert missing == [], "add these pages to mkdocs.yml's nav"


def test_command_line_is_left_out():
    assert "wikiorigin.dumps" in MODULES and "wikiorigin.dumps.scan" in MODULES
    assert not [n for n in MODULES if n.startswith("wikiorigin.cli")]
    assert not [n for n in MODULES if "._" in n]


def test_lazy_exports_name_their_modules():
    exports = GEN.lazy_exports("wikiorigin")
    assert exports["build_origins"] == "wikiorigin.origin"
    assert exports["evaluate_generate"] == "wikiorigin.evaluators.mcq"


@pytest.mark.parametrize("name", MODULES)
def test_module_has_docstring_and_all(name):
    module = importlib.import_module(name)
    assert (module.__doc__ or "").strip(), f"{name} has no module docstring"
    assert isinstance(getattr(module, "__all__", None), list), f"{name} has no __all__"
    assert all(isinstance(n, str) for n in module.__all__), f"{name}.__all__ must list strings"


@pytest.mark.parametrize("name", MODULES)
def test_every_public_name_has_a_docstring(name):
    module = importlib.import_module(name)
    missing = []
    for public in module.__all__:
        assert hasattr(module, public), f"{name}.__all__ names {public!r}, which {name} lacks"
        member = _member(name, public)
        if member is None:  # made at run time (no source to read): the object's own docstring
            if not (getattr(getattr(module, public), "__doc__", None) or "").strip() or isinstance(
                getattr(module, public), (str, int, float, list, dict, tuple, frozenset)
            ):
                missing.append(public)
        elif not (member.docstring and member.docstring.value.strip()):
            missing.append(f"{member.kind.value} {public}")
    assert not missing, f"{name}: no docstring on " + ", ".join(missing)


def test_import_is_cheap():
    code = (
        "import sys, wikiorigin; "
        "print(sorted(m for m in ('pyarrow', 'torch', 'transformers', 'duckdb', 'numpy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("package", ["wikiorigin"] + [f"wikiorigin.{s}" for s in SUBPACKAGES])
def test_lazy_names_resolve(package):
    module = importlib.import_module(package)
    for public in module.__all__:
        assert getattr(module, public) is not None
        assert public in dir(module)
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        module.nope  # noqa: B018


@pytest.mark.parametrize("name", MODULES)
def test_every_public_method_and_function_has_a_docstring(name):
    """Beyond ``__all__``: the public methods of the classes a module defines and exports, and its
    public functions (no leading underscore) that ``__all__`` leaves out."""
    module = importlib.import_module(name)
    static = _static(name)
    missing = []
    for public in module.__all__:
        member = static.members.get(public) if static is not None else None
        if member is not None and not member.is_alias and member.is_class:
            missing += [
                f"{public}.{m.name}"
                for m in member.members.values()
                if not m.is_alias
                and m.is_function
                and not m.name.startswith("_")
                and not (m.docstring and m.docstring.value.strip())
            ]
    for key, value in vars(module).items():
        if (
            callable(value)
            and getattr(value, "__module__", None) == name
            and not key.startswith("_")
            and key not in module.__all__
            and not isinstance(value, type)
            and not (getattr(value, "__doc__", None) or "").strip()
        ):
            missing.append(key)
    assert not missing, f"{name}: no docstring on " + ", ".join(missing)


@pytest.mark.slow
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
