"""An OpenAI-compatible chat-completions server on loopback, for the LLM tests and benchmarks.

``answer(messages) -> str`` scripts the replies. ``faults`` is a list consumed one per call:
``"429"`` (with ``Retry-After``), ``"500"``, ``"slow"`` (waits ``slow_seconds``), ``"truncated"``
(a body cut short), ``"nonjson"`` (a 200 that is not JSON). ``delay`` is added to every call.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        server = self.server.owner
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        with server.lock:
            server.calls.append(body)
            fault = server.faults.pop(0) if server.faults else None
        if server.delay:
            time.sleep(server.delay)
        if fault == "429":
            return self._send(429, {"error": {"message": "slow down", "type": "rate_limit"}},
                              {"Retry-After": str(server.retry_after)})
        if fault == "500":
            return self._send(500, {"error": {"message": "internal", "type": "server_error"}})
        if fault == "slow":
            time.sleep(server.slow_seconds)
        if fault == "nonjson":
            return self._raw(200, b"<html>not json</html>", "application/json")
        takes_model = server.answer.__code__.co_argcount > 1  # answer(messages, model)
        content = server.answer(body["messages"], body["model"]) if takes_model else server.answer(body["messages"])
        payload = {
            "id": f"chatcmpl-{len(server.calls)}", "object": "chat.completion", "created": 0,
            "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": sum(len(m["content"]) for m in body["messages"]) // 4,
                      "completion_tokens": len(content) // 4,
                      "total_tokens": 0},
        }
        if fault == "truncated":
            data = json.dumps(payload).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        self._send(200, payload)

    def _send(self, status, payload, headers=None):
        self._raw(status, json.dumps(payload).encode(), "application/json", headers)

    def _raw(self, status, data, content_type, headers=None):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)


class ChatServer:
    def __init__(self, answer=None, delay: float = 0.0):
        self.answer = answer or (lambda messages: json.dumps({"echo": messages[-1]["content"]}))
        self.delay, self.faults, self.calls = delay, [], []
        self.retry_after, self.slow_seconds = 0.05, 2.0
        self.lock = threading.Lock()

    def __enter__(self):
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.server.daemon_threads = True
        self.server.owner = self
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
