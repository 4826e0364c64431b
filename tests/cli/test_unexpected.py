"""Errors that were "unexpected" (exit 1, "please report it") and are the input's or the
environment's: one line naming the file, exit 2. DuckDB's and Arrow's errors on a
damaged or wrongly made Parquet file, a terminal that cannot show Japanese text, a model
directory that is not a model, a symbolic link that loops."""

import json
import lzma
import os
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from wikiorigin.cli import main

ROOT = Path(__file__).resolve().parents[2]
YOKAI = ROOT / "tests" / "data" / "yokaieval" / "YokaiEval-first40.json.xz"


def one_line(capsys) -> str:
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert "unexpected" not in err and "Traceback" not in err
    return err


@pytest.fixture(scope="module")
def origins(tmp_path_factory, data_dir):
    from wikiorigin.origin import build_origins

    out = tmp_path_factory.mktemp("origins") / "origins.parquet"
    build_origins(data_dir.parent / "tree", out)
    return out


def _origins_variant(origins, tmp_path, name, change) -> Path:
    table = pq.read_table(origins)
    path = tmp_path / f"{name}.parquet"
    pq.write_table(change(table), path)
    return path


def _damaged(source: Path, path: Path) -> Path:
    """``source`` with bytes changed after its first 100 (its page headers), the footer kept."""
    data = bytearray(source.read_bytes())
    for i in range(100, min(len(data) - 2000, 3000)):
        data[i] = (data[i] * 7 + 13) % 256
    path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize(
    "name, change, says",
    [
        (
            "qid",
            lambda t: t.set_column(0, "qid", pc.binary_join_element_wise("X", t["qid"], "")),
            "Could not convert string",
        ),
        (
            "n_wikis",
            lambda t: t.set_column(
                t.schema.get_field_index("n_wikis"), "n_wikis", pc.multiply(t["n_wikis"].cast(pa.int64()), 10**10)
            ),
            "not in range",
        ),
        ("columns", lambda t: t.select(["qid", "origin_wiki", "n_wikis", "lead_days"]), "no column"),
    ],
)
def test_subset_of_a_wrongly_made_origins_file(origins, tmp_path, capsys, name, change, says):
    """Today: DuckDB's ConversionException (a qid that is not Q and a number), Arrow's
    ArrowInvalid (a value out of the column's range) and a ValueError (columns missing), each
    "unexpected"."""
    path = _origins_variant(origins, tmp_path, name, change)
    assert main(["subset", str(path), "--wiki", "ja", "--out", str(tmp_path / "items.parquet")]) == 2
    err = one_line(capsys)
    assert f"{path}: " in err and says in err and "wikiorigin origins" in err
    assert not (tmp_path / "items.parquet").exists()


def test_subset_of_a_damaged_file(origins, tmp_path, capsys):
    """Today: DuckDB's ``Error: TProtocolException: Invalid data``, "unexpected"."""
    path = _damaged(origins, tmp_path / "damaged.parquet")
    assert main(["subset", str(path), "--wiki", "ja", "--out", str(tmp_path / "items.parquet")]) == 2
    assert f"{path}: cannot be read as the output of `wikiorigin origins`" in one_line(capsys)


def test_a_negative_sample_is_a_wrong_option(origins, tmp_path, capsys):
    """Today: DuckDB's BinderException (LIMIT cannot be negative), "unexpected"."""
    with pytest.raises(SystemExit) as stop:
        main(["subset", str(origins), "--wiki", "ja", "--out", str(tmp_path / "s.parquet"), "--sample", "-5"])
    assert stop.value.code == 2
    assert "argument --sample: expected a number >= 0, got '-5'" in one_line(capsys)


def test_subset_refuses_a_negative_sample(origins, tmp_path):
    from wikiorigin.errors import WikioriginError
    from wikiorigin.origin import subset

    with pytest.raises(WikioriginError, match="^sample=-5: a number of items, 0 or more"):
        subset(origins, "jawiki", tmp_path / "s.parquet", sample=-5)


def _questions() -> pa.Table:
    return pa.Table.from_pylist(json.loads(lzma.open(YOKAI).read()))


def _bad_length(path: Path) -> Path:
    """A question's length prefix (PLAIN encoding, uncompressed) made a million bytes long."""
    rows = _questions()
    pq.write_table(rows, path, compression="none", use_dictionary=False)
    data = bytearray(path.read_bytes())
    at = data.find(rows["question"][3].as_py().encode())
    data[at - 4 : at] = (10**6).to_bytes(4, "little")
    path.write_bytes(bytes(data))
    return path


def _not_utf8(path: Path) -> Path:
    """A question whose bytes are not UTF-8 in a string column."""
    offsets = pa.py_buffer(pa.array([0, 4], pa.int32()).buffers()[1].to_pybytes())
    text = pa.Array.from_buffers(pa.string(), 1, [None, offsets, pa.py_buffer(b"\xff\xfeok")])
    pq.write_table(pa.table({"question": text, "choices": [["a", "b", "c", "d"]], "answer": ["a"]}), path)
    return path


def _two_columns_one_name(path: Path) -> Path:
    rows = _questions()
    pq.write_table(
        pa.Table.from_arrays(
            [rows["question"], rows["question"], rows["choices"], rows["answer"]],
            names=["question", "question", "choices", "answer"],
        ),
        path,
    )
    return path


@pytest.mark.parametrize(
    "make, error",
    [
        (_bad_length, "ArrowInvalid"),
        (_not_utf8, "UnicodeDecodeError"),
        (_two_columns_one_name, "ArrowInvalid"),
    ],
)
@pytest.mark.parametrize(
    "command",
    [
        ["eval", "mcq", "--questions", "{path}", "--model", "some-model", "--out", "{tmp}/run"],
        ["review", "export", "{path}", "--db", "{tmp}/r.sqlite", "--out", "{tmp}/x.parquet"],
    ],
)
def test_a_hostile_parquet_file_is_named(tmp_path, capsys, make, error, command):
    """Today: "unexpected ArrowInvalid" / "unexpected UnicodeDecodeError", naming no file."""
    path = make(tmp_path / "questions.parquet")
    assert main([a.format(path=path, tmp=tmp_path) for a in command]) == 2
    err = one_line(capsys)
    assert f"{path}: cannot be read ({error}: " in err


def _ascii(args, cwd, **kwargs):
    env = {**os.environ, "PYTHONIOENCODING": "ascii", "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-m", "wikiorigin.cli", *map(str, args)],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kwargs,
    )


@pytest.mark.slow
def test_a_summary_line_the_terminal_cannot_show(origins, tmp_path):
    """Under PYTHONIOENCODING=ascii the summary naming 出力.parquet, printed after the file was
    written, used to end the run with "unexpected UnicodeEncodeError" (exit 1)."""
    run = _ascii(["subset", origins, "--wiki", "ja", "--out", "出力.parquet"], tmp_path)
    out, err = run.communicate(timeout=60)
    assert run.returncode == 0, err
    assert "items originate in jawiki -> \\u51fa\\u529b.parquet" in out
    assert (tmp_path / "出力.parquet").exists()


@pytest.mark.slow
def test_review_serve_with_a_japanese_annotator_on_an_ascii_terminal(tmp_path):
    """Today it cannot start: the line with the URL names the annotator (exit 1)."""
    run = _ascii(["review", "serve", YOKAI, "--db", "r.sqlite", "--port", "0", "--annotator", "田中"], tmp_path)
    try:
        line = run.stdout.readline()
        assert "as \\u7530\\u4e2d, decisions in r.sqlite: open http://127.0.0.1:" in line, run.stderr.read()
        url = line.rsplit("open ", 1)[1].strip()
        with urllib.request.urlopen(url, timeout=10) as page:
            assert page.status == 200
        run.send_signal(signal.SIGTERM)
        assert run.wait(30) == 143
    finally:
        if run.poll() is None:
            run.kill()
            run.wait(10)
        run.stdout.close()
        run.stderr.close()


@pytest.mark.parametrize(
    "files, says",
    [
        (
            (),
            "no config.json (the model's configuration); no tokenizer files (tokenizer.json, or tokenizer.model, "
            "or vocab.json and merges.txt); no weights (model.safetensors or pytorch_model.bin)",
        ),
        (("config.json",), "no tokenizer files"),
    ],
)
def test_a_folder_that_is_not_a_model(tmp_path, capsys, files, says):
    """Today, an empty folder: "unexpected ValueError: Couldn't instantiate the backend tokenizer"."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    model = tmp_path / "model"
    model.mkdir()
    for name in files:
        (model / name).write_text(json.dumps({"model_type": "gpt2"}))
    assert (
        main(
            [
                "eval",
                "mcq",
                "--questions",
                str(YOKAI),
                "--model",
                str(model),
                "--device",
                "cpu",
                "--out",
                str(tmp_path / "run"),
            ]
        )
        == 2
    )
    err = one_line(capsys)
    assert f"{model}: not a model directory transformers can load: " in err and says in err


def test_a_symlink_loop_given_to_scan(tmp_path, capsys):
    """Today: "unexpected RuntimeError: Symlink loop from ..." (pathlib, before Python 3.13)."""
    loop = tmp_path / "loop.xml.gz"
    loop.symlink_to(loop.name)
    assert main(["scan", str(loop), "--wiki", "ja", "--out", str(tmp_path / "pages.parquet")]) == 2
    assert f"{loop}: a symbolic link that leads back to itself" in one_line(capsys)


def test_a_symlink_loop_given_to_the_scan_function(tmp_path):
    from wikiorigin.dumps.scan import scan_to_parquet
    from wikiorigin.errors import DumpError

    loop = tmp_path / "loop.xml.gz"
    loop.symlink_to(loop.name)
    with pytest.raises(DumpError, match="loop.xml.gz: a symbolic link that leads back to itself"):
        scan_to_parquet([loop], "jawiki", tmp_path / "pages.parquet")
