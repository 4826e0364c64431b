"""Ctrl-C during long work: one line saying what is kept and how to resume, exit 130, and no
half-written output left behind."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest


@pytest.mark.slow
def test_ctrl_c_during_an_evaluation(tiny_model_dir, tmp_path):
    questions = tmp_path / "q.json"
    rows = [
        {"question": f"問{i}：どれか。", "choices": ["甲", "乙", "丙", "丁"], "answer": "甲", "language": "ja"}
        for i in range(4000)
    ]
    questions.write_text(json.dumps(rows, ensure_ascii=False))
    out = tmp_path / "run"
    env = {**os.environ, "WIKIORIGIN_PROGRESS_SECONDS": "0"}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "wikiorigin.cli",
            "eval",
            "mcq",
            "--questions",
            str(questions),
            "--model",
            str(tiny_model_dir),
            "--device",
            "cpu",
            "--max-new-tokens",
            "64",
            "--batch-size",
            "4",
            "--out",
            str(out),
        ],
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    deadline = time.monotonic() + 120
    seen = ""
    while "generation:" not in seen and time.monotonic() < deadline:  # wait until it is working
        seen += proc.stderr.readline()
    proc.send_signal(signal.SIGINT)
    rest = proc.communicate(timeout=60)[1]
    assert "generation:" in seen, seen[-500:]
    assert proc.returncode == 130
    assert "wikiorigin: interrupted; finished work is kept" in rest and "Traceback" not in rest
    assert not out.exists() or not any(out.iterdir())
