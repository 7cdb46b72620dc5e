"""A task's ladder: people and agents on one table, ranked by mean return (see :mod:`data.ladder`)."""

from __future__ import annotations

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Header, Select, Static

import envs
from data.ladder import SOURCES, LadderRow, ladder
from lmrl_tui.screens.base import LmrlScreen
from lmrl_tui.screens.footer import Footer
from lmrl_tui.workers import ErrorToast

ALL = "all"
COLUMNS = (
    "#",
    "Who",
    "Kind",
    "Source",
    "From",
    "Episodes",
    "Mean return",
    "95% CI",
    "LMRL score",
    "Success",
)


def _num(x: float | None, fmt: str = ".2f") -> str:
    return "" if x is None else format(x, fmt)


def row_cells(rank: int, r: LadderRow) -> tuple[str, ...]:
    """The table cells of one ladder row."""
    ci = "" if r.ci_low is None or r.ci_high is None else f"{r.ci_low:.2f} … {r.ci_high:.2f}"
    return (
        str(rank),
        r.who,
        r.kind,
        r.source,
        r.origin,
        str(r.episodes),
        _num(r.mean_return),
        ci,
        _num(r.lmrl_score, ".1f"),
        _num(r.success_rate, ".0%"),
    )


class LadderScreen(LmrlScreen, Screen[None]):
    """The ladder of one task (picked at the top), filterable by source."""

    WORKER_ERRORS = {"ladder": ErrorToast("Could not read the ladder", timeout=30)}

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="ladder.back"),
        Binding("r", "reload", "Reload", id="ladder.reload"),
    ]

    class LadderLoaded(Message, bubble=False):
        """The rows of the shown task's ladder, best first."""

        def __init__(self, task: str, rows: list[LadderRow]) -> None:
            super().__init__()
            self.task = task
            self.rows = rows

    def __init__(self, task_id: str | None = None) -> None:
        super().__init__()
        self.task_id = task_id
        self.rows: list[LadderRow] = []

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="ladder-filters"):
            yield Select([], allow_blank=True, prompt="Task", id="ladder-task")
            yield Select(
                [("All sources", ALL)] + [(s, s) for s in SOURCES],
                value=ALL,
                allow_blank=False,
                id="ladder-source",
            )
        yield DataTable(id="ladder", cursor_type="row", zebra_stripes=True)
        yield Static("", id="ladder-note")
        yield Footer()

    def on_mount(self) -> None:
        self.title = "Ladder"
        ids = envs.ids()
        if self.task_id not in ids:
            self.task_id = ids[0] if ids else None
        select = self.query_one("#ladder-task", Select)
        select.set_options([(t, t) for t in ids])
        if self.task_id is not None:
            select.value = self.task_id
        self.query_one("#ladder", DataTable).add_columns(*COLUMNS)
        self.query_one("#ladder", DataTable).focus()
        self.action_reload()

    @on(Select.Changed)
    def _filter_changed(self, event: Select.Changed) -> None:
        task = self.query_one("#ladder-task", Select).value
        if isinstance(task, str):
            self.task_id = task
        self.action_reload()

    def action_reload(self) -> None:
        if self.task_id is None:
            return
        source = self.query_one("#ladder-source", Select).value
        self._load(self.task_id, None if source in (ALL, Select.BLANK) else [str(source)])

    @work(thread=True, exclusive=True, group="ladder", exit_on_error=False)
    def _load(self, task: str, sources: list[str] | None) -> None:
        self.post_message(self.LadderLoaded(task, ladder(self.lmrl_app.store, task, sources)))

    def on_ladder_screen_ladder_loaded(self, message: LadderScreen.LadderLoaded) -> None:
        if message.task != self.task_id:
            return  # an answer for the task shown before
        self.rows = message.rows
        table = self.query_one("#ladder", DataTable)
        table.clear()
        for rank, r in enumerate(message.rows, 1):
            table.add_row(*row_cells(rank, r))
        self.sub_title = message.task
        norm = envs.spec(message.task).norm
        self.query_one("#ladder-note", Static).update(
            f"{len(message.rows)} on the ladder of {message.task}: finished episodes per player and "
            "agent, and stored evaluations (lmrl eval); 95% t-interval of the mean return. "
            + (
                "LMRL score: 0 = LMRL's minimum, 50 = its dataset average, 100 = its maximum."
                if norm
                else "LMRL publishes no normalisation constants for this task."
            )
        )
