"""The commands of a docs page, as ``scripts/recipe.py --page`` and tests/test_walkthroughs.py
run them: each ``$ wikiorigin ...`` line of its ``console`` blocks with what it shows, and the
stand-ins swapped in."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

# Every `console` block of a page holds commands as a reader types them (`$ wikiorigin ...`,
# continued with `\`; other lines are output). They run as written in a scratch directory, with
# three things swapped for the loopback stand-ins: the dump mirror's URL (MIRROR_URL), the LLM
# server's (LLM_URL, also OPENAI_BASE_URL for commands that name none) and the local model's
# directory (LOCAL_MODEL). A block after `<!-- not run -->` is not run (a server a person uses).

MIRROR_URL = "https://dumps.wikimedia.org"
LLM_URL = "http://localhost:8000/v1"
LOCAL_MODEL = "/models/my-model"
NOT_RUN = "<!-- not run -->"


def console_commands(text: str) -> list[tuple[int, str, list[str]]]:
    """``(line, command, shown)`` of every ``$`` command in the ``console`` blocks of a page's
    ``text`` (continuation lines joined; ``shown``: the output lines under it), blocks after
    :data:`NOT_RUN` left out."""
    found = []
    for block in re.finditer(r"^```console\n(.*?)^```", text, re.S | re.M):
        if text[: block.start()].rstrip("\n").rsplit("\n", 1)[-1].strip() == NOT_RUN:
            continue
        first = text.count("\n", 0, block.start()) + 2
        lines, i = block[1].splitlines(), 0
        while i < len(lines):
            if lines[i].startswith("$ "):
                start, command = first + i, lines[i][2:]
                while command.endswith("\\") and i + 1 < len(lines):
                    i += 1
                    command = command[:-1].rstrip() + " " + lines[i].strip()
                found.append((start, command, []))
            elif found and lines[i].strip():
                found[-1][2].append(lines[i].strip())
            i += 1
    return found


def shown_in(shown: str, said: str) -> bool:
    """An output line a page shows is a line of what the command said (``...`` stands for
    any text)."""
    pattern = ".*".join(re.escape(part) for part in shown.split("..."))
    return any(re.fullmatch(pattern, line.strip()) for line in said.splitlines())


def page_argv(command: str, mirror: str, llm: str, model_dir: Path) -> list[str]:
    """A page's command as the argv of ``wikiorigin``, the stand-ins swapped in."""
    for said, meant in ((MIRROR_URL, mirror), (LLM_URL, llm), (LOCAL_MODEL, str(model_dir))):
        command = command.replace(said, meant)
    argv = shlex.split(command, comments=True)
    if not argv or argv[0] != "wikiorigin":
        raise ValueError(f"not a wikiorigin command: {command!r}")
    return argv[1:]
