"""The house's size rules, checked on the whole package: modules of at most 400 lines, functions
of at most 60 (docstring included). The command line's own rules: tests/cli/test_house.py; the
core free of any one culture: tests/test_culture_presets.py."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "wikiorigin"
MODULES = sorted(p for p in PACKAGE.rglob("*.py"))


def test_no_module_over_400_lines():
    long = {
        str(p.relative_to(ROOT)): n for p in MODULES if (n := len(p.read_text(encoding="utf-8").splitlines())) > 400
    }
    assert not long, long


def test_no_function_over_60_lines():
    long = []
    for path in MODULES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > 60:
                    long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({lines} lines)")
    assert not long, long
