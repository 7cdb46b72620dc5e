"""Argument types of the ``lmrl`` command line (a bad value gets one plain sentence), and the quick
reading of a plain ``lmrl``'s arguments."""

from __future__ import annotations

import argparse


def seed(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"the seed must be a whole number, not {text!r}") from None
    if not 0 <= v < 2**63:
        raise argparse.ArgumentTypeError("the seed must be between 0 and 2**63 - 1")
    return v


def positive(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, not {text!r}") from None
    if v <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, not {v}")
    return v


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
    except (argparse.ArgumentError, SystemExit):  # e.g. --db without a value: the full parser says so
        return None
    if rest:
        return None
    args.command = None
    return args
