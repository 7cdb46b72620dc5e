"""The home screen: every registered task, with what the store holds for it."""

from __future__ import annotations

from typing import Any

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static

import envs
from data.stats import task_summaries
from envs.core import TaskSpec
from lmrl_tui.messages import AboutRequested, BrowseRequested, NewEpisodeRequested, RunsRequested
from lmrl_tui.screens.base import LmrlScreen
from lmrl_tui.workers import ErrorToast


class HomeScreen(LmrlScreen, Screen[None]):
    """Every registered task, with what the store holds for it; enter opens the new-episode dialog."""

    BINDINGS = [
        Binding("enter", "play", "Play / watch", id="home.play", show=True, priority=False),
        Binding("b", "browse", "Episodes", id="home.browse"),
        Binding("t", "runs", "Training runs", id="home.runs"),
        Binding("question_mark,f1", "help", "Help", id="home.help"),
        Binding("r", "refresh_stats", "Refresh", id="home.refresh"),
    ]

    WORKER_ERRORS = {
        "home-tasks": ErrorToast("Could not load the tasks", timeout=30),
        "home-stats": ErrorToast("Could not read the database", timeout=30),
    }

    class TasksLoaded(Message, bubble=False):
        """The specs of every task (from the worker that imports the task modules)."""

        def __init__(self, specs: list[TaskSpec]) -> None:
            super().__init__()
            self.specs = specs

    class StatsLoaded(Message, bubble=False):
        """Per task: (finished episodes, mean return, success rate)."""

        def __init__(self, stats: dict[str, Any]) -> None:
            super().__init__()
            self.stats = stats

    def __init__(self) -> None:
        super().__init__()
        self.tasks_ready = False

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical():
            yield Static(
                "[b]Pick a task[/b] and press [b]enter[/b] to play it yourself or watch an agent. "
                "Every step is saved to the database.",
                id="intro",
            )
            yield DataTable(id="tasks", cursor_type="row", zebra_stripes=True)
            yield Static("", id="detail")
        yield Footer()

    def on_mount(self) -> None:
        self.title = "lmrl-tui"
        self.sub_title = str(self.lmrl_app.db_path)
        table = self.query_one("#tasks", DataTable)
        for label in ("Task", "Title", "Sides", "Episodes", "Mean return", "Success"):
            table.add_column(label, key=label)
        table.loading = True
        table.focus()
        self._load_tasks()

    @work(thread=True, exclusive=True, group="home-tasks", exit_on_error=False)
    def _load_tasks(self) -> None:
        # Importing every task module (python-chess, knowledge bases) takes a moment: do it off
        # the UI thread so the screen shows at once.
        self.post_message(self.TasksLoaded([envs.spec(task_id) for task_id in envs.ids()]))

    def worker_failed(self, group: str, error: BaseException) -> None:
        # A broken task module (already reported): list the tasks that did register.
        if group == "home-tasks":
            self._fill_tasks([envs.spec(t) for t in envs.registered_ids()])

    def on_home_screen_tasks_loaded(self, message: HomeScreen.TasksLoaded) -> None:
        self._fill_tasks(message.specs)

    def _fill_tasks(self, specs: list[TaskSpec]) -> None:
        table = self.query_one("#tasks", DataTable)
        for spec in specs:
            table.add_row(spec.id, spec.title, " vs ".join(spec.roles), "…", "", "", key=spec.id)
        table.loading = False
        self.tasks_ready = True
        if specs:
            self._show_detail(specs[0].id)
        self.action_refresh_stats()

    def on_screen_resume(self) -> None:
        self.action_refresh_stats()

    def action_refresh_stats(self) -> None:
        if self.tasks_ready:
            self._load_stats()

    @work(thread=True, exclusive=True, group="home-stats", exit_on_error=False)
    def _load_stats(self) -> None:
        store = self.lmrl_app.store
        self.post_message(self.StatsLoaded(task_summaries(store)))

    def on_home_screen_stats_loaded(self, message: HomeScreen.StatsLoaded) -> None:
        self._fill_stats(message.stats)

    def _fill_stats(self, stats: dict[str, Any]) -> None:
        table = self.query_one("#tasks", DataTable)
        for task_id in envs.ids():
            n, mean, succ = stats.get(task_id, (0, None, None))
            table.update_cell(task_id, "Episodes", str(n))
            table.update_cell(task_id, "Mean return", "" if mean is None else f"{mean:.2f}")
            table.update_cell(task_id, "Success", "" if succ is None else f"{succ:.0%}")

    def _show_detail(self, task_id: str | None) -> None:
        if task_id is None:
            return
        spec = envs.spec(task_id)
        self.query_one("#detail", Static).update(
            f"[b]{spec.title}[/b] — {spec.summary}\nUp to {spec.max_turns} turns; "
            f"rewards in [{spec.reward_range[0]:g}, {spec.reward_range[1]:g}]."
        )

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_detail(event.row_key.value)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value is not None:
            self.post_message(NewEpisodeRequested(event.row_key.value))

    def _selected_task(self) -> str | None:
        table = self.query_one("#tasks", DataTable)
        if table.row_count == 0:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key
        return key.value

    def action_play(self) -> None:
        task_id = self._selected_task()
        if task_id:
            self.post_message(NewEpisodeRequested(task_id))

    def action_browse(self) -> None:
        self.post_message(BrowseRequested())

    def action_runs(self) -> None:
        self.post_message(RunsRequested())

    def action_help(self) -> None:
        self.post_message(AboutRequested())
