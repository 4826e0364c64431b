"""Command lines the tests type again and again, written once."""

from __future__ import annotations


def build_mcq(articles, out, url, *extra, cache=None, model: str = "gen") -> list[str]:
    """`wikiorigin build mcq` of ``articles`` into ``out`` by ``model`` at the server ``url``,
    cached in ``cache`` (default: ``c.sqlite`` beside ``out``), then the ``extra`` options."""
    return [
        "build",
        "mcq",
        "--articles",
        str(articles),
        "--out",
        str(out),
        "--model",
        model,
        "--base-url",
        url,
        "--cache",
        str(cache or out.with_name("c.sqlite")),
        *extra,
    ]


def yokai_articles(path, titles):
    """An articles file (the ``ARTICLES`` schema) at ``path``: one short Japanese article with
    one footnote for each of ``titles``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from wikiorigin.schemas import ARTICLES

    rows = [
        {
            "wiki": "jawiki",
            "page_id": i,
            "title": t,
            "text": f"{t}は日本の妖怪である[1]。",
            "revision_id": 5,
            "references": [{"number": 1, "text": "柳田国男『妖怪談義』"}],
            "url": f"https://ja.wikipedia.org/wiki/{t}",
        }
        for i, t in enumerate(titles)
    ]
    pq.write_table(pa.Table.from_pylist(rows, schema=ARTICLES), path)
    return path


def incomplete_mcq_set(tmp_path):
    """An MCQ set of three articles built with its first request failing and accepted as it is
    (``--allow-failures``): its provenance says ``complete: false``, 1 failed request."""
    from tests.builders.test_mcq import scripted
    from tests.openai_server import ChatServer
    from wikiorigin import cli

    articles = yokai_articles(tmp_path / "articles.parquet", ["河童", "天狗", "座敷童子"])
    built = tmp_path / "set" / "mcq.parquet"
    with ChatServer(answer=scripted) as server:
        server.faults = ["500"]
        argv = build_mcq(articles, built, server.url, "--retries", "0", "--concurrency", "1", "--allow-failures")
        assert cli.main(argv) == 0
    return built
