"""The command line explains itself: every option of every command has a help text, and the
command reference of the documentation (generated from the parser) names every option the
commands have, with its help."""

import argparse
import html
import importlib.util
import re
from pathlib import Path

from wikiorigin.cli import _parser

ROOT = Path(__file__).resolve().parents[2]


def _options(parser, name="wikiorigin"):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub, child in action.choices.items():
                yield from _options(child, f"{name} {sub}")
        elif action.option_strings and action.dest != "help":
            yield name, action


def _command_reference() -> str:
    spec = importlib.util.spec_from_file_location("gen_reference", ROOT / "scripts" / "gen_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.command_reference()


def test_every_option_is_explained():
    assert [(n, a.option_strings) for n, a in _options(_parser()) if not a.help] == []


def _plain(markdown: str) -> str:
    """A reference row as text: Markdown escapes and HTML entities undone."""
    return html.unescape(re.sub(r"\\(.)", r"\1", markdown))


def test_the_command_reference_documents_every_option():
    """Each command has its section, and each option a row there with its help: an option added
    without help, or missing from the reference, fails."""
    reference = _command_reference()
    sections = dict(re.findall(r"^#{2,4} (wikiorigin[^\n]*)\n(.*?)(?=^#{2,4} wikiorigin|\Z)", reference, re.S | re.M))
    missing = []
    for name, action in _options(_parser()):
        rows = [_plain(line) for line in sections.get(name, "").splitlines() if line.startswith("| `")]
        help_start = " ".join((action.help or "").split()[:4])
        documented = any(
            help_start in row and any(f"`{o}`" in row.split(" | ")[0] for o in action.option_strings) for row in rows
        )
        if not help_start or not documented:
            missing.append((name, action.option_strings))
    assert missing == []


def test_help_shows_defaults(capsys):
    import pytest

    with pytest.raises(SystemExit):
        _parser().parse_args(["subset", "--help"])
    out = capsys.readouterr().out
    assert "(default: 1)" in out and "seed of --sample (default: 0)" in " ".join(out.split())


def test_the_command_line_starts_light():
    """`wikiorigin --help` loads no pyarrow, numpy, asyncio or torch: handlers import them."""
    import subprocess
    import sys

    code = "import sys, wikiorigin.cli; print(sorted(m for m in ('pyarrow', 'numpy', 'asyncio', 'torch') if m in sys.modules))"
    assert (
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "[]"
    )


def test_each_command_is_parsed_with_its_own_stage():
    """`main` builds only the named command's stage: every command is listed under the stage
    that has it, and that stage's parser alone gives the command the same options."""
    from wikiorigin import cli

    def commands(parser):
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        return sub.choices

    everything = commands(_parser())
    assert set(cli._STAGE_OF) == set(everything)
    for name, whole in everything.items():
        alone = commands(_parser(name))
        assert set(alone) < set(everything) and name in alone, name
        assert [(n, a.option_strings) for n, a in _options(alone[name])] == [
            (n, a.option_strings) for n, a in _options(whole)
        ]
