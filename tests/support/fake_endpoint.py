"""A fake OpenAI-compatible endpoint on 127.0.0.1 for the tests (agents, partners, the app).

``script`` holds the next answers, ``default`` the answer after them. An answer is a
``(status, body)`` pair or one of the faults below. Every loop a fault runs is bounded (by
``FAULT_STEPS`` and by :meth:`FakeServer.close`), so a test can never hang on it.
"""

from __future__ import annotations

import json
import select
import socket
import socketserver
import ssl
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

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

    def __init__(self, tls: tuple[Path, Path] | None = None) -> None:
        """``tls``: (certificate, key) PEM files; the server then speaks https."""
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
        self.httpd.handle_error = lambda request, address: None  # a client that broke off (TLS)
        scheme = "http"
        if tls is not None:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(*tls)
            # The handshake happens in the handler's thread, on the first read.
            self.httpd.socket = ctx.wrap_socket(
                self.httpd.socket, server_side=True, do_handshake_on_connect=False
            )
            scheme = "https"
        self.url = f"{scheme}://127.0.0.1:{self.httpd.server_address[1]}/v1"
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


def make_certificate(folder: Path, host: str = "127.0.0.1") -> tuple[Path, Path]:
    """A self-signed certificate for ``host`` (and localhost), made with the openssl CLI;
    returns (certificate, key) PEM files. The certificate is its own CA."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-days",
            "2",
            "-subj",
            f"/CN={host}",
            "-addext",
            f"subjectAltName=IP:{host},DNS:localhost",
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


STALL = "stall"
"""The proxy reads the request and then says nothing (until closed)."""


class FakeProxy:
    """A tiny HTTP proxy on 127.0.0.1: ``CONNECT host:port`` tunnels (https) and requests with an
    absolute URL (http), forwarded with ``Connection: close``. ``seen`` records each request line;
    ``fault`` = :data:`STALL` makes it go quiet after reading one."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self.fault: str | None = None
        self._closing = threading.Event()
        proxy = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                try:
                    proxy._handle(self)
                except OSError:  # either side went away
                    pass

        socketserver.ThreadingTCPServer.allow_reuse_address = True
        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def _handle(self, h: socketserver.StreamRequestHandler) -> None:
        line = h.rfile.readline(65537).decode("latin-1").strip()
        headers = []
        while (hl := h.rfile.readline(65537)) not in (b"\r\n", b"\n", b""):
            headers.append(hl.decode("latin-1").rstrip("\r\n"))
        self.seen.append(line)
        method, target, _ = line.split(" ", 2)
        if self.fault == STALL:
            self._closing.wait(30)
            return
        if method == "CONNECT":
            host, port = target.rsplit(":", 1)
            with socket.create_connection((host, int(port)), timeout=10) as up:
                h.wfile.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
                h.wfile.flush()
                self._relay(h.connection, up)
            return
        url = urlsplit(target)
        n = next(
            (int(x.split(":", 1)[1]) for x in headers if x.lower().startswith("content-length:")), 0
        )
        body = h.rfile.read(n)
        keep = [x for x in headers if not x.lower().startswith(("proxy-", "connection:"))]
        head = "\r\n".join(
            [f"{method} {url.path or '/'} HTTP/1.1", *keep, "Connection: close", "", ""]
        )
        with socket.create_connection((url.hostname, url.port or 80), timeout=10) as up:
            up.sendall(head.encode("latin-1") + body)
            while data := up.recv(65536):
                h.wfile.write(data)

    def _relay(self, a: socket.socket, b: socket.socket) -> None:
        """Copy bytes both ways until either side closes (or the proxy does)."""
        while not self._closing.is_set():
            ready, _, _ = select.select([a, b], [], [], 0.05)
            for src in ready:
                data = src.recv(65536)
                if not data:
                    return
                (b if src is a else a).sendall(data)

    def close(self) -> None:
        self._closing.set()
        self.server.shutdown()
        self.server.server_close()
