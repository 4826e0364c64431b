"""A Wikimedia-style dump mirror on loopback, for the download tests.

Serves a directory with HTML directory listings and HTTP Range, and can misbehave on chosen
paths: ``drop`` (close the connection half-way through the first response), ``html`` (answer
with an HTML page), ``500-once`` (fail the first request), ``429:N`` (answer 429 Too Many
Requests with ``Retry-After: N`` to the first request).
"""

from __future__ import annotations

import threading
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


class MirrorHandler(BaseHTTPRequestHandler):
    def __init__(self, *args, root: Path, faults: dict, log: list, **kw):
        self.root, self.faults, self.log = root, faults, log
        super().__init__(*args, **kw)

    def log_message(self, *args):  # keep test output clean
        pass

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        self.log.append((path, self.headers.get("User-Agent"), self.headers.get("Range")))
        fault = self.faults.get(path)
        if fault == "500-once":
            del self.faults[path]
            return self.send_error(500)
        if fault and fault.startswith("429:"):
            del self.faults[path]
            self.send_response(429)
            self.send_header("Retry-After", fault[4:])
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if fault == "html":
            return self._send(b"<!DOCTYPE html><html><body>Mirror maintenance</body></html>", "text/html")
        target = (self.root / path.lstrip("/")).resolve()
        if not str(target).startswith(str(self.root.resolve())) or not target.exists():
            return self.send_error(404)
        if target.is_dir():
            links = "".join(
                f'<a href="{p.name}{"/" if p.is_dir() else ""}">{p.name}</a>\n' for p in sorted(target.iterdir())
            )
            return self._send(f"<html><body>{links}</body></html>".encode(), "text/html")
        data = target.read_bytes()
        start = 0
        if self.headers.get("Range", "").startswith("bytes="):
            start = int(self.headers["Range"][6:].split("-")[0])
        if fault == "drop":
            del self.faults[path]
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            self.connection.close()
            return
        body = data[start:]
        self.send_response(206 if start else 200)
        if start:
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _send(self, body: bytes, content_type: str):
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class Mirror:
    """``with Mirror(root) as m:`` serves ``root`` at ``m.url`` on 127.0.0.1."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.faults: dict[str, str] = {}
        self.log: list[tuple] = []

    def __enter__(self) -> Mirror:
        handler = partial(MirrorHandler, root=self.root, faults=self.faults, log=self.log)
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
