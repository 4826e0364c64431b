"""Progress of long work: a line every N seconds when stderr is not a terminal."""

import io

from wikiorigin.progress import Progress


def test_lines_when_not_a_terminal():
    stream = io.StringIO()
    with Progress("eval", total=3, unit="question", every=0, stream=stream) as bar:
        for _ in range(3):
            bar.update()
    lines = stream.getvalue().splitlines()
    assert len(lines) == 3 and lines[-1].startswith("eval: 3/3 questions (")


def test_quiet_between_intervals():
    stream = io.StringIO()
    with Progress("scan", unit="page", every=3600, stream=stream) as bar:
        bar.update(10)
    assert stream.getvalue() == ""


def test_a_local_model_reports_its_progress(tiny_model, capsys, monkeypatch):
    monkeypatch.setenv("WIKIORIGIN_PROGRESS_SECONDS", "0")
    tiny_model.loglikelihood([("a b", " c"), ("d", " e")])
    assert "tiny: log-likelihoods: 2/2 items" in capsys.readouterr().err


def test_a_build_reports_requests_failures_and_cost(tmp_path, capsys, monkeypatch):
    from tests.openai_server import ChatServer
    from wikiorigin.llm import ChatRequest, LLMClient, OpenAIBackend, RequestCache

    monkeypatch.setenv("WIKIORIGIN_PROGRESS_SECONDS", "0")
    with ChatServer(lambda messages: "ok") as server:
        client = LLMClient(
            OpenAIBackend("m", base_url=server.url),
            RequestCache(tmp_path / "c.sqlite"),
            prices={"input": 1.0, "output": 1.0},
        )
        client.run([ChatRequest([{"role": "user", "content": f"q{i}"}], {}, "v") for i in range(3)])
    err = capsys.readouterr().err
    assert "m: requests: 3/3 requests (" in err and "0 failed, $0.00 so far)" in err


def test_tasks_report_each_result_as_it_comes():
    from wikiorigin.parallel import run_tasks

    seen = []
    assert run_tasks(pow, [(2, 3), (3, 2)], jobs=2, done=seen.append) == [8, 9]
    assert sorted(seen) == [8, 9]


def test_a_scan_reports_its_pages(data_dir, tmp_path, capsys, monkeypatch):
    from wikiorigin.dumps.scan import scan_to_parquet

    monkeypatch.setenv("WIKIORIGIN_PROGRESS_SECONDS", "0")
    scan_to_parquet([data_dir / "elwikivoyage-stub-meta-history-sample.xml.gz"], "elwikivoyage", tmp_path / "p.parquet")
    assert "scan elwikivoyage: " in capsys.readouterr().err
