"""An OpenAI-compatible chat-completions server on loopback, for the LLM tests and benchmarks.

``answer(messages) -> str`` scripts the replies (or ``{"reasoning_content": ..., "content":
...}``: the trace apart from the answer, as vLLM's reasoning parsers and DeepSeek's API return
it; the fault ``"length"`` then cuts the two together in half, and a cut inside the trace
leaves content null). ``faults`` is a list consumed one per call:
``"429"`` (with ``Retry-After``), ``"500"``, ``"slow"`` (waits ``slow_seconds``), ``"truncated"``
(a body cut short), ``"nonjson"`` (a 200 that is not JSON), ``"401"``, ``"404"``, ``"empty"``
(content ``""``), ``"null"`` (content null), ``"html"`` (a 200 HTML page), ``"nochoices"`` (a JSON
body without ``choices``), ``"length"`` (the answer cut off by the output limit),
``"refusal"`` (the message's ``refusal`` set, content null), ``"content_filter"`` (the answer
stopped by the content filter). ``delay`` is added to every call. ``answer`` may also return
``{"refusal": TEXT}`` or ``{"content": ..., "finish_reason": "content_filter"}``: the model
declines that request every time. Every completion reports its usage, a declined or cut one too.

``reasoning=True`` behaves as OpenAI's reasoning models do: a ``temperature`` or ``top_p`` other
than 1 is a 400 ``unsupported_value``, ``max_tokens`` a 400 ``unsupported_parameter`` (they want
``max_completion_tokens``), and the usage reports ``reasoning_tokens`` (``reasoning_tokens`` per
answer, counted in ``completion_tokens``). ``json_schema=False`` refuses a ``response_format``
(400), as servers without structured outputs do.

The endpoint check's requests (``GET /v1/models``, ``GET /v1/models/MODEL``) go to ``probes``,
not ``calls``. ``models`` (None: any model) lists the models served: another model is a 404.
``list_models=False`` answers 404 to both GETs, as servers that list no models.
``api_key`` (None: any) is the only key accepted: another gets 401 on every request.
"""

from __future__ import annotations

import inspect
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _refused(self) -> bool:
        key = self.server.owner.api_key
        if key is None or self.headers.get("Authorization") == f"Bearer {key}":
            return False
        self._send(
            401,
            {
                "error": {
                    "message": "Incorrect API key provided",
                    "type": "invalid_request_error",
                    "code": "invalid_api_key",
                }
            },
        )
        return True

    def _unknown(self, model) -> None:
        self._send(
            404, {"error": {"message": f"The model `{model}` does not exist.", "type": "NotFoundError", "code": 404}}
        )

    def do_GET(self):
        server = self.server.owner
        with server.lock:
            server.probes.append(self.path)
        if self._refused():
            return
        if not server.list_models or not self.path.startswith("/v1/models"):
            return self._send(404, {"error": {"message": "Not Found"}})
        model = self.path.removeprefix("/v1/models").strip("/")
        if not model:
            return self._send(
                200,
                {
                    "object": "list",
                    "data": [
                        {"id": m, "object": "model", "created": 0, "owned_by": "test"} for m in server.models or ["any"]
                    ],
                },
            )
        if server.models is not None and model not in server.models:
            return self._unknown(model)
        self._send(200, {"id": model, "object": "model", "created": 0, "owned_by": "test"})

    def do_POST(self):
        server = self.server.owner
        length = int(self.headers.get("Content-Length", 0))
        data = self.rfile.read(length)
        if len(data) < length:  # the client hung up mid-request (a run that stopped)
            self.close_connection = True
            return
        body = json.loads(data)
        with server.lock:
            server.calls.append(body)
            fault = server.faults.pop(0) if server.faults else None
        if self._refused():
            return
        if server.models is not None and body["model"] not in server.models or fault == "404":
            return self._unknown(body["model"])
        if server.delay:
            time.sleep(server.delay)
        if fault == "401":
            return self._send(401, {"error": {"message": "Incorrect API key provided"}})
        if fault == "429":
            return self._send(
                429, {"error": {"message": "slow down", "type": "rate_limit"}}, {"Retry-After": str(server.retry_after)}
            )
        if fault == "500":
            return self._send(500, {"error": {"message": "internal", "type": "server_error"}})
        if fault == "slow":
            time.sleep(server.slow_seconds)
        if fault == "nonjson":
            return self._raw(200, b"<html>not json</html>", "application/json")
        if fault == "html":
            return self._raw(200, b"<!DOCTYPE html><html><body>Bad gateway</body></html>", "text/html")
        if fault == "nochoices":
            return self._send(200, {"object": "error", "message": "overloaded"})
        refused = self._refused_parameter(body)
        if refused:
            return self._send(
                400,
                {
                    "error": {
                        "message": refused[2],
                        "type": "invalid_request_error",
                        "param": refused[0],
                        "code": refused[1],
                    }
                },
            )
        takes_model = len(inspect.signature(server.answer).parameters) > 1  # answer(messages, model)
        content = server.answer(body["messages"], body["model"]) if takes_model else server.answer(body["messages"])
        said = content if isinstance(content, dict) else {}
        thought, refusal = said.get("reasoning_content"), said.get("refusal")
        content = said.get("content") if said else content
        finish = said.get("finish_reason", "stop")
        if fault == "refusal":
            content, refusal = None, "I'm sorry, but I can't help with that."
        elif fault == "content_filter":
            content, finish = None, "content_filter"
        elif fault in ("empty", "null"):
            content = "" if fault == "empty" else None
        elif fault == "length" and thought is not None:  # cut at half of the trace and the answer together
            half = (len(thought) + len(content or "")) // 2
            thought, content = thought[:half], (content or "")[: max(0, half - len(thought))] or None
            finish = "length"
        elif fault == "length":
            content, finish = (content or "")[: len(content or "") // 2], "length"
        reasoning = server.reasoning_tokens if server.reasoning else 0
        payload = {
            "id": f"chatcmpl-{len(server.calls)}",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "finish_reason": finish,
                    "message": {
                        "role": "assistant",
                        "content": content,
                        **({"reasoning_content": thought} if thought is not None else {}),
                        **({"refusal": refusal} if refusal is not None else {}),
                    },
                }
            ],
            "usage": {
                "prompt_tokens": sum(len(m["content"]) for m in body["messages"]) // 4,
                "completion_tokens": len(content or refusal or "") // 4 + reasoning,
                "total_tokens": 0,
            },
        }
        if server.reasoning:
            payload["usage"]["completion_tokens_details"] = {"reasoning_tokens": reasoning}
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

    def _refused_parameter(self, body) -> tuple[str, str, str] | None:
        """(param, code, message) of a parameter this server refuses, or None."""
        server = self.server.owner
        if server.reasoning:
            for name in ("temperature", "top_p"):
                if name in body and body[name] != 1:
                    return (
                        name,
                        "unsupported_value",
                        f"Unsupported value: '{name}' does not support "
                        f"{body[name]} with this model. Only the default (1) value is supported.",
                    )
            if "max_tokens" in body:
                return (
                    "max_tokens",
                    "unsupported_parameter",
                    "Unsupported parameter: 'max_tokens' is not "
                    "supported with this model. Use 'max_completion_tokens' instead.",
                )
        if server.refuse_seed and "seed" in body:
            return ("seed", "unsupported_parameter", "Unsupported parameter: 'seed' is not supported.")
        if not server.json_schema and "response_format" in body:
            return ("response_format", "unsupported_parameter", "response_format is not supported by this server")
        return None

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


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        """A client that hangs up (a timeout, a run that stopped) is no error of the server."""
        if not isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            super().handle_error(request, client_address)


class ChatServer:
    def __init__(
        self,
        answer=None,
        delay: float = 0.0,
        *,
        models=None,
        list_models: bool = True,
        api_key: str | None = None,
        reasoning: bool = False,
        json_schema: bool = True,
    ):
        self.answer = answer or (lambda messages: json.dumps({"echo": messages[-1]["content"]}))
        self.delay, self.faults, self.calls, self.probes = delay, [], [], []
        self.models, self.list_models, self.api_key = models, list_models, api_key
        self.reasoning, self.json_schema, self.reasoning_tokens = reasoning, json_schema, 64
        self.refuse_seed = False  # a 400 for any seed
        self.retry_after, self.slow_seconds = 0.05, 2.0
        self.lock = threading.Lock()

    def __enter__(self):
        self.server = _Server(("127.0.0.1", 0), _Handler)
        self.server.owner = self
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
