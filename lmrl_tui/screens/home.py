"""The home screen: every registered task, with what the store holds for it."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import DataTable, Header, Static

import envs
from data.stats import source_counts
from lmrl_tui import task_list
from lmrl_tui.messages import (
    AboutRequested,
    AnnotatorsRequested,
    BrowseRequested,
    NewEpisodeRequested,
    RunsRequested,
    SessionNoteRequested,
)
from lmrl_tui.screens.base import LmrlScreen
from lmrl_tui.screens.footer import Footer
from lmrl_tui.task_list import TaskSummary
from lmrl_tui.workers import ErrorToast

EPISODES = "Finished / all"
SWEEP_AFTER = 2.0
"""Seconds on the home screen after an episode before its frozen garbage is freed (the app's
:meth:`~lmrl_tui.app.LmrlApp.sweep_frozen`)."""
FIRST_STATS_WAIT = 0.02
"""Seconds the home screen's mount waits for the store's counts, so that the first frame has them."""


@dataclass
class TaskCounts:
    """What the store holds for one task: episodes by status, finished ones by source."""

    total: int = 0
    finished: int = 0
    abandoned: int = 0
    in_progress: int = 0
    by_source: dict[str, int] = field(default_factory=dict)
    """Finished episodes per source (human, scripted, agent)."""
    _return_sum: float = 0.0
    _success_sum: float = 0.0
    _success_n: int = 0

    @property
    def mean_return(self) -> float | None:
        return self._return_sum / self.finished if self.finished else None

    @property
    def success_rate(self) -> float | None:
        return self._success_sum / self._success_n if self._success_n else None

    def describe(self) -> str:
        if not self.total:
            return "No episodes stored yet."
        sources = ", ".join(f"{src} {n}" for src, n in sorted(self.by_source.items()) if n)
        parts = [f"{self.finished} finished" + (f" ({sources})" if sources else "")]
        parts += [f"{self.abandoned} abandoned"] if self.abandoned else []
        parts += [f"{self.in_progress} in progress"] if self.in_progress else []
        episodes = "1 episode" if self.total == 1 else f"{self.total} episodes"
        return f"Stored: {episodes} — {', '.join(parts)}. Mean return and success: finished ones."


def count_episodes(rows: list[dict[str, Any]]) -> dict[str, TaskCounts]:
    """Per task, from :meth:`data.store.Store.stats` (one row per task and source)."""
    out: dict[str, TaskCounts] = {}
    for r in rows:
        c = out.setdefault(r["task"], TaskCounts())
        finished = int(r["finished"] or 0)
        c.total += int(r["episodes"] or 0)
        c.finished += finished
        c.abandoned += int(r["abandoned"] or 0)
        c.in_progress += int(r["in_progress"] or 0)
        c.by_source[r["source"]] = c.by_source.get(r["source"], 0) + finished
        if finished and r["mean_return"] is not None:
            c._return_sum += r["mean_return"] * finished
        if finished and r["success_rate"] is not None:
            c._success_sum += r["success_rate"] * finished
            c._success_n += finished
    return out


class TaskTable(DataTable[str]):
    """The task list: enter plays the highlighted task, in order behind the arrows typed before
    it (the key bar shows it here, where the focus is)."""

    BINDINGS = [Binding("enter", "select_cursor", "Play / watch", id="home.play", show=True)]


class HomeScreen(LmrlScreen, Screen[None]):
    """Every registered task, with what the store holds for it; enter opens the new-episode dialog."""

    BINDINGS = [
        # Not a priority binding: enter reaches the task table in order behind the arrows typed
        # before it (a priority enter ran first and opened the row the cursor had left); the
        # table's own enter (TaskTable) plays the highlighted task, this one where else the focus is.
        Binding("enter", "play", "Play / watch", id="home.play.screen", show=True),
        Binding("b", "browse", "Episodes", id="home.browse"),
        Binding("t", "runs", "Training runs", id="home.runs"),
        Binding("l", "ladder", "Ladder", id="home.ladder"),
        Binding("a", "annotators", "Annotators", id="home.annotators"),
        Binding("n", "session_note", "Session note", id="home.note"),
        Binding("u", "unfinished", "Unfinished", id="home.unfinished"),
        Binding("question_mark,f1", "help", "Help", id="home.help"),
        Binding("r", "refresh_stats", "Refresh", id="home.refresh"),
    ]

    WORKER_ERRORS = {
        "home-tasks": ErrorToast("Could not load the tasks", timeout=30),
        "home-stats": ErrorToast("Could not read the database", timeout=30),
    }

    class TasksLoaded(Message, bubble=False):
        """Every task (from the worker that imports the task modules)."""

        def __init__(self, tasks: list[TaskSummary]) -> None:
            super().__init__()
            self.tasks = tasks

    class StatsLoaded(Message, bubble=False):
        """Per task: what the store holds for it."""

        def __init__(self, stats: dict[str, TaskCounts], from_worker: bool = True) -> None:
            super().__init__()
            self.stats = stats
            self.from_worker = from_worker
            """Sent by :meth:`_load_stats` (False: by the first read of the start)."""

    def __init__(self) -> None:
        super().__init__()
        self.tasks_ready = False
        self.counts: dict[str, TaskCounts] = {}
        self._counted = False
        """Whether ``counts`` were read (an empty store has none)."""
        self.tasks: dict[str, TaskSummary] = {}
        """The tasks in the table, by id."""
        self._detail_task: str | None = None
        self._stats_reading = False
        """A :meth:`_load_stats` worker is running."""
        self._stats_again = False
        """A refresh was asked for while one ran: read once more when it ends."""
        self._sweep_timer: Timer | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical():
            yield Static(
                "[b]Pick a task[/b] and press [b]enter[/b] to play it yourself or watch an agent. "
                "Every step is saved to the database.",
                id="intro",
            )
            yield TaskTable(id="tasks", cursor_type="row", zebra_stripes=True)
            yield Static("", id="detail")
        yield Footer()

    async def on_mount(self) -> None:
        self.title = "lmrl-tui"
        self.sub_title = str(self.lmrl_app.db_path)
        table = self.query_one("#tasks", DataTable)
        for label in ("Task", "Title", "Sides", EPISODES, "Mean return", "Success"):
            table.add_column(label, key=label)
        table.focus()
        # The task list of the last start, when the task modules have not changed since, else the
        # one shipped with the package: the table fills at once (the worker below still checks it
        # against the tasks themselves).
        cached = task_list.load_cached() or task_list.load_shipped()
        if cached:
            stats = await self._first_stats()
            if isinstance(stats, dict):
                self.counts, self._counted = stats, True
            self._fill_tasks(cached, load_stats=stats is None)
            # After the first frame: the imports would hold the GIL while it is drawn.
            self.call_after_refresh(self._load_tasks, cached)
        else:
            table.loading = True
            self._load_tasks(cached)

    @work(thread=True, exclusive=True, group="home-tasks", exit_on_error=False)
    def _load_tasks(self, cached: list[TaskSummary] | None) -> None:
        # Importing every task module (python-chess, knowledge bases) takes a moment: do it off
        # the UI thread so the screen shows at once.
        tasks = task_list.all_summaries()
        if tasks != cached:
            task_list.save(tasks)
        self.post_message(self.TasksLoaded(tasks))

    def worker_failed(self, group: str, error: BaseException) -> None:
        # A broken task module (already reported): list the tasks that did register.
        if group == "home-tasks":
            self._fill_tasks([TaskSummary.of(envs.spec(t)) for t in envs.registered_ids()])
        elif group == "home-stats":
            self._stats_read_ended()

    def on_home_screen_tasks_loaded(self, message: HomeScreen.TasksLoaded) -> None:
        self._fill_tasks(message.tasks)

    async def _first_stats(self) -> dict[str, TaskCounts] | str | None:
        """The store's counts if it gives them within :data:`FIRST_STATS_WAIT`, so that the first
        frame shows them: else the whole table is drawn twice before the app is ready (~40 ms of
        the start here). ``"later"``: still reading (they come as StatsLoaded); None: the read
        failed (the worker reads again and reports it)."""
        read = asyncio.ensure_future(asyncio.to_thread(self._read_stats))
        try:
            return await asyncio.wait_for(asyncio.shield(read), FIRST_STATS_WAIT)
        except TimeoutError:
            read.add_done_callback(self._late_stats)
            return "later"
        except Exception:
            return None

    def _late_stats(self, read: asyncio.Future) -> None:
        if read.cancelled() or read.exception() is not None:
            self.action_refresh_stats()  # the worker reads again and shows what went wrong
        else:
            self.post_message(self.StatsLoaded(read.result(), from_worker=False))

    def _fill_tasks(self, tasks: list[TaskSummary], load_stats: bool = True) -> None:
        if self.tasks_ready and list(self.tasks.values()) == tasks:
            return  # the list shown (the last start's) is right
        table = self.query_one("#tasks", DataTable)
        keep = self._selected_task()
        table.clear()
        self.tasks = {t.id: t for t in tasks}
        for t in tasks:
            table.add_row(t.id, t.title, " vs ".join(t.roles), *self._count_cells(t.id), key=t.id)
        table.loading = False
        if keep in self.tasks:
            table.move_cursor(row=table.get_row_index(keep))
        self.tasks_ready = True
        if tasks:
            self._show_detail(keep if keep in self.tasks else tasks[0].id)
        if load_stats:
            self.action_refresh_stats()

    def _count_cells(self, task_id: str) -> tuple[str, str, str]:
        """The table's episodes, mean return and success of a task ("…" before the counts come)."""
        if not self._counted:
            return ("…", "", "")
        c = self.counts.get(task_id, TaskCounts())
        mean, succ = c.mean_return, c.success_rate
        return (
            f"{c.finished} / {c.total}",
            "" if mean is None else f"{mean:.2f}",
            "" if succ is None else f"{succ:.0%}",
        )

    def on_screen_resume(self) -> None:
        self.action_refresh_stats()
        # back from an episode: free what it left once the person has been here a while (a
        # dialog or another screen on top stops the wait; coming back starts it again)
        self._sweep_timer = self.set_timer(SWEEP_AFTER, self.lmrl_app.sweep_frozen)

    def on_screen_suspend(self) -> None:
        if self._sweep_timer is not None:
            self._sweep_timer.stop()
            self._sweep_timer = None

    def action_refresh_stats(self) -> None:
        """Read the counts again. While a read runs, one more follows it, so that the table ends
        up showing the store as it is after the last request. No read is ever cancelled: the
        reads are not an exclusive group (a cancel can land after the read posted its counts,
        while the worker is still ending, and fail a ``wait`` on it)."""
        if not self.tasks_ready:
            return
        if self._stats_reading:
            self._stats_again = True
            return
        self._stats_reading = True
        self._load_stats()

    def _stats_read_ended(self) -> None:
        self._stats_reading = False
        if self._stats_again:
            self._stats_again = False
            self.action_refresh_stats()

    @work(thread=True, group="home-stats", exit_on_error=False)
    def _load_stats(self) -> None:
        self.post_message(self.StatsLoaded(self._read_stats()))

    def _read_stats(self) -> dict[str, TaskCounts]:
        """Per task, what the store holds (a query: run it off the UI thread)."""
        return count_episodes(source_counts(self.lmrl_app.store))

    def on_home_screen_stats_loaded(self, message: HomeScreen.StatsLoaded) -> None:
        self._fill_stats(message.stats)
        if message.from_worker:
            self._stats_read_ended()

    def _fill_stats(self, stats: dict[str, TaskCounts]) -> None:
        if self._counted and stats == self.counts:
            return  # the table shows them already (a redraw of every cell costs ~40 ms here)
        self.counts, self._counted = stats, True
        table = self.query_one("#tasks", DataTable)
        for task_id in self.tasks:
            for column, text in zip(
                (EPISODES, "Mean return", "Success"), self._count_cells(task_id), strict=True
            ):
                table.update_cell(task_id, column, text)
        self._show_detail(self._detail_task)

    def _show_detail(self, task_id: str | None) -> None:
        if task_id is None:
            return
        spec = self.tasks.get(task_id)
        if spec is None:
            return
        self._detail_task = task_id
        counts = self.counts.get(task_id, TaskCounts()).describe() if self.counts else ""
        self.query_one("#detail", Static).update(
            f"[b]{spec.title}[/b] — {spec.summary}\nUp to {spec.max_turns} turns; "
            f"rewards in [{spec.reward_range[0]:g}, {spec.reward_range[1]:g}].\n{counts}"
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

    def action_ladder(self) -> None:
        from lmrl_tui.screens.ladder import LadderScreen

        self.app.push_screen(LadderScreen(self._selected_task()))

    def action_annotators(self) -> None:
        self.post_message(AnnotatorsRequested())

    def action_session_note(self) -> None:
        self.post_message(SessionNoteRequested())

    def action_unfinished(self) -> None:
        """Offer the episodes kept to resume (or left in progress by an app that stopped)."""
        self.lmrl_app.action_unfinished()

    def action_help(self) -> None:
        self.post_message(AboutRequested())
