"""The LLM client against an instant loopback server, on the requests `build mcq` sends.

The requests are the builder's own: ``MCQBuilder`` run once on the bundled jawiki articles
(every step: generate, check, attribute, label; their JSON schemas included), recorded. They
are then sent, interleaved, round after round:

- by a plain ``openai.AsyncOpenAI`` loop (``asyncio.gather``, a semaphore of 16) with the
  bodies our client sends (``response_format`` included): the anchor;
- by :class:`~wikiorigin.llm.LLMClient` at concurrency 16 with a new request cache: answers
  validated against their schemas, stored, claimed (goal: at most 1.3x the anchor's time);
- by ``MCQBuilder.run`` itself (its four steps one after the other, a new cache);
- from that cache again (a re-run): the time a request beyond the start-up, i.e. the run of
  all requests less a run of one, per request (goal: at most 0.2 ms), beside a bare SQLite
  look-up and ``json.loads``.

The server runs in a process of its own (``llm_server.py``) and sends each answer at once
(``TCP_NODELAY``, as vLLM's does: with Nagle's delay every answer waited 40 ms for the client's
acknowledgement, and the bench measured that wait, not the client). Each build makes its HTTP
client's TLS settings as a new process does (the plain loop makes its own every round).
Medians over the rounds. ``--quick``: 40 articles and 3 rounds.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from common import PY, QUICK, cached, write_results  # noqa: E402
from wikiorigin.builders.mcq import MCQBuilder  # noqa: E402
from wikiorigin.llm import ChatRequest, LLMClient, OpenAIBackend, RequestCache  # noqa: E402
from wikiorigin.llm.client import strict_schema  # noqa: E402
from wikiorigin.llm.openai_backend import _certificates, _no_certificates  # noqa: E402

ROUNDS = 3 if QUICK else 5
ARTICLES = 40 if QUICK else None  # None: every article of the sample
CONCURRENCY = 16
DUMP = Path(__file__).resolve().parent.parent / "tests/data/dumps"
DUMP = DUMP / "jawiki-20230501-pages-articles-multistream_first100k-lines.xml.xz"


def _articles(path: Path) -> None:
    """The sample's articles (namespace 0, no redirects) in the articles schema."""
    from wikiorigin.corpora.articles import article_row
    from wikiorigin.dumps.pages import iter_pages
    from wikiorigin.schemas import ARTICLES

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pages = [p for p in iter_pages(DUMP, namespaces=[0]) if p.text and not p.text.lstrip().startswith("#")]
        rows = [row for p in pages if (row := article_row(p, "jawiki", "ja.wikipedia.org", {})[0])]
    pq.write_table(pa.Table.from_pylist(rows, schema=ARTICLES), path)


def articles_file() -> Path:
    every = cached("llm-articles.parquet", _articles)
    if ARTICLES is None:
        return every
    return cached(
        f"llm-articles-{ARTICLES}.parquet", lambda p: pq.write_table(pq.read_table(every).slice(0, ARTICLES), p)
    )


class _Recording(LLMClient):
    """An LLM client that keeps every request it is asked."""

    asked: list[ChatRequest]

    def run(self, requests):
        self.asked.extend(requests)
        return super().run(requests)


def builder_requests(url: str, articles: Path) -> list[ChatRequest]:
    """What ``build mcq`` asks for ``articles``, every step."""
    llm = _Recording(OpenAIBackend("bench", base_url=url), None, concurrency=CONCURRENCY)
    llm.asked = []
    MCQBuilder().run(articles, llm)
    return llm.asked


def body(request: ChatRequest) -> dict:
    """The request as our client sends it to a server with structured outputs."""
    extra = {}
    if request.schema is not None:
        schema = {"name": "answer", "schema": strict_schema(request.schema), "strict": True}
        extra = {"response_format": {"type": "json_schema", "json_schema": schema}}
    return {"messages": request.messages, **request.params, **extra}


async def _plain(url: str, bodies: list[dict]) -> list[str]:
    import openai

    client = openai.AsyncOpenAI(base_url=url, api_key="not-needed", max_retries=0)
    gate = asyncio.Semaphore(CONCURRENCY)

    async def one(kwargs):
        async with gate:
            response = await client.chat.completions.create(model="bench", **kwargs)
            return response.choices[0].message.content

    try:
        return await asyncio.gather(*(one(b) for b in bodies))
    finally:
        await client.close()


def plain(url: str, bodies: list[dict]) -> float:
    started = time.perf_counter()
    answers = asyncio.run(_plain(url, bodies))
    assert all(answers)
    return time.perf_counter() - started


def ours(url: str, requests: list[ChatRequest], cache: Path) -> float:
    started = time.perf_counter()
    store = RequestCache(cache)
    llm = LLMClient(OpenAIBackend("bench", base_url=url), store, concurrency=CONCURRENCY)
    results = llm.run(requests)
    store.close()
    took = time.perf_counter() - started
    assert not [r.error for r in results if r.error] and llm.usage.calls == len({llm.key(r) for r in requests})
    return took


def build(url: str, articles: Path, cache: Path) -> float:
    """Seconds ``MCQBuilder`` takes for ``articles``, every step, with a new cache (in process),
    its TLS settings made again as in a new process (the plain loop makes its own each round)."""
    _certificates.cache_clear()
    _no_certificates.cache_clear()
    started = time.perf_counter()
    store = RequestCache(cache)
    result = MCQBuilder().run(articles, LLMClient(OpenAIBackend("bench", base_url=url), store, concurrency=CONCURRENCY))
    store.close()
    assert result.report.kept
    return time.perf_counter() - started


def cached_run(url: str, requests: list[ChatRequest], cache: Path) -> float:
    """Seconds a re-run of ``requests`` from ``cache`` takes, the client made and the file open."""
    store = RequestCache(cache)
    llm = LLMClient(OpenAIBackend("bench", base_url=url), store, concurrency=CONCURRENCY)
    started = time.perf_counter()
    results = llm.run(requests)
    took = time.perf_counter() - started
    store.close()
    assert llm.usage.calls == 0 and all(r.cached and not r.error for r in results)
    return took


def bare_lookup(cache: Path) -> float:
    """Microseconds of a bare SQLite look-up of a key and ``json.loads`` of its answer."""
    db = sqlite3.connect(cache)
    keys = [k for (k,) in db.execute("SELECT key FROM answers")]
    started = time.perf_counter()
    for key in keys:
        json.loads(db.execute("SELECT answer FROM answers WHERE key = ?", (key,)).fetchone()[0])
    db.close()
    return (time.perf_counter() - started) / len(keys) * 1e6


def main() -> None:
    articles = articles_file()
    server = subprocess.Popen(
        [PY, str(Path(__file__).with_name("llm_server.py"))], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        url = server.stdout.readline().strip()
        requests = builder_requests(url, articles)
        bodies = [body(r) for r in requests]
        n = len(requests)
        times: dict[str, list[float]] = {"plain": [], "ours": [], "build": [], "hit": []}
        with tempfile.TemporaryDirectory() as d:
            for i in range(ROUNDS):
                times["plain"].append(plain(url, bodies))
                cache = Path(d) / f"cache{i}.sqlite"
                times["ours"].append(ours(url, requests, cache))
                times["build"].append(build(url, articles, Path(d) / f"build{i}.sqlite"))
                whole, one = cached_run(url, requests, cache), cached_run(url, requests[:1], cache)
                times["hit"].append((whole - one) / (n - 1) * 1e3)
            lookup = bare_lookup(cache)
    finally:
        server.stdin.close()
        server.wait(30)
    report(n, times, lookup)


def report(n: int, times: dict[str, list[float]], lookup: float) -> None:
    plain_s, ours_s = statistics.median(times["plain"]), statistics.median(times["ours"])
    ratios = [o / p for o, p in zip(times["ours"], times["plain"])]
    ratio, hit = statistics.median(ratios), statistics.median(times["hit"])
    builds = [b / p for b, p in zip(times["build"], times["plain"])]
    print(
        f"bench_llm: {n} requests of build mcq (schemas included) at concurrency {CONCURRENCY}, instant loopback "
        f"server, {ROUNDS} rounds: plain AsyncOpenAI {plain_s:.2f} s ({n / plain_s:,.0f}/s), "
        f"LLMClient {ours_s:.2f} s ({n / ours_s:,.0f}/s)"
    )
    print(f"{'LLMClient / plain AsyncOpenAI time':<44} {ratio:7.2f} (goal <= 1.3; rounds {_spread(ratios)})")
    print(
        f"{'MCQBuilder.run (every step) / plain AsyncOpenAI':<44} {statistics.median(builds):7.2f} (rounds {_spread(builds)})"
    )
    print(f"{'cached re-run, ms a request':<44} {hit:7.3f} (goal <= 0.2; bare look-up {lookup / 1e3:.3f} ms)")
    write_results(
        "bench_llm",
        [
            {
                "benchmark": f"LLM client, `build mcq`'s {n} requests (schemas included) at concurrency "
                f"{CONCURRENCY}, instant loopback server: `LLMClient` with a new cache / a plain "
                "`openai.AsyncOpenAI` loop with `asyncio.gather`, the same bodies (`bench_llm.py`)",
                "figure": f"**{ratio:.2f}×** ({n / ours_s:,.0f} vs {n / plain_s:,.0f} requests/s; "
                f"rounds {_spread(ratios)})",
                "anchor": "≤ 1.3: " + ("met" if ratio <= 1.3 else "**not met**"),
            },
            {
                "benchmark": "the same: the whole build (`MCQBuilder.run`, its four steps one after the other, "
                "in process) / the plain loop",
                "figure": f"**{statistics.median(builds):.2f}×** (rounds {_spread(builds)})",
                "anchor": "≤ 1.3: " + ("met" if statistics.median(builds) <= 1.3 else "**not met**"),
            },
            {
                "benchmark": "LLM client, a cached re-run of the same requests: time a request beyond start-up, "
                "against a bare SQLite look-up and `json.loads`",
                "figure": f"**{hit:.3f} ms** (bare look-up {lookup / 1e3:.3f} ms)",
                "anchor": "≤ 0.2 ms: " + ("met" if hit <= 0.2 else "**not met**"),
            },
        ],
    )


def _spread(values: list[float]) -> str:
    return f"{min(values):.2f}-{max(values):.2f}"


if __name__ == "__main__":
    sys.exit(main())
