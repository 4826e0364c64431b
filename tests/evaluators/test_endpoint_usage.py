"""Log-likelihoods through `--endpoint`: usage that is no token count (text, negative, NaN,
missing) never makes an unexpected error or a negative or NaN cost; it counts 0 and is said.
The completions server of tests/completions_server.py, its 200 answers changed on the wire."""

import copy

import pytest

from tests.completions_server import CompletionsServer, _Handler
from tests.evaluators.test_endpoint_loglikelihood import _questions, _served
from wikiorigin import cli


class _OddHandler(_Handler):
    def _send(self, status, payload, *args, **kwargs):
        change = getattr(self.server.owner, "change", None)
        if status == 200 and change is not None and isinstance(payload, dict) and "choices" in payload:
            payload = copy.deepcopy(payload)
            change(payload)
        super()._send(status, payload, *args, **kwargs)


class Odd(CompletionsServer):
    """A :class:`CompletionsServer` whose every 200 answer ``change(payload)`` alters."""

    change = None
    handler = _OddHandler


@pytest.mark.parametrize(
    "usage, unread",
    [
        ({"prompt_tokens": "12", "completion_tokens": 1}, False),  # digits: read as the SDK reads them
        ({"prompt_tokens": -500, "completion_tokens": 1}, True),
        ({"prompt_tokens": float("nan"), "completion_tokens": 1}, True),
        (None, True),
    ],
    ids=["digits", "negative", "nan", "missing"],
)
def test_usage_that_is_no_count_is_counted_as_none_and_said(tmp_path, tiny_model_dir, capsys, usage, unread):
    questions = str(_questions(tmp_path / "mcq.parquet", 4))
    with Odd(tiny_model_dir) as server:
        server.change = lambda payload: payload.update(usage=usage) if usage else payload.pop("usage", None)
        argv = ["eval", *_served(questions, server.url, tmp_path, "--out", str(tmp_path / "run"))]
        assert cli.main([*argv, "--prices", '{"input": 1000, "output": 1000}']) == 0
    line = next(x for x in capsys.readouterr().err.splitlines() if x.startswith("served:"))
    assert "nan" not in line and "$-" not in line and " -" not in line
    assert ("calls reported no readable usage" in line) is unread
