"""``lmrl serve``: the argument rules (which host, which token) and the runner. The server
itself (textual-serve, aiohttp) lives in :mod:`lmrl_tui.serve` and is imported only when it runs,
so ``lmrl --help`` and the other commands never import aiohttp."""

from __future__ import annotations

import argparse
import ipaddress
import os
import secrets
from dataclasses import asdict, dataclass
from typing import Any

from lmrl_tui.cli.argtypes import positive

TOKEN_ENV = "LMRL_SERVE_TOKEN"
MIN_TOKEN_CHARS = 16
LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})


class ServeArgumentError(ValueError):
    """The host, port or token given to ``lmrl serve`` cannot be used, or the server cannot start
    (``lmrl`` prints it as one line and exits 1)."""


@dataclass(frozen=True)
class Settings:
    """What :func:`serve_settings` decided (:class:`lmrl_tui.serve.ServeSettings` takes the same)."""

    host: str
    port: int
    token: str | None
    token_generated: bool
    max_sessions: int


def is_loopback(host: str) -> bool:
    """Whether ``host`` is this machine only (127.0.0.0/8, ::1 or localhost)."""
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def serve_settings(
    args: argparse.Namespace, environ: dict[str, str] | os._Environ[str] = os.environ
) -> Settings:
    """The settings ``args`` ask for, or :class:`ServeArgumentError`. Rules: loopback unless
    ``--allow-remote``; off loopback a token is required (``--token``, ``$LMRL_SERVE_TOKEN``, or
    one generated here); ``--public-token`` generates one on loopback too."""
    host = args.host.strip()
    if not host:
        raise ServeArgumentError("--host is empty")
    remote = not is_loopback(host)
    if remote and not args.allow_remote:
        raise ServeArgumentError(
            f"--host {host} is reachable from other machines: add --allow-remote to serve there "
            "(a token is then required; see lmrl serve --help)"
        )
    if args.token is not None and args.public_token:
        raise ServeArgumentError("give either --token or --public-token, not both")
    token = args.token if args.token is not None else (environ.get(TOKEN_ENV) or None)
    if args.public_token:
        token = None
    if token is not None:
        token = token.strip()
        if len(token) < MIN_TOKEN_CHARS or any(c.isspace() for c in token):
            raise ServeArgumentError(
                f"the access token must be at least {MIN_TOKEN_CHARS} characters without spaces "
                "(or leave it out: --allow-remote then generates one)"
            )
    generated = token is None and (remote or args.public_token)
    if generated:
        token = secrets.token_urlsafe(24)
    return Settings(host, args.port, token, generated, args.max_sessions)


def _port(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"the port must be a whole number, not {text!r}") from None
    if not 1 <= v <= 65535:
        raise argparse.ArgumentTypeError(f"the port must be between 1 and 65535, not {v}")
    return v


def add_serve_command(
    subparsers: Any, parents: list[argparse.ArgumentParser]
) -> argparse.ArgumentParser:
    """``serve``: the app in web browsers, one app process per browser, all writing to one store."""
    s = subparsers.add_parser(
        "serve",
        parents=list(parents),
        help="serve the app to web browsers (one app per browser, all into one store; needs the serve extra)",
        description="Serve the app to web browsers: each browser gets its own app process, asks for a "
        "player name, and logs every step into the one store. Loopback only unless --allow-remote; "
        f"off loopback an access token is required (--token, ${TOKEN_ENV}, or one generated and printed).",
    )
    s.add_argument(
        "--host", default="127.0.0.1", help="interface to listen on (default: 127.0.0.1)"
    )
    s.add_argument("--port", type=_port, default=8000, help="port to listen on (default: 8000)")
    s.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow a --host reachable from other machines (then a token is required)",
    )
    tokens = s.add_mutually_exclusive_group()
    tokens.add_argument(
        "--token",
        default=None,
        help=f"access token browsers must bring (default: ${TOKEN_ENV}; "
        f"at least {MIN_TOKEN_CHARS} characters)",
    )
    tokens.add_argument(
        "--public-token",
        action="store_true",
        help="generate a fresh token and print the link to share (also on loopback)",
    )
    s.add_argument(
        "--max-sessions",
        type=positive,
        default=16,
        help="browsers served at once; more are refused (default: 16)",
    )
    from lmrl_tui.cli.play import add_play_arguments

    add_play_arguments(s, required=False)
    s.add_argument(
        "--campaign",
        default=None,
        metavar="FILE",
        help="a campaign file (TOML: assignments of task, side, partner, options, seeds, "
        "episodes, per_person): each person is handed the next episode it wants of them",
    )
    s.set_defaults(run=run_serve, needs_store=True)
    return s


def run_serve(args: argparse.Namespace, store: Any) -> int:
    """Check the arguments, then serve until Ctrl+C (or SIGTERM)."""
    from lmrl_tui.cli.play import play_argv, play_request

    chosen = serve_settings(args)
    play_request(args)  # flags that do not fit the task: one line now, not in every browser
    if args.vs == "paired" and args.as_role is not None:
        raise ServeArgumentError(
            "with --vs paired leave --as out: every browser would ask for the same side, and "
            "nobody could be paired (each person plays either side)"
        )
    campaign = None
    if args.campaign is not None:
        if args.task is not None:
            raise ServeArgumentError("give either --campaign or --task, not both")
        campaign = serve_campaign(args.campaign, store)
    try:
        from lmrl_tui.serve import ServeSettings, serve
    except ImportError as e:
        from envs.players.agents import install_hint

        raise ServeArgumentError(
            f"lmrl serve needs textual-serve ({e}): {install_hint('serve')}"
        ) from None
    settings = ServeSettings(
        **asdict(chosen), hidden_env=(TOKEN_ENV,), play=play_argv(args), campaign=campaign
    )
    try:
        serve(settings, store.path)
    except OSError as e:
        raise ServeArgumentError(
            f"cannot listen on {settings.host}:{settings.port}: {e.strerror or e}"
        ) from None
    return 0


def serve_campaign(path: str, store: Any) -> str:
    """Check the campaign file ``path`` (each assignment as ``lmrl play`` would take it) and keep
    it in the store; returns its name. A bad file: one line naming the field."""
    from data.campaigns import CampaignError, load_campaign, save_campaign
    from lmrl_tui.cli.play import PlayFlagsError, play_fields

    try:
        campaign = load_campaign(path)
        for n, a in enumerate(campaign.assignments, 1):
            if a.pairing:
                continue  # the other side is a person: checked with the file
            try:
                play_fields(a.task, a.side, a.partner, list(a.options.items()))
            except PlayFlagsError as e:
                raise CampaignError(f"{path}: assignment[{n}].partner: {e}") from None
    except CampaignError as e:
        raise ServeArgumentError(str(e)) from None
    save_campaign(store, campaign)
    return campaign.name
