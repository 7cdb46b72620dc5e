"""Browse the store: recent episodes, every step of the one under the cursor, and per-turn labels."""

from __future__ import annotations

from typing import Any

from rich.markup import escape
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Header, Input, Select, Static

import envs
from data.annotators import session_note
from lmrl_tui.screens.base import LmrlScreen
from lmrl_tui.screens.footer import Footer
from lmrl_tui.workers import ErrorToast

ALL = "all"


def _short(text: str | None, n: int = 70) -> str:
    if text is None:
        return ""
    flat = text.replace("\n", "⏎")
    return flat if len(flat) <= n else flat[: n - 1] + "…"


class LabelDialog(LmrlScreen, ModalScreen[str | None]):
    """Type a label (or a short note) for a step."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="label.cancel")]

    def __init__(self, where: str) -> None:
        super().__init__()
        self.where = where

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(f"Label {self.where} (enter to save, escape to cancel)")
            yield Input(placeholder="e.g. good, bad, typo, note: …", id="label")

    @on(Input.Submitted)
    def _save(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        self.dismiss(None)


class BrowseScreen(LmrlScreen, Screen[None]):
    """Recent episodes (optionally of one task), the steps of the one under the cursor, labels."""

    WORKER_ERRORS = {"browse": ErrorToast("Could not read the episodes", timeout=30)}

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="browse.back"),
        Binding("r", "reload", "Reload", id="browse.reload"),
        Binding("l", "label", "Label step", id="browse.label"),
        Binding("g", "quick_label('good')", "Good", id="browse.good"),
        Binding("x", "quick_label('bad')", "Bad", id="browse.bad"),
        Binding("m", "mark", "Mark", id="browse.mark"),
        Binding("v", "side_by_side", "Side by side", id="browse.side_by_side"),
    ]
    LIMIT = 500

    class EpisodesLoaded(Message, bubble=False):
        """The most recent episodes, newest first (as ``Store.recent_episodes`` gives them)."""

        def __init__(self, rows: list[dict[str, Any]]) -> None:
            super().__init__()
            self.rows = rows

    def __init__(self) -> None:
        super().__init__()
        self.episode_id: int | None = None
        self._shown: int | None = None
        self.marked: int | None = None
        """The episode marked to replay side by side with the next one chosen."""

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="filters"):
            yield Select([("All tasks", ALL)], value=ALL, allow_blank=False, id="task-filter")
        with Horizontal():
            yield DataTable(id="episodes", cursor_type="row", zebra_stripes=True)
            with Vertical(id="right"):
                yield Static("", id="episode-info")
                yield DataTable(id="steps", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        self.title = "Episodes"
        self.query_one("#task-filter", Select).set_options(
            [("All tasks", ALL)] + [(t, t) for t in envs.ids()]
        )
        table = self.query_one("#episodes", DataTable)
        # What a person scans for first comes first: in 120 columns the agent's long names and the
        # step's action text would push status, return and labels off the screen.
        table.add_columns("id", "task", "status", "steps", "return", "player", "source", "agent")
        self.query_one("#steps", DataTable).add_columns(
            "#", "reward", "labels", "action", "typed", "ms"
        )
        table.focus()
        self.action_reload()

    @on(Select.Changed, "#task-filter")
    def action_reload(self) -> None:
        value = self.query_one("#task-filter", Select).value
        self._load(None if value in (ALL, Select.BLANK) else str(value))

    @work(thread=True, exclusive=True, group="browse", exit_on_error=False)
    def _load(self, task: str | None) -> None:
        rows = self.lmrl_app.store.recent_episodes(self.LIMIT, task=task)
        self.post_message(self.EpisodesLoaded(rows))

    def on_browse_screen_episodes_loaded(self, message: BrowseScreen.EpisodesLoaded) -> None:
        self._fill(message.rows)

    def _fill(self, rows: list[dict[str, Any]]) -> None:
        table = self.query_one("#episodes", DataTable)
        table.clear()
        for r in rows:
            table.add_row(
                str(r["id"]),
                r["task"],
                r["status"],
                str(r["n_steps"]),
                f"{r['return']:g}",
                r["player"] or "",
                r["source"],
                f"{r['agent_kind']}:{r['agent_name']}",
                key=str(r["id"]),
            )
        self.sub_title = f"{len(rows)} most recent"

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table.id == "episodes" and event.row_key.value is not None:
            self.episode_id = int(event.row_key.value)
            self._show_steps(self.episode_id)

    def _show_steps(self, episode_id: int) -> None:
        store = self.lmrl_app.store
        ep = store.episode(episode_id)
        table = self.query_one("#steps", DataTable)
        keep_row = table.cursor_row if episode_id == self._shown else 0
        self._shown = episode_id
        table.clear()
        if ep is None:
            return
        labels: dict[int | None, list[str]] = {}
        for lab in store.labels(episode_id):
            labels.setdefault(lab["step_idx"], []).append(lab["label"])
        partner = f" vs {ep['partner_kind']}:{ep['partner_name']}" if ep["partner_kind"] else ""
        self.query_one("#episode-info", Static).update(
            f"[b]Episode {episode_id}[/b] · {ep['task']} · seed {ep['seed']} · {ep['status']}\n"
            f"{ep['agent_kind']}:{ep['agent_name']}{partner} · player {ep['player'] or '-'} · "
            f"return {ep['return']:g}\nfirst observation: {_short(ep['first_observation'], 200)}"
            + (
                f"\nsession note: {escape(_short(note, 200))}"
                if (note := session_note(ep["meta"]))
                else ""
            )
        )
        for s in store.steps(episode_id):
            table.add_row(
                str(s["idx"]),
                f"{s['reward']:g}",
                _short(", ".join(labels.get(s["idx"], [])), 24),
                _short(s["action"], 40),
                _short(s["typed"], 16),
                "" if s["think_ms"] is None else str(s["think_ms"]),
                key=str(s["idx"]),
            )
        table.move_cursor(row=min(keep_row, max(table.row_count - 1, 0)))

    def _current_step(self) -> int | None:
        steps = self.query_one("#steps", DataTable)
        if self.episode_id is None or steps.row_count == 0:
            return None
        return int(steps.coordinate_to_cell_key(steps.cursor_coordinate).row_key.value)

    def action_label(self) -> None:
        idx = self._current_step()
        if idx is None:
            self.notify("Pick an episode with steps first.", severity="warning")
            return
        eid = self.episode_id
        self.app.push_screen(
            LabelDialog(f"step {idx} of episode {eid}"),
            lambda text: self._save_label(eid, idx, text),
        )

    def action_quick_label(self, label: str) -> None:
        idx = self._current_step()
        if idx is not None:
            self._save_label(self.episode_id, idx, label)

    def _save_label(self, episode_id: int | None, idx: int, text: str | None) -> None:
        if not text or episode_id is None:
            return
        app = self.lmrl_app
        app.store.add_label(episode_id, text, step_idx=idx, author=app.player)
        self.notify(f"Labelled step {idx}: {text}")
        self._show_steps(episode_id)

    # -- side by side -----------------------------------------------------------------------------
    def action_mark(self) -> None:
        """Mark (or unmark) the episode under the cursor to replay it next to another."""
        if self.episode_id is None:
            return
        self.marked = None if self.marked == self.episode_id else self.episode_id
        self.notify(
            f"Marked episode {self.marked}: now pick another and press v."
            if self.marked
            else "Unmarked."
        )

    def action_side_by_side(self) -> None:
        """Replay the marked episode next to the one under the cursor; without a mark (or on the
        marked one itself), pick the second from the episodes of the same task."""
        from lmrl_tui.screens.side_by_side import PickEpisodeDialog

        first = self.episode_id
        if first is None:
            self.notify("Pick an episode first.", severity="warning")
            return
        if self.marked is not None and self.marked != first:
            self.open_side_by_side(self.marked, first)
            return
        self.app.push_screen(
            PickEpisodeDialog(first),
            lambda second: None if second is None else self.open_side_by_side(first, second),
        )

    def open_side_by_side(self, left: int, right: int) -> None:
        from lmrl_tui.screens.side_by_side import SideBySideScreen

        store = self.lmrl_app.store
        a, b = store.episode(left), store.episode(right)
        if a is None or b is None or a["task"] != b["task"]:
            self.notify("Side by side replays two episodes of the same task.", severity="warning")
            return
        self.marked = None
        self.app.push_screen(SideBySideScreen(left, right))
