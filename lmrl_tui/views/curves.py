"""A run's learning curves, drawn with textual-plotext from its ``metrics.jsonl`` as it grows.

:class:`MetricsTail` reads only the bytes written since the last read (a line still being
written waits for its newline); :class:`CurveData` keeps the points of each curve; :class:`Curves`
draws them: the training loss, the return (an online round's mean return, or an evaluation's) and
the normalised score, each against the step (or round).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from textual.app import ComposeResult
from textual.containers import Vertical
from textual_plotext import PlotextPlot

CURVES = (("loss", "training loss"), ("return", "mean return"), ("normalised", "normalised score"))
"""The curves: (key, title)."""


class MetricsTail:
    """Incremental reader of a JSON-lines file: :meth:`read_new` returns the rows appended since
    the last call (a file that shrank, rewritten by a resumed run, is read again from its start)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self._partial = b""
        self._lock = threading.Lock()  # two polls overlapping on a busy machine read in turn

    def read_new(self, max_bytes: int = 4 << 20) -> tuple[list[dict[str, Any]], bool]:
        """(new rows, whether the file was read again from its start)."""
        with self._lock:
            return self._read_new(max_bytes)

    def _read_new(self, max_bytes: int) -> tuple[list[dict[str, Any]], bool]:
        restarted = False
        try:
            with self.path.open("rb") as f:
                f.seek(0, 2)
                size = f.tell()
                if size < self.offset:
                    self.offset, self._partial, restarted = 0, b"", True
                f.seek(self.offset)
                data = f.read(max_bytes)
        except OSError:
            return [], False
        self.offset += len(data)
        data = self._partial + data
        lines = data.split(b"\n")
        self._partial = lines.pop()  # b"" after a complete last line
        rows = []
        for line in lines:
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if isinstance(row, dict):
                rows.append(row)
        return rows, restarted


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if value == value else None  # NaN is no point


def row_points(row: dict[str, Any]) -> dict[str, tuple[float, float]]:
    """The points a metrics row adds: ``{curve key: (x, y)}``. x is the row's step (offline) or
    round (online); a train row gives the loss (and an online round's mean return), an eval row
    its mean return and normalised score (LMRL's constants, else the store's)."""
    x = _number(row.get("step", row.get("round")))
    if x is None:
        return {}
    out: dict[str, tuple[float, float]] = {}
    ys = {
        "loss": row.get("loss") if row.get("kind") == "train" else None,
        "return": row.get("mean_return"),
        "normalised": row.get(
            "normalised_lmrl", row.get("normalised", row.get("normalised_store"))
        ),
    }
    for key, value in ys.items():
        y = _number(value)
        if y is not None:
            out[key] = (x, y)
    return out


@dataclass
class CurveData:
    """The points of each curve (``xs[key]``, ``ys[key]``)."""

    xs: dict[str, list[float]] = field(default_factory=lambda: {k: [] for k, _ in CURVES})
    ys: dict[str, list[float]] = field(default_factory=lambda: {k: [] for k, _ in CURVES})

    def add(self, rows: list[dict[str, Any]]) -> set[str]:
        """Add the rows' points; the keys of the curves that changed."""
        changed = set()
        for row in rows:
            for key, (x, y) in row_points(row).items():
                self.xs[key].append(x)
                self.ys[key].append(y)
                changed.add(key)
        return changed

    def clear(self) -> None:
        for key, _ in CURVES:
            self.xs[key].clear()
            self.ys[key].clear()


class Curves(Vertical):
    """One plot per curve, redrawn when :meth:`add` brings new points."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.data = CurveData()
        self.redraws = 0
        """How many times the plots were drawn again (for the tests)."""

    def compose(self) -> ComposeResult:
        for key, _ in CURVES:
            yield PlotextPlot(id=f"curve-{key}", classes="curve")

    def on_mount(self) -> None:
        self._draw({k for k, _ in CURVES})

    def reset(self) -> None:
        """Forget every point (another run was selected)."""
        self.data.clear()
        if self.is_mounted:
            self._draw({k for k, _ in CURVES})

    def add(self, rows: list[dict[str, Any]]) -> None:
        changed = self.data.add(rows)
        if changed and self.is_mounted:
            self._draw(changed)

    def _draw(self, keys: set[str]) -> None:
        for key, title in CURVES:
            if key not in keys:
                continue
            plot = self.query_one(f"#curve-{key}", PlotextPlot)
            plt = plot.plt
            plt.clear_data()
            plt.clear_figure()
            xs, ys = self.data.xs[key], self.data.ys[key]
            plt.title(f"{title} ({len(xs)} points)" if xs else f"{title}: no points yet")
            if xs:
                plt.plot(xs, ys, marker="braille")
            plot.refresh()
        self.redraws += 1
