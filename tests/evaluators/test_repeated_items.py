"""A question given twice in the file an eval scores (the same id and content) would count
twice in every figure, and `eval compare` could not pair it: refused, one line naming the file
and both rows, exit 2, before any request. (A responses file joined to the questions keeps its
own rule: a repeated response is used once and said.)"""

import pyarrow as pa
import pyarrow.parquet as pq

from tests.evaluators.test_freeform_eval import _answer as _freeform_answer, _parquet as _freeform_parquet
from tests.evaluators.test_mcq_eval import _answering, _mcq_parquet
from tests.openai_server import ChatServer
from wikiorigin import cli


def _twice(path, change=lambda row: row):
    rows = pq.read_table(path).to_pylist()
    pq.write_table(pa.Table.from_pylist(rows + [change(dict(rows[0]))]), path)
    return len(rows)


def _error(capsys) -> str:
    err = capsys.readouterr().err
    assert err.count("wikiorigin: error:") == 1 and "Traceback" not in err, err
    return err


def test_recorded_responses_to_one_question_twice_are_refused(tmp_path, capsys):
    path = _mcq_parquet(tmp_path / "q.parquet", 6)
    rows = pq.read_table(path).to_pylist()
    answered = [{**r, "response": r["choices"][r["answer_index"]]} for r in rows]
    wrong = {**answered[0], "response": answered[0]["choices"][(answered[0]["answer_index"] + 1) % 4]}
    pq.write_table(pa.Table.from_pylist([*answered, wrong]), tmp_path / "r.parquet")
    argv = ["eval", "mcq", "--responses", str(tmp_path / "r.parquet"), "--out", str(tmp_path / "run")]
    assert cli.main(argv) == 2
    assert f"{tmp_path / 'r.parquet'}: row 6 repeats row 0 (the same id and question)" in _error(capsys)
    assert not (tmp_path / "run").exists()


def test_a_question_twice_is_refused_before_any_request(tmp_path, capsys):
    path = _mcq_parquet(tmp_path / "q.parquet", 6)
    n = _twice(path)
    with ChatServer(_answering) as server:
        argv = ["eval", "mcq", "--questions", str(path), "--model", "m", "--endpoint", server.url]
        assert cli.main([*argv, "--cache", str(tmp_path / "c.sqlite"), "--out", str(tmp_path / "run")]) == 2
    assert server.calls == [] and f"row {n} repeats row 0" in _error(capsys)


def test_a_free_form_question_twice_is_refused(tmp_path, capsys):
    path = _freeform_parquet(tmp_path / "ff.parquet")
    n = _twice(path)
    with ChatServer(_freeform_answer) as server:
        argv = ["eval", "freeform", "--questions", str(path), "--model", "m", "--endpoint", server.url]
        assert cli.main([*argv, "--cache", str(tmp_path / "c.sqlite"), "--out", str(tmp_path / "run")]) == 2
    assert server.calls == [] and f"row {n} repeats row 0" in _error(capsys)
