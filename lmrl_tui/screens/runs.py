"""Training runs: the runs in the store and the ones started here, the selected one's status,
live learning curves (from ``OUT/metrics.jsonl`` as it grows), dataset composition and config,
metrics and checkpoints; start a run (``n``: :class:`~lmrl_tui.screens.train_form.TrainForm`),
stop one the app started (``s``), and watch a checkpoint play or play against it (``w``).

A worker polls every second: the runs' rows, whether each launched process still lives (a
``running`` row whose process is gone is shown ``dead``), and the bytes the selected run's
metrics file gained since the last poll.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, ScrollableContainer, Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Header, RichLog, Static, TabbedContent, TabPane

from data.runs import last_run_evaluation, mark_stopped, recent_runs, run_checkpoints
from lmrl_tui import runs_control
from lmrl_tui.messages import NewEpisodeRequested
from lmrl_tui.runs_control import Launch
from lmrl_tui.screens.base import LmrlScreen
from lmrl_tui.screens.footer import Footer
from lmrl_tui.screens.run_details import details_text, format_metric_row, shown_status, status_text
from lmrl_tui.screens.train_form import StopDialog, TrainForm
from lmrl_tui.views.curves import Curves, MetricsTail
from lmrl_tui.workers import ErrorToast

EMPTY = (
    "No training runs yet: press n to start one (or `lmrl train bc --task maze-fo --out runs/bc`)."
)
METRIC_LINES = 500
CHECKPOINT_COLUMNS = ("checkpoint", "step", "created")


@dataclass
class Polled:
    """What one poll found (posted by the worker)."""

    rows: list[dict[str, Any]]
    alive: dict[str, bool]
    """``out_dir`` -> whether its launched process lives (runs the app started only)."""
    key: str | None
    tail: MetricsTail | None = None
    new_metrics: list[dict[str, Any]] = field(default_factory=list)
    restarted: bool = False
    log: list[str] = field(default_factory=list)
    checkpoints: list[dict[str, Any]] = field(default_factory=list)
    last_eval: dict[str, Any] | None = None


class RunsScreen(LmrlScreen, Screen[None]):
    """The training runs in the store; the one under the cursor with its curves and details."""

    WORKER_ERRORS = {
        "runs": ErrorToast("Could not read the training runs", timeout=30),
        "stop": ErrorToast("Could not stop the run", timeout=30),
    }
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="runs.back"),
        Binding("n", "new_run", "New run", id="runs.new"),
        Binding("s", "stop", "Stop run", id="runs.stop"),
        Binding("w", "watch", "Watch / play against", id="runs.watch"),
        Binding("r", "reload", "Reload", id="runs.reload"),
    ]
    POLL_SECONDS = 1.0
    STOP_GRACE = 15.0
    """Seconds between SIGINT and SIGTERM when a run is stopped."""

    class PollDone(Message, bubble=False):
        def __init__(self, polled: Polled) -> None:
            super().__init__()
            self.polled = polled

    class Stopped(Message, bubble=False):
        def __init__(self, launch: Launch, how: str) -> None:
            super().__init__()
            self.launch = launch
            self.how = how

    def __init__(self) -> None:
        super().__init__()
        self.run: dict[str, Any] | None = None
        self.launch: Launch | None = None
        self.key: str | None = None
        self.checkpoints: list[dict[str, Any]] = []
        self.pending: dict[str, Launch] = {}
        """Processes started here whose run row is not written yet, by out_dir."""
        self.alive: dict[str, bool] = {}
        self.metric_lines: list[str] = []
        self.stopping: set[str] = set()
        self._rows: dict[str, dict[str, Any]] = {}
        self._tail: MetricsTail | None = None
        self._log: list[str] = []
        self.last_eval: dict[str, Any] | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal():
            with Vertical(id="left"):
                yield DataTable(id="runs", cursor_type="row", zebra_stripes=True)
                yield DataTable(id="checkpoints", cursor_type="row")
            with Vertical(id="right"):
                yield Static(EMPTY, id="run-info")
                with TabbedContent(id="tabs"):
                    with TabPane("Curves", id="tab-curves"):
                        yield Curves(id="curves")
                    with TabPane("Dataset & config", id="tab-details"):
                        with ScrollableContainer():
                            yield Static("", id="details", markup=False)
                    with TabPane("Metrics", id="tab-metrics"):
                        yield RichLog(
                            id="metrics",
                            wrap=True,
                            markup=False,
                            max_lines=METRIC_LINES,
                            min_width=20,
                        )
        yield Footer()

    def on_mount(self) -> None:
        self.title = "Training runs"
        self._columns = self.query_one("#runs", DataTable).add_columns(
            "id", "algo", "task", "status", "started"
        )
        self.query_one("#checkpoints", DataTable).add_columns(*CHECKPOINT_COLUMNS)
        self.query_one("#runs", DataTable).focus()
        self.action_reload()
        self.set_interval(self.POLL_SECONDS, self.action_reload)

    # -- polling ---------------------------------------------------------------------------------
    def action_reload(self) -> None:
        self._poll(self.key, self._tail, self.launch, dict(self.pending))

    @work(thread=True, exclusive=True, group="runs", exit_on_error=False)
    def _poll(
        self,
        key: str | None,
        tail: MetricsTail | None,
        launch: Launch | None,
        pending: dict[str, Launch],
    ) -> None:
        rows = recent_runs(self.lmrl_app.store, 200)
        alive: dict[str, bool] = {}
        for r in rows:
            if (
                r["status"] == "running"
                and (found := runs_control.read_launch(r["out_dir"])) is not None
            ):
                alive[str(r["out_dir"])] = runs_control.is_alive(found)
        for out, p in pending.items():
            alive[out] = runs_control.is_alive(p)
        new, restarted = tail.read_new() if tail is not None else ([], False)
        log = (
            runs_control.log_tail(launch)
            if launch is not None and not alive.get(launch.out_dir, True)
            else []
        )
        polled = Polled(rows, alive, key, tail, new, restarted, log)
        if key is not None and key.isdigit():
            polled.checkpoints = run_checkpoints(self.lmrl_app.store, int(key))
            polled.last_eval = last_run_evaluation(self.lmrl_app.store, int(key))
        self.post_message(self.PollDone(polled))

    def on_runs_screen_poll_done(self, message: PollDone) -> None:
        p = message.polled
        self.alive.update(p.alive)
        self._fill(p.rows)
        if p.tail is not None and p.tail is self._tail:  # (its key may have become the run's id)
            if p.restarted:
                self._reset_metrics()
            self._add_metrics(p.new_metrics)
        if p.key is not None and p.key == self.key:
            self._log = p.log
            if (p.checkpoints, p.last_eval) != (self.checkpoints, self.last_eval):
                self.checkpoints, self.last_eval = p.checkpoints, p.last_eval
                self._show_checkpoints()
            self._show_info()

    def _fill(self, rows: list[dict[str, Any]]) -> None:
        by_out = {str(r["out_dir"]): r for r in rows if r.get("out_dir")}
        for out in [o for o in self.pending if o in by_out]:
            launch = self.pending.pop(out)
            if self.key == f"launch-{launch.pid}":  # its row is here: select that instead
                self.key = str(by_out[out]["id"])
        entries = [
            (
                f"launch-{lp.pid}",
                "…",
                " ".join(lp.argv[6:7]),
                " ".join(lp.argv[8:9]),
                "starting" if self.alive.get(out, True) else "ended",
                lp.started_at[:19].replace("T", " "),
            )
            for out, lp in self.pending.items()
        ]
        self._rows = {str(r["id"]): r for r in rows}
        entries += [
            (
                str(r["id"]),
                str(r["id"]),
                r["algo"] or "",
                r["task"] or "",
                shown_status(r, self.alive.get(str(r["out_dir"]))),
                (r["started_at"] or "")[:19].replace("T", " "),
            )
            for r in rows
        ]
        table = self.query_one("#runs", DataTable)
        keys = [str(k.value) for k in table.rows]
        if keys == [e[0] for e in entries]:  # the same runs: update the cells that changed
            for key, *cells in entries:
                for col, (old, value) in enumerate(zip(table.get_row(key), cells, strict=True)):
                    if old != value:
                        table.update_cell(key, self._columns[col], value)
        else:
            table.clear()
            for key, *cells in entries:
                table.add_row(*cells, key=key)
            if self.key is not None and self.key in table.rows:
                table.move_cursor(row=table.get_row_index(self.key), animate=False)
        if not entries:
            self.query_one("#run-info", Static).update(EMPTY)
        elif self.key in self._rows and self._rows[self.key] != self.run:
            self.run = self._rows[self.key]
            self.query_one("#details", Static).update(details_text(self.run))

    # -- selection -------------------------------------------------------------------------------
    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        table = event.data_table
        if table.id != "runs" or not table.row_count:
            return
        # the cursor, not the event: a rebuilt table highlights row 0 before the cursor moves back
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        if key is not None:
            self._select(key)

    def _select(self, key: str) -> None:
        if key == self.key:
            return
        self.key = key
        self.run = self._rows.get(key)
        out = self.run["out_dir"] if self.run is not None else None
        self.launch = runs_control.read_launch(out)
        if self.run is None:
            self.launch = next(
                (lp for lp in self.pending.values() if f"launch-{lp.pid}" == key), None
            )
            out = self.launch.out_dir if self.launch else None
        self._tail = MetricsTail(Path(out) / "metrics.jsonl") if out else None
        self._log = []
        self._reset_metrics()
        self._show_run()
        self.action_reload()

    def _reset_metrics(self) -> None:
        self.query_one(Curves).reset()
        self.metric_lines = []
        self.query_one("#metrics", RichLog).clear()

    def _add_metrics(self, rows: list[dict[str, Any]]) -> None:
        if not rows:
            return
        self.query_one(Curves).add(rows)
        lines = [format_metric_row(r) for r in rows]
        self.metric_lines = (self.metric_lines + lines)[-METRIC_LINES:]
        self._write_metrics(lines)

    def _write_metrics(self, lines: list[str]) -> None:
        log = self.query_one("#metrics", RichLog)
        for line in lines:  # the row's head in bold, so that wrapped rows stay apart
            head, sep, rest = line.partition(": ")
            log.write(Text.assemble((head + sep, "bold"), rest) if sep else Text(line))

    def on_resize(self) -> None:
        """Wrap the metrics rows again at the new width (a RichLog keeps the lines it wrapped)."""
        self.query_one("#metrics", RichLog).clear()
        self._write_metrics(self.metric_lines)

    def _show_run(self) -> None:
        self.checkpoints, self.last_eval = [], None
        self._show_checkpoints()
        self.query_one("#details", Static).update(details_text(self.run))
        self._show_info()

    def _show_checkpoints(self) -> None:
        # The columns get their widths here, from the rows: a DataTable measures new rows on idle
        # but keeps the rows it drew before at the old widths ("run/checkp") until something else
        # redraws it.
        table = self.query_one("#checkpoints", DataTable)
        rows = [
            (c["path"], str(c["step"]), (c["created_at"] or "")[:19].replace("T", " "))
            for c in self.checkpoints
        ]
        table.clear(columns=True)
        for i, head in enumerate(CHECKPOINT_COLUMNS):
            table.add_column(head, width=max([len(head), *(len(r[i]) for r in rows)]))
        for c, row in zip(self.checkpoints, rows, strict=True):
            table.add_row(*row, key=str(c["id"]))

    def _show_info(self) -> None:
        run, launch = self.run, self.launch
        alive = self.alive.get(launch.out_dir) if launch is not None else None
        if alive is None and launch is not None:
            alive = runs_control.is_alive(launch)
        text = status_text(run, launch, alive, self.last_eval, self._log)
        if launch is not None and launch.out_dir in self.stopping:
            text += "\n[b]stopping…[/b]"
        self.query_one("#run-info", Static).update(text or EMPTY)

    # -- start, stop, watch ----------------------------------------------------------------------
    def action_new_run(self) -> None:
        task = self.run["task"] if self.run is not None else None
        self.app.push_screen(TrainForm(task), self._started)

    def _started(self, launch: Launch | None) -> None:
        if launch is None:
            return
        self.pending[launch.out_dir] = launch
        self.alive[launch.out_dir] = True
        self.notify(f"Training started (process {launch.pid}); log: {launch.log}", timeout=8)
        self._fill(list(self._rows.values()))
        table = self.query_one("#runs", DataTable)
        key = f"launch-{launch.pid}"
        if key in table.rows:
            table.move_cursor(row=table.get_row_index(key))
        self._select(key)

    def action_stop(self) -> None:
        launch = self.launch
        if launch is None:
            why = "it was started outside the app" if self.run is not None else "no run is selected"
            self.notify(f"Only runs started here can be stopped: {why}.", severity="warning")
            return
        if not runs_control.is_alive(launch):
            self.notify("Its process has already ended.", severity="warning")
            return
        what = f"run {self.run['id']}" if self.run is not None else "the new run"
        self.app.push_screen(
            StopDialog(
                f"Stop {what} (process {launch.pid})?\nIt gets SIGINT, then "
                f"SIGTERM after {self.STOP_GRACE:g} s; its last checkpoint stays."
            ),
            lambda yes: self._stop(launch) if yes else None,
        )

    @work(thread=True, group="stop", exit_on_error=False)
    def _stop(self, launch: Launch) -> None:
        self.stopping.add(launch.out_dir)
        try:
            how = runs_control.stop(launch, grace=self.STOP_GRACE)
        finally:
            self.stopping.discard(launch.out_dir)
        store = self.lmrl_app.store
        for r in recent_runs(store, 200):
            if r["out_dir"] == launch.out_dir:
                mark_stopped(store, r["id"], f"stopped from the app ({how})")
        self.post_message(self.Stopped(launch, how))

    def on_runs_screen_stopped(self, message: Stopped) -> None:
        self.alive[message.launch.out_dir] = False
        self.notify(f"Stopped process {message.launch.pid} ({message.how}).")
        self.action_reload()

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
