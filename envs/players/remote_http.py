"""The HTTP side of :mod:`envs.players.remote`: an httpx client whose requests end by a deadline.

httpx's timeouts bound one network operation each (a connect, a read, a write), not a request: a
server that sends one byte every few seconds, in its headers or its body, never trips a read
timeout. httpcore, the engine under httpx, takes a pluggable network backend; ours caps the
timeout of every operation at the time left until the deadline of the request in progress, so
a request ends by its deadline whatever the server does. The reply body is read as a stream and
refused once it passes a size cap.

Proxies come from the environment as httpx and curl read them (``HTTP_PROXY``, ``HTTPS_PROXY``,
``ALL_PROXY``, ``NO_PROXY``, either case): the proxy's connection, its ``CONNECT`` tunnel for
``https`` and the TLS inside run over the same deadline backend, so the deadline holds end to end.
Certificates are checked against the default CAs (or ``SSL_CERT_FILE`` / ``SSL_CERT_DIR``) plus
the CA file or folder in ``$LMRL_ENDPOINT_CA`` (a self-signed local server).

This module imports httpx; :mod:`envs.players.remote` imports it only when an endpoint agent first
calls out, so ``import envs`` (and the app's start) stays light.
"""

from __future__ import annotations

import contextlib
import os
import ssl
import threading
import time
import urllib.request
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import httpcore
import httpx

ERROR_DETAIL_BYTES = 4096
"""How much of an error reply (HTTP 4xx/5xx) is read: enough for its one-line detail."""
CA_ENV = "LMRL_ENDPOINT_CA"
"""A CA certificate file (PEM) or folder trusted besides the default ones."""


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


class Untrusted(Exception):
    """The server's TLS certificate did not verify (not worth another try)."""


class BadSetting(Exception):
    """A CA file or proxy setting in the environment cannot be used."""


def ssl_context() -> ssl.SSLContext:
    """The default trust (``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` if set) plus ``$LMRL_ENDPOINT_CA``."""
    extra = os.environ.get(CA_ENV, "").strip()
    try:
        ctx = httpx.create_ssl_context()
    except (OSError, ssl.SSLError) as e:
        raise BadSetting(
            f"cannot load the CA certificates in $SSL_CERT_FILE / $SSL_CERT_DIR ({e})"
        ) from None
    if extra:
        try:
            if os.path.isdir(extra):
                ctx.load_verify_locations(capath=extra)
            else:
                ctx.load_verify_locations(cafile=extra)
        except (OSError, ssl.SSLError) as e:
            raise BadSetting(
                f"${CA_ENV}={extra} is not a CA certificate file or folder ({e})"
            ) from None
    return ctx


def proxy_for(scheme: str, host: str) -> str | None:
    """The proxy URL the environment names for a request to ``scheme://host`` (None: direct)."""
    proxies = urllib.request.getproxies_environment()
    # an undocumented stdlib function that typeshed leaves out (urllib.request has it at run time)
    if not proxies or urllib.request.proxy_bypass_environment(host, proxies):  # type: ignore[attr-defined]
        return None
    return proxies.get(scheme) or proxies.get("all") or None


def _untrusted(e: BaseException) -> ssl.SSLCertVerificationError | None:
    """The certificate failure somewhere in ``e``'s chain of causes."""
    seen: set[int] = set()
    cur: BaseException | None = e
    while cur is not None and id(cur) not in seen:
        if isinstance(cur, ssl.SSLCertVerificationError):
            return cur
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return None


class DeadlineClient:
    """``post`` over one kept-alive httpx client, each call bounded by its deadline and cap."""

    def __init__(self, timeout: float) -> None:
        self._backend = _DeadlineBackend()
        # trust_env=False: proxies are chosen per request by the transport (httpx would send
        # them past it, over a backend without the deadline).
        self._client = httpx.Client(
            transport=_Transport(self._backend, ssl_context()), timeout=timeout, trust_env=False
        )

    def post(
        self, url: str, body: bytes, headers: Mapping[str, str], *, deadline: float, max_bytes: int
    ) -> tuple[int, bytes]:
        """POST ``body``; returns (status, reply body). ``deadline`` is a :func:`time.monotonic`
        time; error replies are cut to their first :data:`ERROR_DETAIL_BYTES`.

        Raises :class:`Late`, :class:`TooLarge`, :class:`Undecodable`, :class:`Untrusted`,
        :class:`BadSetting` or :class:`Unreachable`.
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
            if (bad := _untrusted(e)) is not None:
                raise Untrusted(bad.verify_message or str(bad)) from None
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

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        timeout = self.cap(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(
            self._inner.connect_tcp(host, port, timeout, local_address, socket_options), self
        )

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.NetworkStream:
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

    def start_tls(
        self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.NetworkStream:
        timeout = self._backend.cap(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(
            self._inner.start_tls(ssl_context, server_hostname, timeout), self._backend
        )

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
    """httpx's transport over httpcore connection pools that use ``backend``: one direct, one
    per proxy the environment names (``CONNECT`` tunnels for https)."""

    def __init__(self, backend: httpcore.NetworkBackend, ctx: ssl.SSLContext) -> None:
        self._backend = backend
        self._ssl = ctx
        self._pools: dict[str | None, httpcore.ConnectionPool] = {}

    def _pool(self, url: httpx.URL) -> httpcore.ConnectionPool:
        proxy = proxy_for(url.scheme, url.host)
        pool = self._pools.get(proxy)
        if pool is not None:
            return pool
        if proxy is None:
            pool = httpcore.ConnectionPool(ssl_context=self._ssl, network_backend=self._backend)
        else:
            try:
                p = httpx.URL(proxy if "://" in proxy else f"http://{proxy}")
            except httpx.InvalidURL as e:
                raise BadSetting(f"the proxy {proxy!r} is not a URL ({e})") from None
            if p.scheme not in ("http", "https") or not p.host:
                raise BadSetting(
                    f"the proxy {proxy!r} is not an http(s) proxy (the only kind supported)"
                )
            auth = (p.username, p.password) if p.username else None
            pool = httpcore.HTTPProxy(
                proxy_url=httpcore.URL(
                    scheme=p.raw_scheme, host=p.raw_host, port=p.port, target=b"/"
                ),
                proxy_auth=auth,
                ssl_context=self._ssl,
                network_backend=self._backend,
            )
        self._pools[proxy] = pool
        return pool

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        req = httpcore.Request(
            method=request.method,
            url=httpcore.URL(
                scheme=url.raw_scheme, host=url.raw_host, port=url.port, target=url.raw_path
            ),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        pool = self._pool(url)
        with _as_httpx_errors():
            resp = pool.handle_request(req)
        assert isinstance(resp.stream, Iterable)
        return httpx.Response(
            resp.status, headers=resp.headers, stream=_Body(resp.stream), extensions=resp.extensions
        )

    def close(self) -> None:
        for pool in self._pools.values():
            pool.close()
        self._pools.clear()
