"""``lmrl train ppo|online-filtered-bc``: arguments and runner (no torch at import).

:mod:`training.algorithms` registers both online algorithms with :func:`add_online_arguments`
and :func:`run_online`, which runs the loop and prints the final metrics as JSON (0), or one
line on stderr for bad input (1).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import fields

from training.args import add_config_arguments, add_task_arguments, check_task, explicit_settings
from training.errors import TrainingError
from training.online.config import ONLINE_ALGOS, OnlineConfig

ALIASES = {
    "online-%bc": "online-filtered-bc",
    "online_filtered_bc": "online-filtered-bc",
    "online-pbc": "online-filtered-bc",
    "obc": "online-filtered-bc",
}


def canonical(algo: str) -> str | None:
    """``ppo`` / ``online-filtered-bc`` (or an alias), else None."""
    key = ALIASES.get(algo.lower(), algo.lower())
    return key if key in ONLINE_ALGOS else None


def _help(name: str) -> str:
    return next(f.metadata["help"] for f in fields(OnlineConfig) if f.name == name)


def add_online_arguments(parser: argparse.ArgumentParser, algo: str = "ppo") -> None:
    """Arguments of ``lmrl train ppo|online-filtered-bc --task T --init CHECKPOINT --out DIR``."""
    add_task_arguments(
        parser,
        required=True,
        task_help="task id, e.g. maze-fo",
        option_help="task option key=value (repeatable; default: the --init checkpoint's own)",
    )
    parser.add_argument("--init", required=True, help=_help("init"))
    parser.add_argument("--out", required=True, help="run folder (checkpoint/, metrics.jsonl)")
    parser.add_argument("--resume", action="store_true", help="continue from OUT/checkpoint")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_config_arguments(
        parser,
        OnlineConfig,
        OnlineConfig(algo=algo),
        "online hyperparameters (a task may have its own defaults where no flag "
        "is given: TASK_DEFAULTS in training/online/config.py)",
    )


def config_from_args(args: argparse.Namespace) -> OnlineConfig:
    """The resolved OnlineConfig of parsed arguments."""
    from training.online.config import resolve_online

    algo = canonical(args.algo)
    if algo is None:
        raise TrainingError(
            f"unknown online algorithm {args.algo!r}; choose ppo or online-filtered-bc"
        )
    cfg = OnlineConfig(
        algo=algo,
        task=args.task,
        init=args.init,
        task_options=dict(getattr(args, "task_options", None) or []),
        progress=not getattr(args, "no_progress", False),
    )
    given = explicit_settings(args, OnlineConfig)
    for name, value in given.items():
        setattr(cfg, name, value)
    return resolve_online(cfg, set(given))


def run_online(args: argparse.Namespace, store) -> int:
    """Run online training; prints the final metrics as JSON. 0 on success, 1 on bad input."""
    try:
        check_task(args.task, dict(getattr(args, "task_options", None) or []))
        cfg = config_from_args(args)
        from training.online.loop import train_online

        result = train_online(cfg, store, args.out, resume=args.resume)
    except TrainingError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if result:
        print(json.dumps(result, default=str))
    return 0
