"""The command line explains itself: every option of every command has a help text, and the
README's synopsis names every option the commands have."""

import argparse
import re
from pathlib import Path

from wikiorigin.cli import _parser

README = Path(__file__).resolve().parents[2] / "README.md"


def _options(parser, name="wikiorigin"):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub, child in action.choices.items():
                yield from _options(child, f"{name} {sub}")
        elif action.option_strings and action.dest != "help":
            yield name, action


def _synopsis() -> str:
    text = README.read_text(encoding="utf-8")
    block = text[text.index("## Command line"):]
    return re.search(r"```\n(.*?)```", block, re.S).group(1)


def test_every_option_is_explained():
    assert [(n, a.option_strings) for n, a in _options(_parser()) if not a.help] == []


def test_the_readme_synopsis_names_every_option():
    synopsis = _synopsis()
    missing = [(n, a.option_strings) for n, a in _options(_parser())
               if not any(re.search(re.escape(o) + r"\b", synopsis) for o in a.option_strings)]
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
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "[]"
