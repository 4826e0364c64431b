"""The command line is a thin shell: it holds no run lock, sweep or output check of its own (the
library's :mod:`wikiorigin.runs` does, whoever calls it), and keeps the house's rules: no module
over 400 lines, no function over 60, no import circle."""

import ast
import re
from pathlib import Path

CLI = Path(__file__).resolve().parents[2] / "wikiorigin" / "cli"
MODULES = sorted(CLI.glob("*.py"))


def test_the_command_line_holds_no_lock_and_no_sweep():
    found = [
        f"{path.name}:{n}"
        for path in MODULES
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if re.search(r"RunLock|sweep|clear_stale|leftovers", line)
    ]
    assert found == []


def test_no_module_over_400_lines_nor_function_over_60():
    long = [p.name for p in MODULES if len(p.read_text().splitlines()) > 400]
    functions = [
        f"{p.name}:{node.name} {node.end_lineno - node.lineno + 1}"
        for p in MODULES
        for node in ast.walk(ast.parse(p.read_text()))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno + 1 > 60
    ]
    assert long == [] and functions == []


def test_no_import_circle():
    """Imports inside functions counted."""
    names = {p.stem for p in MODULES}
    graph = {}
    for p in MODULES:
        found = set()
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                found |= {node.module.split(".")[0]} if node.module else {a.name for a in node.names}
        graph[p.stem] = found & names

    def visit(name, path):
        for other in graph[name]:
            assert other not in path, " -> ".join([*path, other])
            visit(other, [*path, other])

    for name in graph:
        visit(name, [name])
