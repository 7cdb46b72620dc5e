"""The app in web browsers, on textual-serve: every browser that opens the page gets its own
``lmrl`` app process (textual-serve's AppService runs :func:`served_command` per websocket), and
all of them log into the one store (SQLite in WAL mode with a busy timeout takes the writers).

Access: with a token (:mod:`lmrl_tui.cli.serve` says when one is required) every route —
the page, the websocket, the static files, downloads — asks for it. The first visit brings it as
``?token=...``; the page answers with an HttpOnly, SameSite=Strict cookie and a redirect to the
same address without the token (so it leaves the address bar and the history), and later requests
(the websocket included) bring the cookie. Tokens are compared in constant time. Without the
token: 401 with a short page; with a wrong one: 403. The websocket is also refused when the page
that opens it comes from another site (its Origin header), so a web page elsewhere cannot drive
an app through the operator's own browser.
"""

from __future__ import annotations

import asyncio
import hmac
import os
import shlex
import signal
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp_jinja2
from aiohttp import web
from textual_serve.server import Server, to_int

ASK_PLAYER_ENV = "LMRL_ASK_PLAYER"
TOKEN_PARAM = "token"
TITLE = "lmrl-tui"

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>{title}</title></head>
<body style="font-family: sans-serif; margin: 3em"><h1>{title}</h1><p>{text}</p></body></html>"""


@dataclass(frozen=True)
class ServeSettings:
    host: str
    port: int
    token: str | None
    """None: no token asked (loopback only); otherwise every route asks for it."""
    token_generated: bool = False
    """The token was made here (print it once, with the link); False: the operator gave it."""
    max_sessions: int = 16
    hidden_env: tuple[str, ...] = ()
    """Environment variables the app processes must not see (the token's)."""
    play: tuple[str, ...] = ()
    """``lmrl play`` arguments: every browser session opens straight into that episode."""
    campaign: str | None = None
    """The campaign (kept in the store) whose episodes each person is handed."""


def served_command(
    db_path: str | os.PathLike[str],
    hidden_env: Sequence[str] = (),
    python: str = sys.executable,
    play: Sequence[str] = (),
    campaign: str | None = None,
) -> str:
    """The shell command textual-serve runs per browser: the app on ``db_path``, asking for the
    player's name, without the variables ``hidden_env`` (the access token stays out of the app);
    ``play``: ``lmrl play`` arguments, to open every session straight into that episode."""
    db = shlex.quote(str(Path(db_path).resolve()))
    unset = "".join(f"-u {shlex.quote(name)} " for name in hidden_env)
    args = "".join(f"{shlex.quote(a)} " for a in play)
    from envs.players.process_agent import safe_path_vars

    safe = "".join(
        f"{k}={shlex.quote(v)} " for k, v in safe_path_vars().items()
    )  # never the folder's own packages
    if campaign is not None:
        from lmrl_tui.campaigning import CAMPAIGN_ENV

        safe += f"{CAMPAIGN_ENV}={shlex.quote(campaign)} "
    return f"env {unset}{safe}{ASK_PLAYER_ENV}=1 {shlex.quote(python)} -m lmrl_tui {args}--db {db}"


def cookie_name(port: int) -> str:
    """One cookie per port: browsers share cookies between the ports of a host."""
    return f"lmrl_serve_token_{port}"


def tokens_match(given: str | None, expected: str) -> bool:
    """Constant-time comparison (as bytes: compare_digest wants ASCII for str)."""
    if given is None:
        return False
    return hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))


def _page(status: int, text: str) -> web.Response:
    return web.Response(
        status=status, text=PAGE.format(title=TITLE, text=text), content_type="text/html"
    )


def token_middleware(
    token: str, port: int
) -> Callable[[web.Request, Handler], Awaitable[web.StreamResponse]]:
    """aiohttp middleware: every request must bring ``token`` (query on the first visit, then
    the cookie this sets)."""
    name = cookie_name(port)

    @web.middleware
    async def check_token(request: web.Request, handler: Handler) -> web.StreamResponse:
        given = request.query.get(TOKEN_PARAM)
        if given is not None:
            if not tokens_match(given, token):
                return _page(
                    403,
                    "That access token is not right: ask the person who runs this server for the link.",
                )
            if request.method == "GET" and request.path == "/" and not _is_websocket(request):
                # Keep the token out of the address bar and the history: a cookie from now on.
                query = {k: v for k, v in request.query.items() if k != TOKEN_PARAM}
                answer = web.HTTPSeeOther(request.rel_url.with_query(query))
                answer.set_cookie(name, token, httponly=True, samesite="Strict", path="/")
                raise answer
            return await handler(request)
        if name not in request.cookies:
            return _page(
                401,
                "This server needs an access token: open the link (with ?token=...) "
                "that the person who runs it gave you.",
            )
        if not tokens_match(request.cookies.get(name), token):
            return _page(
                403,
                "That access token is not right: ask the person who runs this server for the link.",
            )
        return await handler(request)

    return check_token


def _is_websocket(request: web.Request) -> bool:
    return request.headers.get("Upgrade", "").lower() == "websocket"


def same_origin(request: web.Request) -> bool:
    """Whether the page opening this websocket came from this server (a browser always sends
    Origin on a websocket; clients without one, like scripts, pass)."""
    origin = request.headers.get("Origin")
    if origin is None:
        return True
    return urlsplit(origin).netloc.lower() == request.host.lower()


class LmrlServer(Server):
    """textual-serve's Server with the token check, a session cap, and addresses taken from the
    request (so the page works whatever name or address the browser used)."""

    def __init__(self, settings: ServeSettings, db_path: str | os.PathLike[str]) -> None:
        super().__init__(
            served_command(
                db_path, settings.hidden_env, play=settings.play, campaign=settings.campaign
            ),
            host=settings.host,
            port=settings.port,
            title=TITLE,
        )
        self.settings = settings
        self.sessions: set[asyncio.Task[Any]] = set()
        """The websocket handlers running now (one per browser, each with its app process)."""

    async def _make_app(self) -> web.Application:
        app = await super()._make_app()
        if self.settings.token is not None:
            app.middlewares.append(token_middleware(self.settings.token, self.settings.port))
        return app

    def link(self) -> str:
        """The line that tells the operator where to point browsers (the token only when made here)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        url = f"http://{host}:{self.port}/"
        if self.settings.token is None:
            return f"lmrl serve: open {url} (this machine only; Ctrl+C stops)"
        if self.settings.token_generated:
            return f"lmrl serve: share {url}?{TOKEN_PARAM}={self.settings.token} (the access token is shown only now; Ctrl+C stops)"  # noqa: E501
        return f"lmrl serve: open {url}?{TOKEN_PARAM}=<your token> (Ctrl+C stops)"

    async def on_startup(self, app: web.Application) -> None:
        pass  # textual-serve prints its logo and the command here; the link is printed once listening

    def serve(self, debug: bool = False) -> None:
        """Serve until Ctrl+C or SIGTERM: the link is printed once the port is bound (an OSError
        if it cannot be), the apps are told to quit on the way out, and there is no access log
        (it would write each first visit's ``?token=...``)."""
        self.debug = debug
        self.initialize_logging()
        asyncio.run(self._serve())

    async def _serve(self) -> None:
        runner = web.AppRunner(await self._make_app(), handle_signals=False, access_log=None)
        await runner.setup()
        try:
            await web.TCPSite(runner, self.host, self.port).start()
            print(self.link(), flush=True)
            stop = asyncio.Event()
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(sig, stop.set)
            await stop.wait()
        finally:
            await runner.cleanup()

    @aiohttp_jinja2.template("app_index.html")
    async def handle_index(self, request: web.Request) -> dict[str, Any]:
        # Behind an HTTPS proxy the page is https: its websocket must be wss (only this
        # browser's own page is affected by what the header says).
        https = request.secure or request.headers.get("X-Forwarded-Proto", "").lower() == "https"
        ws_scheme = "wss" if https else "ws"
        return {
            "font_size": to_int(request.query.get("fontsize", "16"), 16),
            "app_websocket_url": f"{ws_scheme}://{request.host}/ws",
            "config": {"static": {"url": "/static/"}},
            "application": {"name": self.title},
        }

    async def handle_websocket(self, request: web.Request) -> web.StreamResponse:
        if not same_origin(request):
            return _page(403, "A page from another site may not open this app.")
        if len(self.sessions) >= self.settings.max_sessions:
            return _page(
                503, f"All {self.settings.max_sessions} places are taken: try again later."
            )
        task = asyncio.current_task()
        assert task is not None
        self.sessions.add(task)
        try:
            return await super().handle_websocket(request)
        finally:
            self.sessions.discard(task)

    async def on_shutdown(self, app: web.Application) -> None:
        # A connected browser would keep its handler (and the server) waiting for a minute:
        # cancelled, textual-serve's handler closes the websocket and tells the app to quit.
        for task in self.sessions:
            task.cancel()
        if self.sessions:  # each app is told to quit and waited for; one that hangs is left behind
            await asyncio.wait(set(self.sessions), timeout=10)


def serve(settings: ServeSettings, db_path: str | os.PathLike[str]) -> None:
    """Serve until Ctrl+C or SIGTERM."""
    LmrlServer(settings, db_path).serve()
