"""Endpoints over https (a self-signed certificate made in the test) and through an HTTP proxy
(``HTTP_PROXY``, ``HTTPS_PROXY`` with CONNECT, ``NO_PROXY``): the client works, the deadline holds
end to end through the proxy, and an untrusted certificate or a bad setting is one line."""

from __future__ import annotations

import functools
import time

import pytest
from support.fake_endpoint import STALL, FakeProxy, FakeServer

from envs.core import Text
from envs.players import agents
from envs.players.remote import ChatEndpointAgent, EndpointError
from lmrl_tui.cli import main

PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "REQUEST_METHOD")
HISTORY = [Text("You see a wall.\n", False)]


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No proxy or CA setting of the machine's leaks in; each test sets its own."""
    for var in PROXY_VARS:
        monkeypatch.delenv(var, raising=False)
        monkeypatch.delenv(var.lower(), raising=False)
    for var in ("SSL_CERT_FILE", "SSL_CERT_DIR", "LMRL_ENDPOINT_CA"):
        monkeypatch.delenv(var, raising=False)


def _agent(url: str, **kw) -> ChatEndpointAgent:
    return ChatEndpointAgent(url, "tiny", api_key_env=None, sleep=lambda s: None, **kw)


def _act(url: str, **kw) -> str:
    agent = _agent(url, **kw)
    try:
        return agent.act(HISTORY)
    finally:
        agent.close()


def test_https_with_the_ca_named_in_lmrl_endpoint_ca(
    https_server: FakeServer, certificate, monkeypatch
) -> None:
    monkeypatch.setenv("LMRL_ENDPOINT_CA", str(certificate[0]))
    assert https_server.url.startswith("https://")
    assert _act(https_server.url) == "hello there\n"
    assert len(https_server.requests) == 1


def test_https_with_the_ca_in_ssl_cert_file(
    https_server: FakeServer, certificate, monkeypatch
) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(certificate[0]))
    assert _act(https_server.url) == "hello there\n"


def test_an_untrusted_certificate_is_one_clear_line_and_not_retried(
    https_server: FakeServer,
) -> None:
    with pytest.raises(EndpointError) as e:
        _act(https_server.url, retries=3)
    msg = str(e.value)
    assert "\n" not in msg and "not trusted" in msg and "LMRL_ENDPOINT_CA" in msg
    assert "certificate" in msg and https_server.requests == []


def test_an_untrusted_certificate_in_the_cli_is_one_line_exit_2(
    https_server: FakeServer, tmp_path, capsys, monkeypatch
) -> None:
    monkeypatch.setitem(
        agents._LOADERS, "http", functools.partial(ChatEndpointAgent, sleep=lambda s: None)
    )
    rc = main(
        [
            "--db",
            str(tmp_path / "e.db"),
            "generate",
            "twenty-questions",
            "--episodes",
            "1",
            "--partner",
            f"http:tiny@{https_server.url}",
            "--quiet",
        ]
    )
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "not trusted" in err and "Traceback" not in err


@pytest.mark.parametrize("setting", ["LMRL_ENDPOINT_CA", "SSL_CERT_FILE"])
def test_a_missing_ca_file_is_one_line(
    setting: str, https_server: FakeServer, tmp_path, monkeypatch
) -> None:
    monkeypatch.setenv(setting, str(tmp_path / "nowhere.pem"))
    with pytest.raises(EndpointError) as e:
        _act(https_server.url)
    assert "\n" not in str(e.value) and setting in str(e.value)


def test_http_through_http_proxy(server: FakeServer, proxy: FakeProxy, monkeypatch) -> None:
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    assert _act(server.url) == "hello there\n"
    assert proxy.seen == [f"POST {server.url}/chat/completions HTTP/1.1"]
    assert len(server.requests) == 1


def test_https_through_https_proxy_with_connect(
    https_server: FakeServer, certificate, proxy: FakeProxy, monkeypatch
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", proxy.url)
    monkeypatch.setenv("LMRL_ENDPOINT_CA", str(certificate[0]))
    agent = _agent(https_server.url)
    try:
        assert [agent.act(HISTORY) for _ in range(3)] == ["hello there\n"] * 3
    finally:
        agent.close()
    host = https_server.url.split("/")[2]
    assert proxy.seen[0] == f"CONNECT {host} HTTP/1.1"  # one tunnel, kept alive for the three
    assert len(https_server.requests) == 3


def test_no_proxy_goes_direct(server: FakeServer, proxy: FakeProxy, monkeypatch) -> None:
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    assert _act(server.url) == "hello there\n"
    assert proxy.seen == []


@pytest.mark.parametrize("scheme", ["http", "https"])
def test_the_deadline_holds_through_a_silent_proxy(
    scheme: str,
    server: FakeServer,
    https_server: FakeServer,
    proxy: FakeProxy,
    certificate,
    monkeypatch,
) -> None:
    """The proxy reads the request (or the CONNECT) and goes quiet: the call still ends by the
    deadline, its tries included, although one read may wait 30 s."""
    monkeypatch.setenv(f"{scheme.upper()}_PROXY", proxy.url)
    monkeypatch.setenv("LMRL_ENDPOINT_CA", str(certificate[0]))
    proxy.fault = STALL
    url = server.url if scheme == "http" else https_server.url
    started = time.monotonic()
    with pytest.raises(EndpointError) as e:
        _act(url, deadline=1.0, timeout=30.0, retries=2)
    took = time.monotonic() - started
    assert "did not answer within 1 s" in str(e.value) and "\n" not in str(e.value)
    assert took < 3.0 and len(proxy.seen) >= 1


def test_the_deadline_holds_through_a_proxy_to_a_trickling_server(
    https_server: FakeServer, proxy: FakeProxy, certificate, monkeypatch
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", proxy.url)
    monkeypatch.setenv("LMRL_ENDPOINT_CA", str(certificate[0]))
    https_server.default = "trickle-headers"
    started = time.monotonic()
    with pytest.raises(EndpointError, match="did not answer within 1 s"):
        _act(https_server.url, deadline=1.0, timeout=30.0)
    assert time.monotonic() - started < 3.0


@pytest.mark.parametrize("bad", ["socks5://127.0.0.1:1080", "ftp://127.0.0.1:21"])
def test_an_unsupported_proxy_is_one_line(bad: str, server: FakeServer, monkeypatch) -> None:
    monkeypatch.setenv("HTTP_PROXY", bad)
    with pytest.raises(EndpointError) as e:
        _act(server.url)
    assert "\n" not in str(e.value) and "proxy" in str(e.value) and server.requests == []
