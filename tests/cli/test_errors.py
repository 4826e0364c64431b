"""One-line errors before any work: an output that is a directory, for every command that
writes one file."""

from pathlib import Path

import pytest

from wikiorigin.cli import main

DUMPS = Path(__file__).resolve().parents[1] / "data" / "dumps"
EL_INDEX = DUMPS / "elwikivoyage-pages-articles-multistream-index-p2566p2583.txt.bz2"
EL = DUMPS / "elwikivoyage-pages-articles-multistream-p2566p2583.xml.bz2"


@pytest.mark.parametrize(
    "argv",
    [
        [
            "scan",
            str(DUMPS / "elwikivoyage-stub-meta-history-sample.xml.gz"),
            "--wiki",
            "elwikivoyage",
            "--allow-non-wikipedia",
        ],
        ["qids", str(DUMPS / "enwiki-2025-page_props-header-excerpt.sql"), "--wiki", "en"],
        ["origins", str(Path(__file__).resolve().parents[1] / "data" / "tree")],
        ["corpus", "yokai", "--dump", str(EL), "--index", str(EL_INDEX), "--list-page", "Τύνιδα"],
    ],
)
def test_an_output_that_is_a_directory(argv, tmp_path, capsys):
    assert main([*argv, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path}: a directory; give a file name" in err and len(err.strip().splitlines()) == 1


@pytest.mark.slow
@pytest.mark.parametrize(
    "missing, argv, extra",
    [
        ("starlette", ["review", "serve", "{yokai}", "--db", "r.sqlite", "--port", "0"], "review"),
        ("torch", ["eval", "mcq", "--questions", "{yokai}", "--model", "some-model-dir", "--out", "out"], "eval"),
    ],
)
def test_a_missing_optional_dependency_is_the_environment(missing, argv, extra, tmp_path):
    """Without an extra installed, the command says which and how to install it: one line,
    exit 2 (the environment), not an unexpected error."""
    import subprocess
    import sys

    yokai = str(Path(__file__).resolve().parents[1] / "data" / "yokaieval" / "YokaiEval-first40.json.xz")
    (tmp_path / "some-model-dir").mkdir()
    code = (
        f"import sys; sys.modules[{missing!r}] = None\n"
        "from wikiorigin.cli import main\n"
        f"sys.exit(main({[a.format(yokai=yokai) for a in argv]!r}))"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 2, run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and f".[{extra}]" in run.stderr
    assert "unexpected" not in run.stderr


@pytest.mark.parametrize(
    "argv, option, value",
    [
        (["origins", "tree", "--out", "o.parquet"], "--jobs", "0"),
        (["download", "jawiki", "--out", "tree"], "--jobs", "-2"),
        (["scan", "d.xml", "--wiki", "ja", "--out", "p.parquet"], "--threads", "0"),
        (["corpus", "yokai", "--dump", "d.bz2", "--index", "i.bz2", "--out", "a.parquet"], "--threads", "0"),
        (["build", "mcq", "--articles", "a.parquet", "--out", "m.parquet", "--model", "m"], "--per-article", "0"),
        (["build", "freeform", "--articles", "a.parquet", "--out", "f.parquet", "--model", "m"], "--rounds", "-1"),
        (["eval", "freeform", "--questions", "f.parquet", "--model", "m", "--out", "r"], "--batch-size", "0"),
        (["eval", "leakage", "--articles", "a.parquet", "--model", "m", "--out", "r"], "--max-chars", "0"),
        (["eval", "leakage", "--articles", "a.parquet", "--model", "m", "--out", "r"], "--limit", "-5"),
        (["eval", "leakage", "--articles", "a.parquet", "--model", "m", "--out", "r"], "--stride", "0"),
    ],
)
def test_a_count_that_is_not_positive_is_a_wrong_option(argv, option, value, capsys):
    """`--jobs 0` used to reach the library and end as an unexpected error (exit 1)."""
    with pytest.raises(SystemExit) as stop:
        main([*argv, option, value])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and len(err.strip().splitlines()) == 1
    assert f"argument {option}: expected a number >" in err and value in err
