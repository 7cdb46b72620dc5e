"""The training entry module for launchers: ``python -m training.cli [--db DB] train ALGO ...``
or ``... eval CHECKPOINT ...``, the same subcommands as ``lmrl train`` / ``lmrl eval`` (built from
:mod:`training.algorithms`) without the app. ``accelerate launch`` runs it on every process::

    accelerate launch --multi_gpu --num_processes 8 -m training.cli --db episodes.db \\
        train ppo --task maze-fo --init runs/bc-maze --out runs/ppo
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from training.algorithms import add_eval_command, add_reproduce_command, add_train_command

PROG = "python -m training.cli"


def build_parser(prog: str = PROG) -> argparse.ArgumentParser:
    """``[--db DB] train ALGO ... | eval CHECKPOINT ... | reproduce TASK ...`` (``--db`` also after the subcommand)."""
    db_help = "episode database (default: $LMRL_DB or the user data directory)"
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--db", default=argparse.SUPPRESS, help=db_help)
    parser = argparse.ArgumentParser(
        prog=prog, description="Train or evaluate a policy on the episode store."
    )
    parser.add_argument("--db", default=None, help=db_help)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    add_train_command(sub, [common])
    add_eval_command(sub, [common])
    add_reproduce_command(sub, [common])
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parse, open the store, run; bad input is one line on stderr and a non-zero exit."""
    args = build_parser().parse_args(argv)
    from data.store import Store, StoreError

    try:
        store = Store(args.db)
    except StoreError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 1
    try:
        return int(args.run(args, store))
    finally:
        store.close()


if __name__ == "__main__":
    raise SystemExit(main())
