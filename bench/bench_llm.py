"""LLM client throughput against a loopback OpenAI-compatible server that adds 200 ms a call:
500 questions at concurrency 16 against concurrency 1 (anchor >= 10x, same run), and a
re-run of the 500 from the cache (anchor: 0 calls, < 5% of the first run's time).
Concurrency 1 is timed on 50 questions (its throughput does not depend on the count).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.openai_server import ChatServer  # noqa: E402
from wikiorigin.llm import ChatRequest, LLMClient, OpenAIBackend, RequestCache  # noqa: E402


def questions(n, tag):
    return [ChatRequest([{"role": "user", "content": f"{tag} question {i}"}], {"temperature": 0.1}) for i in range(n)]


def timed_run(server, cache, n, concurrency, tag):
    llm = LLMClient(OpenAIBackend("bench", base_url=server.url), cache, concurrency=concurrency)
    started = time.perf_counter()
    results = llm.run(questions(n, tag))
    assert all(not r.error for r in results)
    return time.perf_counter() - started, llm.usage


def main() -> None:
    with tempfile.TemporaryDirectory() as d, ChatServer(delay=0.2) as server:
        cache = RequestCache(Path(d) / "cache.sqlite")
        one_s, _ = timed_run(server, cache, 50, 1, "serial")
        many_s, usage = timed_run(server, cache, 500, 16, "parallel")
        rerun_s, again = timed_run(server, cache, 500, 16, "parallel")
    one_rate, many_rate = 50 / one_s, 500 / many_s
    print(
        f"bench_llm: 200 ms a call; concurrency 1 {one_rate:,.1f} q/s, concurrency 16 "
        f"{many_rate:,.1f} q/s ({usage.calls} calls); re-run {again.calls} calls, "
        f"{again.cache_hits} cache hits in {rerun_s:.2f} s"
    )
    print(f"{'concurrency 16 / concurrency 1 throughput':<44} {many_rate / one_rate:7.1f} (anchor >= 10)")
    print(f"{'cached re-run time / first run time':<44} {rerun_s / many_s:7.3f} (anchor < 0.05, 0 calls)")


if __name__ == "__main__":
    sys.exit(main())
