"""What a new user found, in options: a temperature out of range and an
empty range of editions are one line and exit 2 before any work."""

import pyarrow.parquet as pq
import pytest

from tests.test_inputs_new_user import _error, _origins
from wikiorigin.cli import main

_COMMANDS = {
    "eval": ["eval", "mcq", "--questions", "q.json", "--model", "m", "--out", "r"],
    "build": ["build", "mcq", "--articles", "a.parquet", "--model", "m", "--out", "m.parquet"],
}


@pytest.mark.parametrize("command", list(_COMMANDS))
@pytest.mark.parametrize("value", ["-1", "2.5", "3", "nan", "warm"])
def test_a_temperature_out_of_range_is_refused(value, command, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exc:
        main([*_COMMANDS[command], "--temperature", value])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "argument --temperature" in err
    assert f"got {value!r}" in err and ("from 0 to 2" in err or "expected a number" in err)


def test_max_new_tokens_must_be_positive(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(
            [
                "eval",
                "mcq",
                "--questions",
                "q.json",
                "--model",
                "m",
                "--out",
                str(tmp_path / "r"),
                "--max-new-tokens",
                "0",
            ]
        )
    assert "argument --max-new-tokens: expected a number > 0, got '0'" in capsys.readouterr().err


def test_an_empty_range_of_editions_is_an_error(tmp_path, capsys):
    origins = _origins(tmp_path / "origins.parquet")
    out = tmp_path / "items.parquet"
    assert (
        main(["subset", str(origins), "--wiki", "ja", "--out", str(out), "--min-editions", "5", "--max-editions", "2"])
        == 2
    )
    assert "--min-editions 5 is more than --max-editions 2: no item can have both" in _error(capsys)
    assert not out.exists()
    assert (
        main(["subset", str(origins), "--wiki", "ja", "--out", str(out), "--min-editions", "2", "--max-editions", "2"])
        == 0
    )
    assert pq.read_table(out).column("qid").to_pylist() == ["Q2"]


@pytest.mark.parametrize(
    "prices",
    [
        '{"input": -1, "output": 1}',
        '{"input": NaN, "output": 1}',
        '{"input": 1, "output": Infinity}',
        '{"input": true, "output": 1}',
    ],
)
def test_prices_are_numbers_of_dollars_not_below_zero(prices, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exc:
        main([*_COMMANDS["build"], "--prices", prices])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "argument --prices" in err and "numbers >= 0" in err
