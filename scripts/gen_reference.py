"""The generated pages of the documentation's reference: every command from the argparse parser,
every file schema from ``wikiorigin/schemas.py``, and a page per public module for mkdocstrings.

    python scripts/gen_reference.py OUT_DIR     # write the pages, to read them without MkDocs

``mkdocs build`` makes the same pages through ``scripts/gen_pages.py`` (the mkdocs-gen-files
plugin), so they are never stale and never committed. The tests import this file:
``tests/cli/test_help.py`` checks that the command reference names every option,
``tests/test_api_docs.py`` that every public module has its page and every public name a
docstring. Nothing here imports more than ``wikiorigin.cli`` and ``wikiorigin.schemas``
(pyarrow): the module pages are read from the source by mkdocstrings, not imported.
"""

from __future__ import annotations

import argparse
import ast
import io
import os
import re
import sys
import tokenize
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "wikiorigin"
EXCLUDED = ("wikiorigin.cli",)  # the command line has its own reference (commands.md)
WIDTH = "100"  # the width of the usage lines


# -- the modules ----------------------------------------------------------------------------------


def public_modules() -> list[str]:
    """Names of the documented modules: ``wikiorigin`` and every module below it whose dotted name
    has no part starting with ``_``, less the command line (:data:`EXCLUDED` and what lies under
    it). Found on disk, nothing imported."""
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
            if not (path.parent / "__init__.py").exists():
                continue
        elif not all((ROOT.joinpath(*parts[:i]) / "__init__.py").exists() for i in range(1, len(parts))):
            continue  # a file in a folder that is not a package (data, static)
        name = ".".join(parts)
        if any(p.startswith("_") for p in parts) or any(name == e or name.startswith(e + ".") for e in EXCLUDED):
            continue
        names.append(name)
    return sorted(names, key=lambda n: (n != "wikiorigin", n))


def module_file(name: str) -> Path:
    """The source file of module ``name``."""
    path = ROOT.joinpath(*name.split("."))
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


def _summary(name: str) -> str:
    doc = ast.get_docstring(ast.parse(module_file(name).read_text(encoding="utf-8"))) or ""
    first = doc.strip().split("\n\n")[0]
    return _markdown(" ".join(first.split()))


def api_group(name: str) -> str:
    """The API page that documents module ``name``: its sub-package's, or ``wikiorigin`` for the
    package itself and its top-level modules."""
    parts = name.split(".")
    if len(parts) == 1 or (len(parts) == 2 and not module_file(name).name == "__init__.py"):
        return "wikiorigin"
    return ".".join(parts[:2])


def lazy_exports(name: str) -> dict[str, str]:
    """Public name -> the module that defines it, for a package whose ``__init__`` imports its
    names on first use (an ``_EXPORTS`` dict, read from the source)."""
    tree = ast.parse(module_file(name).read_text(encoding="utf-8"))
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "_EXPORTS" for t in node.targets)
            and isinstance(node.value, ast.Dict)
        ):
            exports = ast.literal_eval(node.value)
            return {key: name + value if value.startswith(".") else value for key, value in exports.items()}
    return {}


def _exports_table(name: str) -> list[str]:
    exports = lazy_exports(name)
    if not exports:
        return []
    rows = [f"| [`{key}`][{module}.{key}] | [`{module}`][{module}] |" for key, module in exports.items()]
    return [
        "",
        f"Names `{name}` imports on first use, each documented in its module:",
        "",
        "| name | module |",
        "| --- | --- |",
        *rows,
        "",
    ]


def api_pages() -> dict[str, str]:
    """Path under the docs -> Markdown, for the Python API: an index, and a page per sub-package
    (``wikiorigin`` itself and its top-level modules on one) with every public module on it."""
    groups: dict[str, list[str]] = {}
    for name in public_modules():
        groups.setdefault(api_group(name), []).append(name)
    pages = {}
    rows = []
    for group, modules in groups.items():
        body = [f"# `{group}`", ""]
        for name in modules:
            body += [f"::: {name}", ""]
            if name == group or name in groups:
                body += _exports_table(name)
            rows.append(f"| [`{name}`][{name}] | {_cell(_summary(name))} |")
        pages[f"reference/api/{group}.md"] = "\n".join(body)
    pages["reference/api/index.md"] = "\n".join(
        [
            "# Python API",
            "",
            "Every public module of the package, from its docstrings (mkdocstrings). A module's public",
            "names are those its `__all__` lists; each package's `__init__` re-exports the main ones and",
            "imports them on first use, so `import wikiorigin` stays cheap. The command line",
            "(`wikiorigin.cli`) is documented under [Commands](../commands.md).",
            "",
            "| module | what it holds |",
            "| --- | --- |",
            *rows,
            "",
        ]
    )
    return pages


# -- the commands ---------------------------------------------------------------------------------


@contextmanager
def _columns(width: str):
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = width
    try:
        yield
    finally:
        if old is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = old


def _parser() -> argparse.ArgumentParser:
    sys.path.insert(0, str(ROOT))
    from wikiorigin.cli import _parser

    return _parser()


def commands(parser: argparse.ArgumentParser | None = None, name: str = "wikiorigin"):
    """(command name, its parser) for the top level and every command and sub-command, in the
    parser's order."""
    parser = parser or _parser()
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            seen = set()
            for sub, child in action.choices.items():
                if id(child) not in seen:  # an alias names the same parser
                    seen.add(id(child))
                    yield from commands(child, f"{name} {sub}")


def _help(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    formatter = parser._get_formatter()
    text = formatter._get_help_string(action) or ""
    return formatter._expand_help(action) if text else ""


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _escape(text: str) -> str:
    """Help text as Markdown that shows it as written: no HTML, no emphasis from ``*``."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return re.sub(r"([*_\\`\[\]])", r"\\\1", text)


def _option_name(action: argparse.Action) -> str:
    names = ", ".join(f"`{o}`" for o in action.option_strings) or f"`{action.dest}`"
    if action.nargs == 0:
        return names
    metavar = action.metavar or (action.dest.upper() if action.option_strings else None)
    if isinstance(metavar, tuple):
        metavar = " ".join(metavar)
    if action.choices is not None and action.metavar is None and not isinstance(action, argparse._SubParsersAction):
        metavar = "{" + ",".join(map(str, action.choices)) + "}"
    return f"{names} `{metavar}`" if metavar and action.option_strings else names


def command_reference() -> str:
    """The commands page: for each command its usage, description and every option with its help
    text (defaults included), generated from the parser."""
    out = []
    with _columns(WIDTH):
        for name, parser in commands():
            subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
            depth = name.count(" ")
            out.append(f"{'#' * min(depth + 2, 4)} {name}\n")
            if parser.description:
                out.append(_escape(" ".join(parser.description.split())) + "\n")
            out.append("```text\n" + parser.format_usage().strip() + "\n```\n")
            if subs:
                out.append("| command | what it does |\n| --- | --- |")
                for choice in subs[0]._choices_actions:
                    anchor = f"{name} {choice.dest}".replace(" ", "-")
                    out.append(f"| [`{name} {choice.dest}`](#{anchor}) | {_cell(_escape(choice.help or ''))} |")
                out.append("")
            for group in parser._action_groups:
                actions = [
                    a
                    for a in group._group_actions
                    if a.help is not argparse.SUPPRESS
                    and not isinstance(a, argparse._SubParsersAction)
                    and a.dest != "help"
                ]
                if not actions:
                    continue
                title = {"positional arguments": "arguments", "optional arguments": "options"}.get(
                    group.title, group.title or "options"
                )
                out.append(f"**{title[0].upper() + title[1:]}**\n")
                if group.description:
                    out.append(_escape(" ".join(group.description.split())) + "\n")
                kind = "option" if any(a.option_strings for a in actions) else "argument"
                out.append(f"| {kind} | what it does |\n| --- | --- |")
                for action in actions:
                    out.append(f"| {_cell(_option_name(action))} | {_cell(_escape(_help(parser, action)))} |")
                out.append("")
            if parser.epilog:
                out.append(_escape(" ".join(parser.epilog.split())) + "\n")
    return "\n".join(out)


# -- the file schemas -----------------------------------------------------------------------------


def _markdown(text: str) -> str:
    """reStructuredText roles and literals of a docstring as Markdown."""
    text = re.sub(r":(?:data|func|class|meth|mod|attr|exc):`~?([^`]+)`", r"`\1`", text)
    return re.sub(r"``([^`]+)``", r"`\1`", text)


def _type(t) -> str:
    import pyarrow as pa

    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return f"list<{_type(t.value_type)}>"
    if pa.types.is_struct(t):
        return "struct<" + ", ".join(f"{t.field(i).name} {_type(t.field(i).type)}" for i in range(t.num_fields)) + ">"
    if pa.types.is_timestamp(t):
        return f"timestamp[{t.unit}{', ' + t.tz if t.tz else ''}]"
    return str(t)


def _source_notes(path: Path) -> tuple[dict[str, str], dict[str, tuple[int, int]], dict[int, str]]:
    """From the schemas' source: each top-level name's docstring (the string after its
    assignment), the lines its assignment spans, and the comment on each line."""
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    docs, spans = {}, {}
    body = tree.body
    for i, node in enumerate(body):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            spans[name] = (node.lineno, node.end_lineno)
            nxt = body[i + 1] if i + 1 < len(body) else None
            if isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant) and isinstance(nxt.value.value, str):
                docs[name] = " ".join(nxt.value.value.split())
    comments = {
        tok.start[0]: tok.string.lstrip("# ").strip()
        for tok in tokenize.generate_tokens(io.StringIO(source).readline)
        if tok.type == tokenize.COMMENT
    }
    return docs, spans, comments


def _column_notes(name: str, spans, comments, source_lines) -> dict[str, str]:
    """Column -> the comment beside it in the schema's source."""
    start, end = spans.get(name, (0, -1))
    notes = {}
    for line in range(start, end + 1):
        m = re.match(r'\s*\("([^"]+)"', source_lines[line - 1])
        if m and line in comments:
            notes[m.group(1)] = comments[line]
    return notes


def schema_reference() -> str:
    """Every schema of ``wikiorigin.schemas`` as a table (column, type, rule, note), with its
    docstring; then the vocabularies and the input rules, all from the module."""
    import pyarrow as pa

    sys.path.insert(0, str(ROOT))
    from wikiorigin import schemas

    path = PACKAGE / "schemas.py"
    docs, spans, comments = _source_notes(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    out = []
    structs = []
    for name in schemas.__all__:
        value = getattr(schemas, name)
        if isinstance(value, pa.Schema):
            out.append(f"### `{name}`\n")
            if name in docs:
                out.append(_markdown(docs[name]) + "\n")
            notes = _column_notes(name, spans, comments, lines)
            out.append("| column | type | not null | note |\n| --- | --- | --- | --- |")
            for f in value:
                null = "yes" if f.name in schemas.NOT_NULL else ""
                out.append(
                    f"| `{f.name}` | `{_cell(_type(f.type))}` | {null} | {_cell(_markdown(notes.get(f.name, '')))} |"
                )
            out.append("")
        elif isinstance(value, pa.DataType) and pa.types.is_struct(value):
            structs.append(name)
    if structs:
        out.append("### Structs inside the files\n")
        for name in structs:
            t = getattr(schemas, name)
            out.append(f"- **`{name}`**: `{_cell(_type(t))}`. {_markdown(docs.get(name, ''))}")
        out.append("")
    out.append("### Vocabularies\n")
    for name in schemas.__all__:
        value = getattr(schemas, name)
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            out.append(f"- **`{name}`**: {', '.join(f'`{v}`' for v in value)}. {_markdown(docs.get(name, ''))}")
    out.append("")
    out.append("### How inputs are checked\n")
    for name in ("INPUT_SCHEMAS", "COLUMN_TYPES", "NOT_NULL"):
        if name in docs:
            out.append(f"- **`{name}`**: {_markdown(docs[name])}")
    not_null = ", ".join(f"`{c}`" for c in sorted(schemas.NOT_NULL))
    out.append(f"- The columns checked not null (*not null* above) where a stage reads them: {not_null}.")
    func = getattr(schemas, "column_mismatch", None)
    if func is not None and func.__doc__:
        out.append(f"- **`column_mismatch`**: {_markdown(' '.join(func.__doc__.split()))}")
    out.append("")
    return "\n".join(out)


# -- pages that hold a generated part -------------------------------------------------------------

MARKER = "<!-- generated -->"


def fill(template: str, generated: str) -> str:
    """A hand-written page with the generated part put where its marker line stands."""
    if MARKER not in template:
        raise ValueError(f"the page has no {MARKER} line")
    return template.replace(MARKER, generated)


def pages(docs: Path = ROOT / "docs") -> dict[str, str]:
    """Path under the docs -> Markdown of every generated page."""
    result = api_pages()
    result["reference/commands.md"] = fill(
        (docs / "reference/commands.md").read_text(encoding="utf-8"), command_reference()
    )
    result["reference/file-schemas.md"] = fill(
        (docs / "reference/file-schemas.md").read_text(encoding="utf-8"), schema_reference()
    )
    return result


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python scripts/gen_reference.py OUT_DIR")
    out = Path(sys.argv[1])
    for rel, text in pages().items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text(text, encoding="utf-8")
    print(f"{len(pages())} reference pages in {out}")
