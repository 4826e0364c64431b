"""An instant OpenAI-compatible server for ``bench_llm.py``, in a process of its own (so that its
work is not counted against the client's): it answers each step of ``build mcq`` with valid
JSON at once (no Nagle delay), prints its URL, and serves until its standard input closes.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.openai_server import ChatServer, _Handler, _Server  # noqa: E402
from wikiorigin.schemas import MCQ_TYPES  # noqa: E402


def answer(messages: list[dict]) -> str:
    """Answers by step (the first line of the system prompt) and article (the user text's first
    line): three questions an article (the second a near duplicate of the first), the checker
    right, footnote 1 cited, the first type and a region."""
    task = messages[0]["content"].splitlines()[0].removeprefix("task: ")
    title = messages[-1]["content"].splitlines()[0]
    if task == "generate":
        tag = hashlib.sha1(title.encode()).hexdigest()[:12]
        ask = {"choices": ["甲", "乙", "丙", "丁"], "answer": "乙"}
        return json.dumps(
            {
                "questions": [
                    {"question": f"{title}について、よく言われることはどれか。（{tag}）", **ask},
                    {"question": f"{title}について、よく言われることはどれか？（{tag}）", **ask},
                    {"question": f"{title}の二つ目の問い（{tag}）", **ask},
                ]
            },
            ensure_ascii=False,
        )
    if task == "check":
        lines = [line for line in messages[-1]["content"].splitlines() if re.match(r"^\d\. ", line)]
        return json.dumps({"answer_index": next((int(line[0]) for line in lines if line[3:] == "乙"), 1)})
    if task == "attribute":
        return json.dumps({"refs": [1]})
    return json.dumps({"type": MCQ_TYPES[0], "region": "関東"}, ensure_ascii=False)


def main() -> None:
    _Server.request_queue_size = 128  # 16 connections at once and more: none refused
    # Each answer sent at once (TCP_NODELAY, as asyncio servers such as vLLM's do): else its body
    # waits for the client's delayed acknowledgement of the headers, 40 ms an answer, and the
    # bench measures that wait instead of the client.
    _Handler.disable_nagle_algorithm = True
    with ChatServer(answer=answer) as server:
        server.calls = _Dropped()  # keeps no bodies: a long bench would hold them all
        print(server.url, flush=True)
        sys.stdin.read()


class _Dropped(list):
    def append(self, item) -> None:
        pass


if __name__ == "__main__":
    main()
