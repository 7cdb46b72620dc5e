"""A fake OpenAI-compatible endpoint on 127.0.0.1 for the tests (agents, partners, the app)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeServer:
    """Answers /v1/chat/completions from a script of (status, body) pairs; records requests."""

    def __init__(self) -> None:
        self.script: list[tuple[int, Any]] = []
        self.default: tuple[int, Any] = (200, {"choices": [{"message": {"content": "hello there\nmore"}}]})
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                n = int(self.headers.get("Content-Length", 0))
                server.requests.append(json.loads(self.rfile.read(n)))
                server.headers.append(dict(self.headers))
                status, body = server.script.pop(0) if server.script else server.default
                if self.path != "/v1/chat/completions":
                    status, body = 404, {"error": "no such path"}
                raw = body if isinstance(body, bytes) else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
