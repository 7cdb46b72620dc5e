"""``lmrl tasks`` (the tasks, their sides, policies and options) and ``lmrl stats`` (what the store
holds: per task, source and side; with ``--by player`` a row per annotator too)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from lmrl_tui.cli.errors import CliError


def add_tasks_command(
    subparsers: Any, parents: list[argparse.ArgumentParser]
) -> argparse.ArgumentParser:
    t = subparsers.add_parser("tasks", parents=parents, help="list the tasks")
    t.set_defaults(run=run_tasks, needs_store=False)
    return t


def run_tasks(args: argparse.Namespace, store: Any = None) -> int:
    import envs

    rows = []
    for task_id in envs.ids():
        spec = envs.spec(task_id)
        rows.append(
            (
                task_id,
                spec.title,
                " vs ".join(spec.roles),
                str(spec.max_turns),
                ", ".join(envs.policies(task_id)),
            )
        )
    _print_table(("task", "title", "sides", "max turns", "policies"), rows)
    print("\nTask options (--option KEY=VALUE; the new-episode dialog lists them too):")
    for task_id in envs.ids():
        specs = envs.core.registry.option_specs(task_id)
        print(
            f"  {task_id}:" + "".join(f"\n    {o.describe()}  {o.help}".rstrip() for o in specs)
            or " none"
        )
    return 0


def _print_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=False)]
    for row in (header, *rows):
        print("  ".join(str(x).ljust(w) for x, w in zip(row, widths, strict=False)).rstrip())


def add_stats_command(
    subparsers: Any, parents: list[argparse.ArgumentParser]
) -> argparse.ArgumentParser:
    s = subparsers.add_parser(
        "stats",
        parents=parents,
        help="per task, source and side: episodes, mean return, success rate",
    )
    s.add_argument("--task", default=None)
    s.add_argument(
        "--by",
        choices=["player"],
        default=None,
        help="split the sides by player too, then a row per annotator: episodes, time played, success, mean return, think time, refused inputs, labels",
    )
    s.add_argument(
        "--campaign",
        default=None,
        metavar="FILE_OR_NAME",
        help="where a campaign stands (a campaign file, or the name of one served on this store): "
        "per assignment the episodes wanted, finished, being played, abandoned, left, and who",
    )
    s.set_defaults(run=run_stats, needs_store=True)
    return s


def print_campaign(store: Any, file_or_name: str) -> None:
    from data.campaigns import campaign_progress, find_campaign, progress_rows

    progress = campaign_progress(store, find_campaign(store, file_or_name))
    print(
        f"campaign {progress['campaign']}: {progress['finished']} of {progress['wanted']} "
        "episodes finished"
    )
    _print_table(*progress_rows(progress))


def run_stats(args: argparse.Namespace, store: Any) -> int:
    import envs
    from data.stats import breakdown
    from lmrl_tui.cli.annotators import print_annotators

    print(f"database: {store.path}")
    if args.campaign is not None:
        print_campaign(store, args.campaign)
        return 0
    per_source = breakdown(store, ("task", "source"), task=args.task)
    if not per_source:  # a task no longer registered still shows its stored episodes
        if args.task and args.task not in (known := envs.ids()):
            raise CliError(f"unknown task {args.task!r}; known tasks: {', '.join(known)}")
        what, task = (f"{args.task} episodes", args.task) if args.task else ("episodes", "TASK")
        print(f"no {what} yet: play in the app (lmrl) or run `lmrl generate {task}`")
        return 0
    side_keys = (
        "task",
        "source",
        "agent_kind",
        "partner_kind",
        *(("player",) if args.by == "player" else ()),
    )
    sides: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in breakdown(store, side_keys, task=args.task):
        sides.setdefault((r["task"], r["source"]), []).append(r)
    lines: list[tuple[str, dict[str, Any] | None]] = []  # (label, numbers); None: a task's title
    for i, r in enumerate(per_source):
        if i == 0 or per_source[i - 1]["task"] != r["task"]:
            lines.append((r["task"], None))
        lines.append(("  " + r["source"], r))
        mine = [(_side_label(s), s) for s in sides.get((r["task"], r["source"]), [])]
        if not (len(mine) == 1 and mine[0][0] == r["source"]):
            lines.extend(("    " + label, s) for label, s in mine)
    _print_stats(lines)
    print_annotators(store, args)  # with --by player: a row per annotator too
    return 0


def _side_label(r: dict[str, Any]) -> str:
    """Who played: the agent's kind, ``v`` the partner's (``human v scripted``), ``(player)``."""
    label = (
        r["agent_kind"] if r["partner_kind"] is None else f"{r['agent_kind']} v {r['partner_kind']}"
    )
    return label + (f" ({r['player']})" if r.get("player") else "")


_STATS_COLUMNS = (
    ("episodes", "episodes", "d"),
    ("finished", "finished", "d"),
    ("in progress", "in_progress", "d"),
    ("abandoned", "abandoned", "d"),
    ("mean return", "mean_return", ".3f"),
    ("success", "success_rate", ".1%"),
    ("steps", "steps", "d"),
    ("not understood", "not_understood", ".1%"),
)
_OPTIONAL = ("in_progress", "abandoned", "not_understood")
"""Columns left out when no row has anything in them (keeps the table within 100 columns)."""


def _print_stats(lines: Sequence[tuple[str, dict[str, Any] | None]]) -> None:
    """The stats table: a task's title line (with its sides' roles), then its sources and their
    sides; numeric columns with two-line titles, one space apart where two would pass 100 columns."""
    import envs

    rows = [n for _, n in lines if n is not None]
    cols = [
        c
        for c in _STATS_COLUMNS
        if c[1] not in _OPTIONAL
        or any(r[c[1]] not in (None, 0) for r in rows)
        or (c[1] == "not_understood" and any(r[c[1]] is not None for r in rows))
    ]

    def cell(r: dict[str, Any], key: str, spec: str) -> str:
        return "" if r[key] is None else format(r[key], spec)

    label_w = max(len(label) for label, n in lines if n is not None)
    titles = [c[0].split(" ", 1) if " " in c[0] else ["", c[0]] for c in cols]
    widths = [
        max(len(t[1]), *(len(cell(r, c[1], c[2])) for r in rows))
        for t, c in zip(titles, cols, strict=True)
    ]
    gap = "  " if label_w + sum(widths) + 2 * len(widths) <= 100 else " "

    def line(label: str, texts: Sequence[str]) -> str:
        return (
            label.ljust(label_w)
            + "".join(gap + t.rjust(w) for t, w in zip(texts, widths, strict=True))
        ).rstrip()

    for part in (0, 1):
        print(line("", [t[part] for t in titles]))
    for label, n in lines:
        if n is None:
            roles = envs.spec(label).roles if label in envs.ids() else ()
            print(label + (f" ({' v '.join(roles)})" if len(roles) > 1 else ""))
        else:
            print(line(label, [cell(n, c[1], c[2]) for c in cols]))
