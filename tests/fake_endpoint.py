"""A fake OpenAI-compatible endpoint on 127.0.0.1 for the tests (agents, partners, the app).

``script`` holds the next answers, ``default`` the answer after them. An answer is a
``(status, body)`` pair or one of the faults below. Every loop a fault runs is bounded (by
``FAULT_STEPS`` and by :meth:`FakeServer.close`), so a test can never hang on it.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CUT = "cut"
"""A 200 whose body stops half-way (the server closes the connection)."""
DROP = "drop"
"""The connection is closed without an answer."""
TRICKLE_BODY = "trickle-body"
"""Headers at once, then the body one byte every ``trickle_every`` seconds."""
TRICKLE_HEADERS = "trickle-headers"
"""The status line, then the headers one byte every ``trickle_every`` seconds."""
FAULT_STEPS = 200
"""The most bytes a trickle sends (then it stops and closes)."""

OK_BODY = {"choices": [{"message": {"content": "hello there\nmore"}}]}


class FakeServer:
    """Answers /v1/chat/completions from a script of answers; records requests.

    ``die_at_seed``: the first request carrying that seed takes the server down (connections
    are refused from then on), like an endpoint that dies part-way through a run.
    """

    def __init__(self) -> None:
        self.script: list[tuple[int, Any] | str] = []
        self.default: tuple[int, Any] | str = (200, OK_BODY)
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.trickle_every = 0.05
        self.die_at_seed: int | None = None
        self.send_length = True
        """False: no Content-Length; the body ends when the connection closes."""
        self._closing = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                n = int(self.headers.get("Content-Length", 0))
                req = json.loads(self.rfile.read(n))
                server.requests.append(req)
                server.headers.append(dict(self.headers))
                if server.die_at_seed is not None and req.get("seed") == server.die_at_seed:
                    server.die()
                    return  # the connection closes without an answer
                answer = server.script.pop(0) if server.script else server.default
                if isinstance(answer, str):
                    server._fault(self, answer)
                    return
                status, body = answer
                if self.path != "/v1/chat/completions":
                    status, body = 404, {"error": "no such path"}
                raw = body if isinstance(body, bytes) else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                if server.send_length:
                    self.send_header("Content-Length", str(len(raw)))
                else:
                    self.close_connection = True
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def _fault(self, h: BaseHTTPRequestHandler, fault: str) -> None:
        raw = json.dumps(OK_BODY).encode()
        h.close_connection = True
        try:
            if fault == CUT:
                h.send_response(200)
                h.send_header("Content-Length", str(len(raw)))
                h.end_headers()
                h.wfile.write(raw[: len(raw) // 2])
            elif fault == TRICKLE_BODY:
                h.send_response(200)
                h.send_header("Content-Length", str(FAULT_STEPS))
                h.end_headers()
                self._trickle(h, b" " * FAULT_STEPS)
            elif fault == TRICKLE_HEADERS:
                h.wfile.write(b"HTTP/1.1 200 OK\r\n")
                self._trickle(h, b"X-Slow: " + b"a" * FAULT_STEPS)
            elif fault != DROP:
                raise ValueError(f"unknown fault {fault!r}")
        except OSError:  # the client went away
            pass

    def _trickle(self, h: BaseHTTPRequestHandler, data: bytes) -> None:
        for i in range(min(len(data), FAULT_STEPS)):
            if self._closing.wait(self.trickle_every):
                return
            h.wfile.write(data[i : i + 1])
            h.wfile.flush()

    def die(self) -> None:
        """Stop serving and close the listening socket: new connections are refused."""
        self.httpd.shutdown()
        self.httpd.server_close()

    def close(self) -> None:
        self._closing.set()
        self.die()
