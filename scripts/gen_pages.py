"""Run by MkDocs (the gen-files plugin, mkdocs.yml): the reference pages of scripts/gen_reference.py,
made afresh on every build."""

import importlib.util
from pathlib import Path

import mkdocs_gen_files

_spec = importlib.util.spec_from_file_location("gen_reference", Path(__file__).with_name("gen_reference.py"))
gen_reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gen_reference)

for path, text in gen_reference.pages().items():
    with mkdocs_gen_files.open(path, "w") as f:
        f.write(text)
    mkdocs_gen_files.set_edit_path(path, "scripts/gen_reference.py")
