"""The HTTP side of :mod:`envs.core.remote`: an httpx client whose requests end by a deadline.

httpx's timeouts bound one network operation each (a connect, a read, a write), not a request: a
server that sends one byte every few seconds, in its headers or its body, never trips a read
timeout. httpcore, the engine under httpx, takes a pluggable network backend; ours caps the
timeout of every operation at the time left until the deadline of the request in progress, so
a request ends by its deadline whatever the server does. The reply body is read as a stream and
refused once it passes a size cap.

This module imports httpx; :mod:`envs.core.remote` imports it only when an endpoint agent first
calls out, so ``import envs`` (and the app's start) stays light.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import httpcore
import httpx

ERROR_DETAIL_BYTES = 4096
"""How much of an error reply (HTTP 4xx/5xx) is read: enough for its one-line detail."""


class Unreachable(Exception):
    """A connection error, a timeout or a reply broken off mid-way (worth another try)."""

    def __init__(self, reason: str, *, connected: bool) -> None:
        super().__init__(reason)
        self.connected = connected
        """Whether a connection was made (the server went quiet or broke off its reply)."""


class Late(Exception):
    """The deadline passed before the reply was complete."""


class TooLarge(Exception):
    """The reply body is larger than the cap."""


class Undecodable(Exception):
    """The reply's content encoding could not be decoded."""


class DeadlineClient:
    """``post`` over one kept-alive httpx client, each call bounded by its deadline and cap."""

    def __init__(self, timeout: float) -> None:
        self._backend = _DeadlineBackend()
        self._client = httpx.Client(transport=_Transport(self._backend), timeout=timeout)

    def post(self, url: str, body: bytes, headers: Mapping[str, str], *, deadline: float,
             max_bytes: int) -> tuple[int, bytes]:  # fmt: skip
        """POST ``body``; returns (status, reply body). ``deadline`` is a :func:`time.monotonic`
        time; error replies are cut to their first :data:`ERROR_DETAIL_BYTES`.

        Raises :class:`Late`, :class:`TooLarge`, :class:`Undecodable` or :class:`Unreachable`.
        """
        self._backend.deadline = deadline
        try:
            with self._client.stream("POST", url, content=body, headers=dict(headers)) as resp:
                ok = resp.status_code < 400
                length = resp.headers.get("content-length", "")
                if ok and length.isdigit() and int(length) > max_bytes:
                    raise TooLarge
                limit = max_bytes if ok else ERROR_DETAIL_BYTES
                chunks: list[bytes] = []
                size = 0
                for chunk in resp.iter_bytes():
                    if time.monotonic() > deadline:  # each read is bounded too (the backend)
                        raise Late
                    chunks.append(chunk)
                    size += len(chunk)
                    if size > limit:
                        if ok:
                            raise TooLarge
                        break  # the start of an error reply says enough
                return resp.status_code, b"".join(chunks)
        except httpx.DecodingError as e:
            raise Undecodable(str(e)) from None
        except httpx.TransportError as e:
            if time.monotonic() >= deadline:
                raise Late from None
            connected = not isinstance(e, httpx.ConnectError | httpx.ConnectTimeout)
            raise Unreachable(str(e) or type(e).__name__, connected=connected) from None
        finally:
            self._backend.deadline = None

    def close(self) -> None:
        self._client.close()


# -- the deadline, enforced on every network operation ---------------------------------------------
class _DeadlineBackend(httpcore.NetworkBackend):
    """httpcore's blocking backend with each timeout capped at the time left (per thread)."""

    def __init__(self) -> None:
        self._inner = httpcore.SyncBackend()
        self._local = threading.local()

    @property
    def deadline(self) -> float | None:
        return getattr(self._local, "deadline", None)

    @deadline.setter
    def deadline(self, value: float | None) -> None:
        self._local.deadline = value

    def cap(self, timeout: float | None, late: type[Exception]) -> float | None:
        """``timeout`` or the time left until the deadline, whichever is shorter."""
        deadline = self.deadline
        if deadline is None:
            return timeout
        left = deadline - time.monotonic()
        if left <= 0:
            raise late("the deadline has passed")
        return left if timeout is None else min(timeout, left)

    def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                    local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:  # fmt: skip
        timeout = self.cap(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self._inner.connect_tcp(host, port, timeout, local_address, socket_options), self)

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:  # fmt: skip
        timeout = self.cap(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self._inner.connect_unix_socket(path, timeout, socket_options), self)

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class _DeadlineStream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream, backend: _DeadlineBackend) -> None:
        self._inner = inner
        self._backend = backend

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, self._backend.cap(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, self._backend.cap(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:  # fmt: skip
        timeout = self._backend.cap(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self._inner.start_tls(ssl_context, server_hostname, timeout), self._backend)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


# -- httpx over an httpcore pool with that backend (public APIs of both) -------------------------
_ERRORS: tuple[tuple[type[Exception], type[httpx.TransportError]], ...] = (
    (httpcore.ConnectTimeout, httpx.ConnectTimeout),
    (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout),
    (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.ConnectError, httpx.ConnectError),
    (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError),
    (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError),
    (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
    (httpcore.TimeoutException, httpx.TimeoutException),
    (httpcore.NetworkError, httpx.NetworkError),
    (httpcore.ProtocolError, httpx.ProtocolError),
)
"""httpcore's errors as httpx's, most specific first (what ``httpx.HTTPTransport`` does)."""


@contextlib.contextmanager
def _as_httpx_errors() -> Iterator[None]:
    try:
        yield
    except Exception as e:
        for theirs, ours in _ERRORS:
            if isinstance(e, theirs):
                raise ours(str(e)) from e
        raise


class _Body(httpx.SyncByteStream):
    def __init__(self, inner: Iterable[bytes]) -> None:
        self._inner = inner

    def __iter__(self) -> Iterator[bytes]:
        with _as_httpx_errors():
            yield from self._inner

    def close(self) -> None:
        close = getattr(self._inner, "close", None)
        if close is not None:
            close()


class _Transport(httpx.BaseTransport):
    """httpx's transport over an httpcore connection pool that uses ``backend``."""

    def __init__(self, backend: httpcore.NetworkBackend) -> None:
        self._pool = httpcore.ConnectionPool(ssl_context=httpx.create_ssl_context(), network_backend=backend)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        req = httpcore.Request(
            method=request.method,
            url=httpcore.URL(scheme=url.raw_scheme, host=url.raw_host, port=url.port, target=url.raw_path),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        with _as_httpx_errors():
            resp = self._pool.handle_request(req)
        assert isinstance(resp.stream, Iterable)
        return httpx.Response(resp.status, headers=resp.headers, stream=_Body(resp.stream),
                              extensions=resp.extensions)  # fmt: skip

    def close(self) -> None:
        self._pool.close()
