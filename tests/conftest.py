import gzip
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data" / "dumps"


@pytest.fixture(scope="session")
def data_dir() -> Path:
    return DATA


@pytest.fixture(scope="session")
def synthetic_stub(tmp_path_factory):
    """A ~3 MB gzip stub-meta-history with known answers."""
    from wikiorigin.dumps.synthetic import write_history_xml

    path = tmp_path_factory.mktemp("synthetic") / "testwiki-stub-meta-history.xml.gz"
    with gzip.open(path, "wb", compresslevel=1) as f:
        records = list(write_history_xml(f, 3_000_000, seed=11))
    return path, records
