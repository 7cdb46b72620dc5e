"""``lmrl train ppo|online-filtered-bc`` arguments and runner (no torch at import time).

``add_online_arguments(parser)`` adds the flags; ``run_online(args, store)`` runs the loop and
prints the final metrics as JSON (0), or one line on stderr for bad input (1).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import fields

from training.errors import TrainingError
from training.offline.cli import task_option

ONLINE_ALGOS = ("ppo", "online-filtered-bc")
ALIASES = {"online-%bc": "online-filtered-bc", "online_filtered_bc": "online-filtered-bc",
           "online-pbc": "online-filtered-bc", "obc": "online-filtered-bc"}


def canonical(algo: str) -> str | None:
    """``ppo`` / ``online-filtered-bc`` (or an alias), else None."""
    key = ALIASES.get(algo.lower(), algo.lower())
    return key if key in ONLINE_ALGOS else None


_SKIP = {"algo", "task", "task_options", "init", "extra", "progress"}


def _fields():
    from training.online.config import OnlineConfig

    return [f for f in fields(OnlineConfig) if f.name not in _SKIP], OnlineConfig()


def _type(f) -> type:
    t = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", "str")
    if t.startswith("bool"):
        return bool
    if t.startswith("int"):
        return int
    if t.startswith("float"):
        return float
    return str


def _bool(text: str) -> bool:
    if text.lower() in ("1", "true", "yes", "on"):
        return True
    if text.lower() in ("0", "false", "no", "off"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


def add_online_arguments(parser: argparse.ArgumentParser, *, with_algo: bool = True) -> None:
    """Arguments of ``lmrl train ppo|online-filtered-bc --task T --init CHECKPOINT --out DIR``."""
    if with_algo:
        parser.add_argument("algo", help="ppo or online-filtered-bc")
    parser.add_argument("--task", required=True, help="task id, e.g. maze-fo")
    parser.add_argument("--option", type=task_option, action="append", default=[], dest="task_options",
                        help="task option key=value (repeatable; default: the --init checkpoint's own)")
    parser.add_argument("--init", required=True, help="the starting policy: an lmrl checkpoint (BC)")
    parser.add_argument("--out", required=True, help="run folder (checkpoint/, metrics.jsonl)")
    parser.add_argument("--resume", action="store_true", help="continue from OUT/checkpoint")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    h = parser.add_argument_group("online hyperparameters (defaults depend on algorithm and task)")
    fs, defaults = _fields()
    for f in fs:
        typ = _type(f)
        h.add_argument("--" + f.name.replace("_", "-"), type=_bool if typ is bool else typ, default=None,
                       dest="online_" + f.name, metavar=f.name.upper(),
                       help=f"default {getattr(defaults, f.name)}")


def config_from_args(args: argparse.Namespace):
    """The resolved OnlineConfig of parsed arguments."""
    from training.online.config import OnlineConfig, resolve_online

    algo = canonical(args.algo)
    if algo is None:
        raise TrainingError(f"unknown online algorithm {args.algo!r}; choose ppo or online-filtered-bc")
    cfg = OnlineConfig(algo=algo, task=args.task, init=args.init,
                       task_options=dict(getattr(args, "task_options", None) or []),
                       progress=not getattr(args, "no_progress", False))  # fmt: skip
    explicit = set()
    fs, _ = _fields()
    for f in fs:
        value = getattr(args, "online_" + f.name, None)
        if value is not None:
            setattr(cfg, f.name, value)
            explicit.add(f.name)
    return resolve_online(cfg, explicit)


def run_online(args: argparse.Namespace, store) -> int:
    """Run online training; prints the final metrics as JSON. 0 on success, 1 on bad input."""
    try:
        from training.offline.cli import _check_task

        _check_task(args.task, dict(getattr(args, "task_options", None) or []))
        cfg = config_from_args(args)
        from training.online.loop import train_online

        result = train_online(cfg, store, args.out, resume=args.resume)
    except TrainingError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if result:
        print(json.dumps(result, default=str))
    return 0


def is_online(argv: list[str]) -> bool:
    """True when ``argv`` (the words after ``train``) names an online algorithm."""
    return bool(argv) and canonical(argv[0]) is not None


def build_parser(prog: str = "lmrl train") -> argparse.ArgumentParser:
    """A parser for ``lmrl train ppo|online-filtered-bc ...`` (the words after ``train``)."""
    parser = argparse.ArgumentParser(prog=prog, description="Online training: PPO or online filtered BC.")
    add_online_arguments(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    """``python -m training.online.cli ALGO --db DB ...`` (for ``accelerate launch``)."""
    parser = argparse.ArgumentParser(prog="python -m training.online.cli")
    parser.add_argument("--db", required=True, help="the episode store (SQLite file)")
    add_online_arguments(parser)
    args = parser.parse_args(argv)
    from data.store import Store

    return run_online(args, Store(args.db))


if __name__ == "__main__":
    raise SystemExit(main())
