"""A stand-in for the Hugging Face hub on loopback: it answers the few requests that
``huggingface_hub`` makes to create a dataset repository and commit files to it (small files,
sent in the commit itself), and keeps what it was sent: ``created`` (the repositories) and
``commits`` (per commit: the repository and ``{path: bytes}``), ``validated`` (the YAML of
each card it was asked to check)."""

from __future__ import annotations

import base64
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import yaml


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def _send(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _body(self) -> bytes:
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def do_GET(self):  # noqa: N802
        self.server.hub.log.append(("GET", self.path))
        self._send(404, {"error": "not found"})

    def do_POST(self):  # noqa: N802
        hub, body = self.server.hub, self._body()
        hub.log.append(("POST", self.path))
        if self.headers.get("Authorization") != f"Bearer {hub.token}":
            return self._send(401, {"error": "Invalid credentials in Authorization header"})
        if self.path == "/api/validate-yaml":  # the card's front matter, before any file is sent
            content = json.loads(body)["content"]
            front = yaml.safe_load(content.split("---\n")[1]) if content.startswith("---\n") else None
            hub.validated.append(front)
            errors = [] if isinstance(front, dict) else [{"message": "no YAML metadata"}]
            return self._send(400 if errors else 200, {"errors": errors, "warnings": []})
        if self.path == "/api/repos/create":
            asked = json.loads(body)
            repo = f"{asked.get('organization') or 'user'}/{asked['name']}"
            hub.created.append((repo, asked.get("type"), asked.get("private")))
            return self._send(200, {"url": f"{hub.url}/datasets/{repo}", "name": repo})
        parts = self.path.split("?")[0].split("/")  # /api/datasets/NS/NAME/(preupload|commit)/REV
        if len(parts) == 7 and parts[:3] == ["", "api", "datasets"] and parts[5] == "preupload":
            files = json.loads(body)["files"]
            return self._send(
                200, {"files": [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False} for f in files]}
            )
        if len(parts) == 7 and parts[:3] == ["", "api", "datasets"] and parts[5] == "commit":
            sent = {}
            for line in body.decode().splitlines():
                item = json.loads(line)
                if item["key"] == "file":
                    sent[item["value"]["path"]] = base64.b64decode(item["value"]["content"])
            hub.commits.append((f"{parts[3]}/{parts[4]}", sent))
            return self._send(
                200,
                {"commitUrl": f"{hub.url}/datasets/{parts[3]}/{parts[4]}/commit/{'a' * 40}", "commitOid": "a" * 40},
            )
        self._send(404, {"error": f"no such endpoint: {self.path}"})


class FakeHub:
    """``with FakeHub(token) as hub:`` serves on ``hub.url`` until the block ends."""

    def __init__(self, token: str = "hf_test"):
        self.token = token
        self.created: list[tuple] = []
        self.commits: list[tuple[str, dict[str, bytes]]] = []
        self.validated: list = []  # the front matter of each README.md checked
        self.log: list[tuple[str, str]] = []

    def __enter__(self) -> FakeHub:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.hub = self
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
