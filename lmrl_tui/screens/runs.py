"""Training runs: their status and metrics (tailed from ``OUT/metrics.jsonl``), their checkpoints,
and the way to watch a checkpoint play or play against it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Log, Static

from data.runs import last_run_evaluation, recent_runs, run_checkpoints
from lmrl_tui.messages import NewEpisodeRequested
from lmrl_tui.screens.base import LmrlScreen
from lmrl_tui.workers import ErrorToast

TAIL_LINES = 200


def read_metrics_tail(path: Path, lines: int = TAIL_LINES) -> list[dict[str, Any]]:
    """The last ``lines`` JSON rows of a metrics file (unreadable lines are skipped)."""
    try:
        with path.open("rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - 256 * lines))
            raw = f.read().decode("utf-8", errors="replace").splitlines()
    except OSError:
        return []
    rows = []
    for line in raw[-lines:]:
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict):
            rows.append(row)
    return rows


def format_metric_row(row: dict[str, Any]) -> str:
    parts = []
    for k, v in row.items():
        if isinstance(v, float):
            parts.append(f"{k}={v:.4g}")
        elif isinstance(v, int | str | bool) or v is None:
            parts.append(f"{k}={v}")
    return " ".join(parts)


class RunsScreen(LmrlScreen, Screen[None]):
    """The training runs in the store; the one under the cursor with its checkpoints and metrics."""

    WORKER_ERRORS = {"runs": ErrorToast("Could not read the training runs", timeout=30)}

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="runs.back"),
        Binding("r", "reload", "Reload", id="runs.reload"),
        Binding("w", "watch", "Watch / play against", id="runs.watch"),
    ]

    class RunsLoaded(Message, bubble=False):
        """The most recent runs, newest first (rows of the ``runs`` table)."""

        def __init__(self, rows: list[dict[str, Any]]) -> None:
            super().__init__()
            self.rows = rows

    def __init__(self) -> None:
        super().__init__()
        self.run: dict[str, Any] | None = None
        self.checkpoints: list[dict[str, Any]] = []

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal():
            yield DataTable(id="runs", cursor_type="row", zebra_stripes=True)
            with Vertical(id="right"):
                yield Static("No training runs yet: `lmrl train bc --task maze-fo --out runs/bc`", id="run-info")
                yield DataTable(id="checkpoints", cursor_type="row")
                yield Log(id="metrics")
        yield Footer()

    def on_mount(self) -> None:
        self.title = "Training runs"
        self.query_one("#runs", DataTable).add_columns("id", "kind", "algo", "task", "status", "started")
        self.query_one("#checkpoints", DataTable).add_columns("checkpoint", "step", "created")
        self.query_one("#runs", DataTable).focus()
        self.action_reload()
        self.set_interval(2.0, self._tail)

    def action_reload(self) -> None:
        self._load()

    @work(thread=True, exclusive=True, group="runs", exit_on_error=False)
    def _load(self) -> None:
        store = self.lmrl_app.store
        rows = recent_runs(store, 200)
        self.post_message(self.RunsLoaded(rows))

    def on_runs_screen_runs_loaded(self, message: RunsScreen.RunsLoaded) -> None:
        self._fill(message.rows)

    def _fill(self, rows: list[dict[str, Any]]) -> None:
        table = self.query_one("#runs", DataTable)
        table.clear()
        self._rows = {str(r["id"]): r for r in rows}
        for r in rows:
            table.add_row(str(r["id"]), r["kind"], r["algo"] or "", r["task"] or "", r["status"],
                          (r["started_at"] or "")[:19], key=str(r["id"]))  # fmt: skip

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table.id != "runs" or event.row_key.value is None:
            return
        self.run = self._rows.get(event.row_key.value)
        self._show_run()

    def _show_run(self) -> None:
        run = self.run
        if run is None:
            return
        store = self.lmrl_app.store
        self.checkpoints = run_checkpoints(store, run["id"])
        e = last_run_evaluation(store, run["id"])
        last_eval = ""
        if e is not None:
            norm = "" if e["normalised_lmrl"] is None else f", normalised {e['normalised_lmrl']:.1f} (LMRL)"
            last_eval = f"\nlast evaluation: mean return {e['mean_return']:.3f} over {e['episodes']} episodes{norm}"
        self.query_one("#run-info", Static).update(
            f"[b]Run {run['id']}[/b] · {run['kind']} {run['algo'] or ''} on {run['task'] or '?'} · {run['status']}\n"
            f"output: {run['out_dir'] or '-'}{last_eval}"
        )
        table = self.query_one("#checkpoints", DataTable)
        table.clear()
        for c in self.checkpoints:
            table.add_row(c["path"], str(c["step"]), (c["created_at"] or "")[:19], key=str(c["id"]))
        self._tail()

    def _tail(self) -> None:
        run = self.run
        if run is None or not run.get("out_dir"):
            return
        rows = read_metrics_tail(Path(run["out_dir"]) / "metrics.jsonl", 60)
        log = self.query_one("#metrics", Log)
        log.clear()
        if not rows:
            log.write_line("no metrics yet")
        for row in rows:
            log.write_line(format_metric_row(row))
        log.scroll_end(animate=False)

    def _checkpoint_path(self) -> str | None:
        table = self.query_one("#checkpoints", DataTable)
        if table.row_count and table.has_focus:
            return str(table.get_row_at(table.cursor_row)[0])
        if self.checkpoints:
            return str(self.checkpoints[0]["path"])
        return None

    def action_watch(self) -> None:
        path = self._checkpoint_path()
        if self.run is None or path is None or not self.run.get("task"):
            self.notify("This run has no checkpoint yet.", severity="warning")
            return
        self.post_message(NewEpisodeRequested(self.run["task"], checkpoint=path))
