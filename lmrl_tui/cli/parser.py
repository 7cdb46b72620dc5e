"""The ``lmrl`` command tree. Every subcommand names its runner and whether it needs the store
(``set_defaults(run=..., needs_store=...)``): :func:`lmrl_tui.cli.entry.main` opens the store
when it is needed and calls ``args.run(args, store)``. A plain ``lmrl`` (the app) is read
without building the tree (:func:`app_only`)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

from lmrl_tui.cli import play
from lmrl_tui.cli.data_commands import (
    add_export_command,
    add_generate_command,
    add_import_command,
    add_merge_command,
)
from lmrl_tui.cli.errors import EXIT_USAGE
from lmrl_tui.cli.stats import add_stats_command, add_tasks_command

Runner = Callable[[argparse.Namespace, Any], int]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


DB_HELP = "episode database (default: $LMRL_DB or the user data directory)"


def build_parser() -> argparse.ArgumentParser:
    """The one ``lmrl`` command tree; ``--db`` works before or after any subcommand."""
    from lmrl_tui.cli.serve import add_serve_command
    from training.algorithms import add_eval_command, add_reproduce_command, add_train_command

    # every subcommand takes --db too; SUPPRESS keeps a value given before the subcommand
    common = _Parser(add_help=False)
    common.add_argument("--db", default=argparse.SUPPRESS, help=DB_HELP)
    common.add_argument(
        "--debug",
        action="store_true",
        default=argparse.SUPPRESS,
        help="on an error, show the traceback too (or set LMRL_DEBUG=1)",
    )
    p = _Parser(
        prog="lmrl", description="Play, log, train and watch LMRL-Gym tasks in the terminal."
    )
    p.add_argument("--db", help=DB_HELP)
    p.add_argument(
        "--debug",
        action="store_true",
        help="on an error, show the traceback too (or set LMRL_DEBUG=1)",
    )
    p.add_argument("--player", help="your player name in the app")
    p.set_defaults(run=play.run_app, needs_store=True)  # no subcommand: the app
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for add in (
        add_tasks_command,
        add_generate_command,
        add_stats_command,
        add_export_command,
        add_import_command,
        play.add_play_command,
    ):
        add(sub, [common])
    # the training layer's commands set their runners; lmrl's train also records its run
    add_train_command(sub, [common], wrap=_followed).set_defaults(needs_store=True)
    for add in (add_eval_command, add_reproduce_command):  # reproduce keeps its own store in OUT
        add(sub, [common]).set_defaults(needs_store=True)
    add_serve_command(sub, [common])
    add_merge_command(sub)  # no common --db: merge names its stores itself
    return p


def _followed(run: Runner) -> Runner:
    """``lmrl train ALGO``'s runner: with ``--out``, it records itself there first (the runs screen
    can follow and stop it), then runs; a run refused before it wrote anything (bad flags, no
    data) takes its record back, so the runs screen does not list it."""

    def run_followed(args: argparse.Namespace, store: Any) -> int:
        if not getattr(args, "out", None):
            return run(args, store)
        from lmrl_tui.runs_control import forget_self, record_self

        made = not Path(args.out).exists()
        launch = record_self(args.out)
        code = 1
        try:
            code = run(args, store)
            return code
        finally:
            if code != 0 and launch is not None:  # refused before it began: no run to list
                forget_self(args.out, launch, remove_folder=made)

    return run_followed


def app_only(argv: list[str]) -> argparse.Namespace | None:
    """The arguments of a plain ``lmrl`` (the app: no subcommand, only ``--db``, ``--player``,
    ``--debug``), or None for anything else. Building the whole command tree imports the training
    and serving modules' argument code: 50–110 ms of a start whose target is 0.3 s."""
    p = argparse.ArgumentParser(add_help=False, allow_abbrev=False, exit_on_error=False)
    p.add_argument("--db")
    p.add_argument("--debug", action="store_true")
    p.add_argument("--player")
    try:
        args, rest = p.parse_known_args(argv)
    except (
        argparse.ArgumentError,
        SystemExit,
    ):  # e.g. --db without a value: the full parser says so
        return None
    if rest:
        return None
    args.command = None
    args.run, args.needs_store = play.run_app, True
    return args
