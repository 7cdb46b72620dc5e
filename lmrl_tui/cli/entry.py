"""The ``lmrl`` command: the app and the headless jobs (``lmrl --help`` lists them). One dispatch:
the store is opened when the command needs it, then ``args.run(args, store)``. Bad input gets one
line on stderr and a non-zero exit, never a traceback."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import traceback
from collections.abc import Sequence
from typing import Any

from lmrl_tui.cli.errors import (
    EXIT_USAGE,
    database_errors,
    report_lock_wait,
    setup_error,
    user_errors,
    with_notes,
)
from lmrl_tui.cli.parser import app_only, build_parser

WRITING_COMMANDS = frozenset({"generate", "import", "train", "eval"})
"""Commands that write episodes or runs: the store's pages are checked first (no writes to a damaged file)."""


def open_store(args: argparse.Namespace) -> Any:
    from data.store import Store

    store = Store(args.db, verify=args.command in WRITING_COMMANDS)
    store.on_lock_wait = report_lock_wait
    return store


def dispatch(args: argparse.Namespace) -> int:
    """Run the parsed command: its runner, given the store if it needs one (closed after)."""
    if not args.needs_store:  # tasks; merge names its stores itself
        return int(args.run(args, None))
    store = open_store(args)
    try:
        return int(args.run(args, store))
    finally:
        store.close()


def _trace(debug: bool) -> None:
    """With ``--debug``, the traceback of the error being handled, before its one line."""
    if debug:
        traceback.print_exc(file=sys.stderr)


def take_sigint_if_asked() -> None:
    """A process started with SIGINT ignored (by a shell's background job, ``nohup``, or an app
    that was itself started so) inherits that, and Python then never raises KeyboardInterrupt.
    A run the app started and will stop with SIGINT restores Python's own handler: it ends as
    "stopped", with its checkpoint, instead of being terminated 15 s later."""
    if (
        os.environ.get("LMRL_STOP_BY_SIGINT") == "1"
    ):  # runs_control.STOP_BY_SIGINT (not imported: start-up time)
        signal.signal(signal.SIGINT, signal.default_int_handler)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``lmrl`` (the app without a subcommand); returns the exit status."""
    take_sigint_if_asked()
    argv = sys.argv[1:] if argv is None else list(argv)
    args = app_only(argv) or build_parser().parse_args(argv)
    user = user_errors()
    debug = bool(getattr(args, "debug", False)) or os.environ.get("LMRL_DEBUG") == "1"
    try:
        return dispatch(args)
    except user as e:
        _trace(debug)
        print(with_notes(f"lmrl: error: {e}", e), file=sys.stderr)
        return 1
    except database_errors() as e:  # e.g. a store damaged after it was opened
        _trace(debug)
        print(f"lmrl: error: database error: {e}", file=sys.stderr)
        return 1
    except ImportError as e:
        _trace(debug)
        from envs.players.agents import TRAIN_EXTRA

        print(f"lmrl: error: {e} (for training: {TRAIN_EXTRA})", file=sys.stderr)
        return 1
    except ValueError as e:  # bad task options and the like
        _trace(debug)
        print(with_notes(f"lmrl: error: {e}", e), file=sys.stderr)
        return 1
    except RuntimeError as e:
        _trace(debug)
        if not setup_error(e):
            raise
        print(with_notes(f"lmrl: error: {e}", e), file=sys.stderr)
        return EXIT_USAGE  # the machine's setup, not the run: exit 2, like a usage error
    except KeyboardInterrupt as e:
        _trace(debug)
        print(with_notes("lmrl: interrupted", e), file=sys.stderr)
        return 130
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
