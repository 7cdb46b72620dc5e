"""``lmrl serve`` without a browser: the argument rules (loopback, --allow-remote, tokens), the
token middleware and the websocket's origin check on the real aiohttp application (nothing is
spawned: every request here is answered before an app process would start)."""

from __future__ import annotations

import argparse
import asyncio
import shlex
from dataclasses import asdict

import pytest

from lmrl_tui.cli import build_parser, main
from lmrl_tui.cli.serve import (
    MIN_TOKEN_CHARS,
    TOKEN_ENV,
    ServeArgumentError,
    is_loopback,
    serve_settings,
)

pytest.importorskip(
    "textual_serve", reason="textual-serve is not installed (pip install 'lmrl-tui[serve]')"
)
from aiohttp.test_utils import TestClient, TestServer  # noqa: E402

from lmrl_tui.serve import LmrlServer, ServeSettings, cookie_name, served_command, tokens_match  # noqa: E402

TOKEN = "a-good-token-0123456789"


def parse(*argv: str) -> argparse.Namespace:
    return build_parser().parse_args(["serve", *argv])


def test_loopback_needs_no_token_and_other_hosts_need_allow_remote() -> None:
    s = serve_settings(parse(), environ={})
    assert (s.host, s.port, s.token) == ("127.0.0.1", 8000, None)
    for host in ("localhost", "127.0.0.2", "::1"):
        assert is_loopback(host) and serve_settings(parse("--host", host), environ={}).token is None
    for host in ("0.0.0.0", "192.168.1.5", "::", "example.org"):
        assert not is_loopback(host)
        with pytest.raises(ServeArgumentError, match="--allow-remote"):
            serve_settings(parse("--host", host), environ={})


def test_remote_always_gets_a_token_generated_or_given() -> None:
    made = serve_settings(parse("--host", "0.0.0.0", "--allow-remote"), environ={})
    again = serve_settings(parse("--host", "0.0.0.0", "--allow-remote"), environ={})
    assert made.token_generated and len(made.token) >= 30 and made.token != again.token
    given = serve_settings(
        parse("--host", "0.0.0.0", "--allow-remote", "--token", TOKEN), environ={}
    )
    assert (given.token, given.token_generated) == (TOKEN, False)
    from_env = serve_settings(
        parse("--host", "0.0.0.0", "--allow-remote"), environ={TOKEN_ENV: TOKEN}
    )
    assert (from_env.token, from_env.token_generated) == (TOKEN, False)
    public = serve_settings(parse("--public-token"), environ={TOKEN_ENV: TOKEN})
    assert public.token_generated and public.token != TOKEN
    with pytest.raises(ServeArgumentError, match=f"at least {MIN_TOKEN_CHARS}"):
        serve_settings(parse("--token", "short"), environ={})
    with pytest.raises(ServeArgumentError, match="at least"):
        serve_settings(parse("--token", "has spaces in the middle of it"), environ={})


def test_bad_serve_arguments_are_one_line_and_exit_1(capsys) -> None:
    assert main(["serve", "--host", "0.0.0.0"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--allow-remote" in err and "Traceback" not in err
    assert main(["serve", "--token", "tiny"]) == 1
    assert "at least" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["serve", "--token", TOKEN, "--public-token"])
    assert e.value.code == 2
    with pytest.raises(SystemExit):
        main(["serve", "--port", "70000"])
    assert "between 1 and 65535" in capsys.readouterr().err


def test_served_command_runs_the_app_on_the_store_asking_the_player(tmp_path) -> None:
    words = shlex.split(served_command(tmp_path / "my store.db", [TOKEN_ENV], python="py"))
    assert words[:3] == ["env", "-u", TOKEN_ENV]  # the app never sees the token
    assert "LMRL_ASK_PLAYER=1" in words
    assert words[-4:] == ["-m", "lmrl_tui", "--db", str((tmp_path / "my store.db").resolve())]
    # never a package of the folder the server runs in (python -m puts it first on the path)
    assert "PYTHONSAFEPATH=1" in words and any(w.startswith("PYTHONPATH=") for w in words)
    assert not any(w.startswith("LMRL_CAMPAIGN=") for w in words)
    served = shlex.split(served_command(tmp_path / "s.db", campaign="week 1", python="py"))
    assert "LMRL_CAMPAIGN=week 1" in served  # each browser's app is handed the campaign's episodes


def test_tokens_compare_exactly() -> None:
    assert tokens_match(TOKEN, TOKEN)
    assert not tokens_match(TOKEN[:-1], TOKEN) and not tokens_match(None, TOKEN)
    assert not tokens_match(TOKEN + "x", TOKEN) and not tokens_match("ä" * 23, TOKEN)


async def _client(tmp_path, token: str | None, server: LmrlServer | None = None) -> TestClient:
    chosen = serve_settings(
        parse("--port", "8123", *(["--token", token] if token else [])), environ={}
    )
    server = server or LmrlServer(ServeSettings(**asdict(chosen)), tmp_path / "served.db")
    client = TestClient(TestServer(await server._make_app()))
    await client.start_server()
    return client


async def test_every_route_asks_for_the_token(tmp_path) -> None:
    client = await _client(tmp_path, TOKEN)
    try:
        for path in ("/", "/ws", "/static/js/textual.js", "/download/x"):
            assert (await client.get(path, allow_redirects=False)).status == 401, path
            wrong = await client.get(path, params={"token": TOKEN[:-1]}, allow_redirects=False)
            assert wrong.status == 403, path
        first = await client.get(
            "/", params={"token": TOKEN, "fontsize": "20"}, allow_redirects=False
        )
        assert first.status == 303 and first.headers["Location"] == "/?fontsize=20"
        cookie = first.cookies[cookie_name(8123)]
        assert cookie.value == TOKEN and cookie["httponly"] and cookie["samesite"] == "Strict"
        page = await client.get("/", cookies={cookie_name(8123): TOKEN})
        text = await page.text()
        assert page.status == 200 and f"ws://{client.host}:{client.port}/ws" in text
        proxied = await client.get(
            "/",
            cookies={cookie_name(8123): TOKEN},
            headers={"X-Forwarded-Proto": "https", "Host": "lab.example"},
        )
        assert "wss://lab.example/ws" in await proxied.text()
        assert (
            await client.get("/static/js/textual.js", cookies={cookie_name(8123): TOKEN})
        ).status == 200
        bad_cookie = await client.get("/", cookies={cookie_name(8123): "x" * 23})
        assert bad_cookie.status == 403
    finally:
        await client.close()


async def test_a_page_from_another_site_cannot_open_the_websocket(tmp_path) -> None:
    client = await _client(tmp_path, None)
    try:
        assert (await client.get("/")).status == 200  # loopback without a token: open
        ws = await client.get(
            "/ws",
            headers={
                "Origin": "http://evil.example",
                "Upgrade": "websocket",
                "Connection": "Upgrade",
            },
        )
        assert ws.status == 403
    finally:
        await client.close()


def test_a_port_in_use_is_one_line_and_exit_1(tmp_path) -> None:
    import socket
    import subprocess
    import sys

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        r = subprocess.run(
            [
                sys.executable,
                "-m",
                "lmrl_tui",
                "--db",
                str(tmp_path / "s.db"),
                "serve",
                "--port",
                str(port),
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert r.returncode == 1 and r.stdout == ""  # no link printed for a server that is not there
    assert (
        r.stderr.startswith(f"lmrl: error: cannot listen on 127.0.0.1:{port}")
        and r.stderr.count("\n") == 1
    )


async def test_browsers_beyond_max_sessions_are_refused(tmp_path) -> None:
    server = LmrlServer(
        ServeSettings("127.0.0.1", 8123, None, max_sessions=1), tmp_path / "served.db"
    )
    client = await _client(tmp_path, None, server)
    try:
        busy = (
            asyncio.get_running_loop().create_future()
        )  # stands for one browser's running session
        server.sessions.add(busy)
        ws = await client.get("/ws", headers={"Upgrade": "websocket", "Connection": "Upgrade"})
        assert ws.status == 503 and "places are taken" in await ws.text()
        busy.cancel()
    finally:
        await client.close()
