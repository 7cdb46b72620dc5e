"""What the runs screen says about a run, as text: its status (with its process, when the app
started it), its dataset composition and config, and a metrics row (no widgets here)."""

from __future__ import annotations

import json
from typing import Any

from rich.markup import escape

from data.composition import format_composition
from lmrl_tui.runs_control import Launch

DEAD = "dead"
"""The status shown for a run whose row says running but whose process is gone."""


def shown_status(row: dict[str, Any], alive: bool | None) -> str:
    """The status a run is shown with: ``dead`` for a ``running`` row whose process is gone
    (``alive`` False; None: the app does not know its process, e.g. a command-line run)."""
    if row.get("status") == "running" and alive is False:
        return DEAD
    return str(row.get("status") or "?")


def format_metric_row(row: dict[str, Any]) -> str:
    """``kind step N: key=value ...`` (floats to 4 significant digits; nested values left out)."""
    head, rest = metric_head(row), _pairs({k: v for k, v in row.items() if k not in _HEAD})
    return f"{head}: {rest}" if head else rest


_HEAD = ("kind", "step", "round")


def metric_head(row: dict[str, Any]) -> str:
    """What a metrics row is: ``train step 40``, ``eval round 3``."""
    where = next((f"{k} {row[k]}" for k in ("step", "round") if k in row), "")
    return " ".join(str(p) for p in (row.get("kind", ""), where) if p)


def _pairs(row: dict[str, Any]) -> str:
    parts = []
    for k, v in row.items():
        if isinstance(v, float):
            parts.append(f"{k}={v:.4g}")
        elif isinstance(v, int | str | bool) or v is None:
            parts.append(f"{k}={v}")
    return " ".join(parts)


def status_text(
    row: dict[str, Any] | None,
    launch: Launch | None,
    alive: bool | None,
    last_eval: dict[str, Any] | None = None,
    log: list[str] | None = None,
) -> str:
    """The run's header: what it is, its status and its process (Rich markup)."""
    if row is None:
        if launch is None:
            return ""
        state = (
            "starting: preparing its data" if alive else "[b]ended before it started training[/b]"
        )
        text = f"[b]New run[/b] · {escape(launch.argv[6])} on {escape(launch.argv[8])} · {state}\noutput: {escape(launch.out_dir)}"
        text += f"\nprocess {launch.pid}, log: {escape(launch.log)}"
        if not alive and log:
            text += "\n" + escape("\n".join(log[-6:]))
        return text
    status = shown_status(row, alive)
    text = (
        f"[b]Run {row['id']}[/b] · {row['kind']} {escape(row['algo'] or '')} on {escape(row['task'] or '?')}"
        f" · [b]{status}[/b]"
    )
    if status == DEAD:
        text += (
            f" (process {launch.pid if launch else '?'} is gone; the run never recorded its end)"
        )
    elif row.get("status") == "stopped":
        text += f" ({escape(str((row.get('metrics') or {}).get('stopped', 'on purpose')))})"
    text += f"\noutput: {escape(row['out_dir'] or '-')}"
    if launch is not None:
        state = "running: s stops it" if alive else "ended"
        where = (
            f"log: {escape(launch.log)}"
            if launch.log
            else "started on the command line, its output in its terminal"
        )
        text += f"\nprocess {launch.pid} ({state}), {where}"
    elif row.get("status") == "running":
        text += "\nstarted outside the app by an older version or another machine: its process is not known here"
    if last_eval is not None:
        norm = (
            ""
            if last_eval["normalised_lmrl"] is None
            else f", normalised {last_eval['normalised_lmrl']:.1f} (LMRL)"
        )
        text += f"\nlast evaluation: mean return {last_eval['mean_return']:.3f} over {last_eval['episodes']} episodes{norm}"
    return text


def _dataset_text(dataset: Any) -> list[str]:
    if not isinstance(dataset, dict):
        return ["dataset: not recorded"]
    if "rows" in dataset and "total" in dataset:
        return format_composition(dataset).splitlines()
    lines = []
    if dataset.get("trains_on") == "rollouts":
        r = dataset.get("rollouts") or {}
        lines.append(
            f"dataset: its own rollouts ({r.get('per_round')} episodes a round, {r.get('rounds')} rounds)"
        )
        lines.append(f"  initial policy: {dataset.get('init')}")
        init = dataset.get("init_dataset")
        if isinstance(init, dict) and init.get("episodes") is not None:
            lines.append(
                f"  which was trained on {init['episodes']:,} episodes"
                + (f" ({init['selected_by']})" if init.get("selected_by") else "")
            )
        if isinstance(dataset.get("bc_term"), dict):
            lines += format_composition(dataset["bc_term"], "the BC term's dataset").splitlines()
        return lines
    return ["dataset: " + json.dumps(dataset, default=str)]


def details_text(row: dict[str, Any] | None) -> str:
    """The dataset composition, the config (one ``key = value`` a line) and the final metrics."""
    if row is None:
        return "No run selected."
    config = row.get("config") if isinstance(row.get("config"), dict) else {}
    lines = _dataset_text(config.get("dataset"))
    if row.get("dataset_query"):
        lines.append(f"  query: {row['dataset_query']}")
    lines += ["", "config:"]
    for k, v in sorted(config.items()):
        if k != "dataset":
            lines.append(f"  {k} = {json.dumps(v, default=str)}")
    metrics = row.get("metrics")
    if isinstance(metrics, dict) and metrics:
        lines += ["", "final metrics:"]
        for k, v in sorted(metrics.items()):
            lines.append(f"  {k} = {_value(v)}")
    return "\n".join(lines)


def _value(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, dict | list):
        return json.dumps(v, default=str)
    return str(v)
