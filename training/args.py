"""Command-line pieces shared by every command that reads the store or trains (no torch at import).

Each is defined once and used by ``lmrl export``, ``lmrl train ALGO`` and ``lmrl eval`` alike:
the task and its options, the dataset filters (which stored episodes), and the flags generated
from a config dataclass whose fields carry their help line (``training.config.setting``).
"""

from __future__ import annotations

import argparse
from dataclasses import Field, fields
from typing import Any

STATUSES = ("finished", "abandoned", "in_progress", "any")
SPLITS = ("train", "eval")
SOURCES = ("human", "scripted", "agent", "import", "any")
"""``--source`` values: ``data.datasets.SOURCES`` and ``any`` (a test keeps them in step)."""


def task_option(text: str) -> tuple[str, Any]:
    """argparse type of ``--option key=value``."""
    from envs.core import parse_option

    try:
        return parse_option(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def check_task(task: str | None, options: dict[str, Any] | None = None) -> None:
    """The task exists and takes these options (a one-line TrainingError otherwise)."""
    import envs
    from training.errors import TrainingError

    if not task:
        raise TrainingError("no task given (use --task)")
    try:
        envs.spec(task, **(options or {}))
    except envs.UnknownTask as e:
        raise TrainingError(str(e)) from None
    except ValueError as e:
        raise TrainingError(f"bad task option for {task}: {e}") from None


def parse_bool(text: str) -> bool:
    """argparse type of a boolean setting: true/false, yes/no, on/off, 1/0."""
    if text.lower() in ("1", "true", "yes", "on"):
        return True
    if text.lower() in ("0", "false", "no", "off"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


def add_task_arguments(
    parser: argparse.ArgumentParser,
    *,
    required: bool = False,
    task_help: str = "task id (see `lmrl tasks`)",
    option_help: str = "task option key=value (repeatable)",
) -> None:
    """``--task`` and ``--option key=value`` (into ``args.task`` and ``args.task_options``)."""
    parser.add_argument("--task", required=required, default=None, help=task_help)
    parser.add_argument(
        "--option",
        type=task_option,
        action="append",
        default=[],
        dest="task_options",
        metavar="KEY=VALUE",
        help=f"{option_help}; `lmrl tasks` lists every task's options "
        "with their values and defaults",
    )


def add_dataset_arguments(parser: argparse.ArgumentParser) -> None:
    """The dataset filters: which stored episodes a command reads (see :func:`dataset_query`)."""
    g = parser.add_argument_group("dataset (which stored episodes; every filter narrows it)")
    g.add_argument(
        "--source",
        action="append",
        default=[],
        dest="sources",
        choices=SOURCES,
        help="episode source to keep (repeatable; default: human, scripted and import, the "
        "logged data; agent: models' own rollouts, e.g. online runs'; any: all)",
    )
    g.add_argument(
        "--run",
        type=int,
        default=None,
        dest="run_id",
        metavar="ID",
        help="keep the episodes of this run (an online run's rollouts; any source unless --source)",
    )
    g.add_argument(
        "--player",
        action="append",
        default=[],
        dest="players",
        metavar="NAME",
        help="human player name to keep (repeatable)",
    )
    g.add_argument(
        "--agent",
        action="append",
        default=[],
        dest="agents",
        metavar="NAME",
        help="agent name to keep, e.g. behaviour (repeatable)",
    )
    g.add_argument(
        "--partner-kind",
        action="append",
        default=[],
        dest="partner_kinds",
        metavar="KIND",
        help="who played the partner side: human, scripted (the task's own partner), hf, "
        "http or checkpoint (repeatable)",
    )
    g.add_argument(
        "--campaign",
        action="append",
        default=[],
        dest="campaigns",
        metavar="NAME",
        help="keep the episodes played for this campaign (lmrl serve --campaign; repeatable)",
    )
    g.add_argument(
        "--assignment",
        action="append",
        default=[],
        dest="assignments",
        metavar="ID",
        help="keep the episodes of this campaign assignment (repeatable)",
    )
    g.add_argument(
        "--status",
        default="finished",
        choices=STATUSES,
        help="episode status to keep (default: finished)",
    )
    g.add_argument(
        "--min-return", type=float, default=None, help="keep episodes with at least this return"
    )
    g.add_argument(
        "--top-percent",
        type=float,
        default=None,
        metavar="P",
        help="keep the top P%% by return, ties kept (%%bc: 10 unless --wins-only or "
        "--min-return is given)",
    )
    g.add_argument("--wins-only", action="store_true", help="keep successful episodes only")
    g.add_argument(
        "--takeover-only",
        action="store_true",
        help="keep episodes where a person took over from the agent (human corrections; any source)",
    )
    g.add_argument("--split", choices=SPLITS, default=None, help="a deterministic split by seed")
    g.add_argument(
        "--eval-fraction",
        type=float,
        default=0.1,
        help="share of the seeds in the eval split (default: 0.1)",
    )
    g.add_argument("--limit", type=int, default=None, help="at most this many episodes")


def dataset_query(args: argparse.Namespace, **overrides: Any) -> Any:
    """The :class:`data.datasets.DatasetQuery` of parsed task and dataset arguments."""
    from data.datasets import DatasetQuery

    query = dict(
        task=args.task,
        sources=list(args.sources) or None,
        players=list(args.players),
        agents=list(args.agents),
        partner_kinds=list(getattr(args, "partner_kinds", []) or []),
        campaigns=list(getattr(args, "campaigns", []) or []),
        assignments=list(getattr(args, "assignments", []) or []),
        status=args.status,
        min_return=args.min_return,
        top_percent=args.top_percent,
        wins_only=args.wins_only,
        split=args.split,
        takeover_only=bool(getattr(args, "takeover_only", False)),
        eval_fraction=args.eval_fraction,
        limit=args.limit,
        run_id=args.run_id,
        options=dict(args.task_options),
    )
    query.update(overrides)
    return DatasetQuery(**query)


# -- flags generated from a documented config dataclass -----------------------------------------
def config_flags(cls: type) -> list[Field]:
    """The fields of ``cls`` that have a generated ``--name`` flag."""
    return [f for f in fields(cls) if f.metadata.get("flag")]


def field_type(f: Field) -> type:
    """int, float, bool or str from the field's annotation (``int | None`` is int)."""
    name = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", "str")
    return {"int": int, "float": float, "bool": bool}.get(name.split("|")[0].strip(), str)


def _shown(value: Any) -> str:
    if value is None:
        return "none"
    return str(value).lower() if isinstance(value, bool) else str(value)


def add_config_arguments(
    parser: argparse.ArgumentParser, cls: type, defaults: Any, title: str
) -> None:
    """One ``--name`` flag per documented field of ``cls``, its help ending with the default
    (read from ``defaults``). Every flag defaults to None, so the runner knows what was given."""
    group = parser.add_argument_group(title)
    for f in config_flags(cls):
        text = f"{f.metadata['help']} (default: {_shown(getattr(defaults, f.name))})"
        text = text.replace("%", "%%")  # argparse %-formats help strings
        flag = "--" + f.name.replace("_", "-")
        if f.metadata.get("switch"):
            group.add_argument(flag, action="store_true", default=None, dest=f.name, help=text)
            continue
        typ = field_type(f)
        group.add_argument(
            flag,
            type=parse_bool if typ is bool else typ,
            default=None,
            dest=f.name,
            metavar="BOOL" if typ is bool else f.name.upper(),
            help=text,
        )


def explicit_settings(args: argparse.Namespace, cls: type) -> dict[str, Any]:
    """The config fields the command line set (flags left out are None)."""
    given = {}
    for f in config_flags(cls):
        value = getattr(args, f.name, None)
        if value is not None:
            given[f.name] = value
    return given
