"""``lmrl stats --by player``'s second table: one row per annotator (who played and labelled
what, :func:`data.annotators.annotator_figures`), readable in 100 columns."""

from __future__ import annotations

import argparse
from typing import Any

COLUMNS = (
    ("episodes", "episodes"),
    ("finished", "finished"),
    ("time played", "seconds"),
    ("success", "success_rate"),
    ("mean return", "mean_return"),
    ("think (s)", "think_ms"),
    ("refused", "attempts"),
    ("labels", "labels"),
)


def duration(seconds: float) -> str:
    """``42s``, ``3m05s``, ``2h07m``."""
    s = int(round(seconds))
    if s < 60:
        return f"{s}s"
    return f"{s // 60}m{s % 60:02d}s" if s < 3600 else f"{s // 3600}h{s % 3600 // 60:02d}m"


def _cell(key: str, v: Any) -> str:
    if v is None:
        return ""
    if key == "seconds":
        return duration(v)
    if key == "success_rate":
        return f"{v:.1%}"
    if key == "mean_return":
        return f"{v:.3f}"
    if key == "think_ms":
        return f"{v / 1000:.1f}"
    return str(v)


def print_annotators(store: Any, args: argparse.Namespace) -> None:
    """With ``--by player``: per annotator, episodes, time played, success rate and mean return
    (finished episodes), mean think time per move, refused inputs, labels given."""
    if getattr(args, "by", None) != "player":
        return
    from data.annotators import annotator_figures

    rows = annotator_figures(store, args.task)
    print(f"\nper annotator{f' ({args.task})' if args.task else ''}:")
    if not rows:
        print("  nobody has played or labelled yet")
        return
    table = [["player", *(t for t, _ in COLUMNS)]]
    table += [[r["player"], *(_cell(k, r[k]) for _, k in COLUMNS)] for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    for row in table:
        cells = [
            row[0].ljust(widths[0]),
            *(c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)),
        ]
        print(("  " + "  ".join(cells)).rstrip())
