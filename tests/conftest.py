import gzip
from pathlib import Path

import pytest

from tests.optional import CI

DATA = Path(__file__).parent / "data" / "dumps"
ROOT = Path(__file__).resolve().parent.parent

if CI:  # every extra is installed: a test that would skip for a missing module fails instead
    _importorskip = pytest.importorskip

    def _must_import(modname: str, *args, **kwargs):
        try:
            return _importorskip(modname, *args, **kwargs)
        except pytest.skip.Exception as exc:
            pytest.fail(f"{exc.msg} (CI=true: every extra is installed, the test must run)", pytrace=False)

    pytest.importorskip = _must_import


@pytest.fixture(autouse=True)
def _run_in_a_temporary_directory(tmp_path, monkeypatch):
    """Each test runs in its own directory, so a file written relative to the working
    directory (a default `llm-cache.sqlite`, an output) cannot litter the checkout."""
    monkeypatch.chdir(tmp_path)


@pytest.fixture(scope="session")
def data_dir() -> Path:
    return DATA


@pytest.fixture(scope="session")
def synthetic_stub(tmp_path_factory):
    """A ~3 MB gzip stub-meta-history with known answers."""
    from wikiorigin.testing import write_history_xml

    path = tmp_path_factory.mktemp("synthetic") / "testwiki-stub-meta-history.xml.gz"
    with gzip.open(path, "wb", compresslevel=1) as f:
        records = list(write_history_xml(f, 3_000_000, seed=11))
    return path, records


@pytest.fixture(scope="session")
def ja_multistream(tmp_path_factory):
    """The real jawiki sample as a multistream dump (as Wikimedia makes them), plus our list
    page 日本の妖怪一覧 (tests/data/yokai-list-page.wiki). Returns (dump, index, pages)."""
    import warnings

    from wikiorigin.testing import page_xml, write_multistream

    d = tmp_path_factory.mktemp("jawiki-multistream")
    dump, index = d / "jawiki-multistream.xml.bz2", d / "jawiki-multistream-index.txt.bz2"
    text = (DATA.parent / "yokai-list-page.wiki").read_text(encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pages = write_multistream(
            DATA / "jawiki-20230501-pages-articles-multistream_first100k-lines.xml.xz",
            dump,
            index,
            extra_pages=[page_xml(900001, "日本の妖怪一覧", text)],
        )
    return dump, index, pages


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory):
    """A random GPT-2 with a trained BPE tokenizer and a chat template (tests/tiny_model.py)."""
    pytest.importorskip("torch", reason="a local model needs the eval extra: pip install -e '.[eval]'")
    pytest.importorskip("transformers", reason="a local model needs the eval extra: pip install -e '.[eval]'")
    from tests.tiny_model import make_tiny_model

    return make_tiny_model(tmp_path_factory.mktemp("tiny-model") / "tiny", positions=1024)


@pytest.fixture(scope="session")
def tiny_model(tiny_model_dir):
    from wikiorigin.evaluators.models import LocalModel

    return LocalModel(tiny_model_dir, device="cpu", max_batch_size=8)


@pytest.fixture
def small_disk(tmp_path):
    """A 256 KiB tmpfs, to fill: a full disk under an output or a cache (needs root to mount;
    skipped where it cannot be mounted)."""
    import os
    import subprocess

    where = tmp_path / "disk"
    where.mkdir()
    if (
        os.geteuid() != 0
        or subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(where)], capture_output=True
        ).returncode
    ):
        pytest.skip("mounting a small tmpfs needs root")
    yield where
    subprocess.run(["umount", "-l", str(where)], check=False)
