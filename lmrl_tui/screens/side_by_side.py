"""Two stored episodes of the same task replayed next to each other, stepping together (e.g. a
person and an agent from the same seed, or two checkpoints); opened from Browse.

Each pane draws the task's own view at the shown step (the episode replayed from its seed, see
:mod:`data.replay`) and says the step's action, reward and the return so far.
"""

from __future__ import annotations

from typing import Any

from rich.markup import escape
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Header, Static

import envs
from data.ladder import episode_pairs
from data.replay import EpisodeReplay, load_replay
from envs.core import TaskSpec
from lmrl_tui.screens.base import LmrlScreen
from lmrl_tui.screens.footer import Footer
from lmrl_tui.views import view_class
from lmrl_tui.views.base import TaskView
from lmrl_tui.views.text import TextView
from lmrl_tui.workers import ErrorToast

SIDES = ("left", "right")


def pane_status(replay: EpisodeReplay, idx: int) -> str:
    """What a pane says under its view at step ``idx``: the step, its action and reward, the
    return so far (and that the episode has ended when the other one goes on)."""
    f = replay.frame(idx)
    head = f"step {f.idx}/{replay.last}"
    if idx > replay.last:
        head += " (ended)"
    action = "start" if f.action is None else "action: " + f.action.strip().replace("\n", "⏎")
    return f"{head} · {action} · reward {f.reward:g} · return so far {f.return_so_far:g}"


def episode_title(ep: dict[str, Any]) -> str:
    who = ep["player"] if ep["agent_kind"] == "human" else f"{ep['agent_kind']}:{ep['agent_name']}"
    return f"Episode {ep['id']} · {who or '-'} · seed {ep['seed']} · {ep['source']} · return {ep['return']:g}"


class SideBySideScreen(LmrlScreen, Screen[None]):
    """Episodes ``left_id`` and ``right_id`` (same task), one step index for both."""

    WORKER_ERRORS = {"side-by-side": ErrorToast("Could not replay the episodes", timeout=30)}

    # Priority: a task's view (the maze's arrow keys) must not take the stepping keys.
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="side.back", priority=True),
        Binding("right,n", "step(1)", "Next step", id="side.next", priority=True),
        Binding("left,p", "step(-1)", "Previous", id="side.previous", priority=True),
        Binding("home", "first", "Start", id="side.first", priority=True),
        Binding("end", "last", "End", id="side.last", priority=True),
    ]

    class Replayed(Message, bubble=False):
        """Both episodes, replayed."""

        def __init__(self, left: EpisodeReplay, right: EpisodeReplay) -> None:
            super().__init__()
            self.left = left
            self.right = right

    def __init__(self, left_id: int, right_id: int) -> None:
        super().__init__()
        self.episode_ids = (left_id, right_id)
        self.replays: dict[str, EpisodeReplay] = {}
        self.views: dict[str, TaskView] = {}
        self.idx = 0

    @property
    def last(self) -> int:
        return max((r.last for r in self.replays.values()), default=0)

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="panes"):
            for side in SIDES:
                with Vertical(id=f"{side}-pane", classes="pane"):
                    yield Static("Replaying…", id=f"{side}-title", classes="pane-title")
                    yield Static("", id=f"{side}-status", classes="pane-status")
        yield Footer()

    def on_mount(self) -> None:
        self.title = "Side by side"
        self.sub_title = f"episodes {self.episode_ids[0]} and {self.episode_ids[1]}"
        self._replay(*self.episode_ids)

    @work(thread=True, exclusive=True, group="side-by-side", exit_on_error=False)
    def _replay(self, left_id: int, right_id: int) -> None:
        store = self.lmrl_app.store
        self.post_message(self.Replayed(load_replay(store, left_id), load_replay(store, right_id)))

    async def on_side_by_side_screen_replayed(self, message: SideBySideScreen.Replayed) -> None:
        self.replays = {"left": message.left, "right": message.right}
        for side, replay in self.replays.items():
            ep = replay.episode
            title = episode_title(ep) + (
                "" if replay.replayed else f"\n(not replayed: {replay.note})"
            )
            self.query_one(f"#{side}-title", Static).update(escape(title))
            task = ep["task"]
            # A task's own view when the episode replayed, else its recorded texts in a text view.
            cls = view_class(task) if replay.replayed else TextView
            view = cls(_spec_or_blank(task), id=f"{side}-view")
            view.can_focus = (
                False  # the stepping keys are the screen's, not the view's (maze arrows)
            )
            self.views[side] = view
            await self.query_one(f"#{side}-pane", Vertical).mount(view, before=f"#{side}-status")
            view.set_turn(None, False)
        self._show()

    def _show(self) -> None:
        for side, replay in self.replays.items():
            frame = replay.frame(self.idx)
            view = self.views[side]
            if frame.state is not None:
                view.show_state(frame.state)
            else:
                view.show_state({"model_text": _transcript(replay, self.idx)})
            self.query_one(f"#{side}-status", Static).update(escape(pane_status(replay, self.idx)))
        self.sub_title = f"step {self.idx} of {self.last}"

    def action_step(self, delta: int) -> None:
        self._go(self.idx + delta)

    def action_first(self) -> None:
        self._go(0)

    def action_last(self) -> None:
        self._go(self.last)

    def _go(self, idx: int) -> None:
        if not self.replays:
            return
        self.idx = max(0, min(idx, self.last))
        self._show()


def _spec_or_blank(task: str) -> TaskSpec:
    try:
        return envs.spec(task)
    except KeyError:  # a task no longer registered: its recorded texts only
        return TaskSpec(task, 0, task, "", 0, (0.0, 0.0))


def _transcript(replay: EpisodeReplay, idx: int) -> str:
    """The recorded texts up to step ``idx`` (an episode that could not be replayed)."""
    parts = []
    for f in replay.frames[: min(idx, replay.last) + 1]:
        if f.action is not None:
            parts.append(f"> {f.action}")
        parts.append(f.observation)
    return "\n".join(parts)


class PickEpisodeDialog(LmrlScreen, ModalScreen[int | None]):
    """Pick the episode to replay next to ``episode_id`` (same task; same seed first)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="pick.cancel")]

    def __init__(self, episode_id: int) -> None:
        super().__init__()
        self.episode_id = episode_id

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(
                f"Replay next to episode {self.episode_id}: pick one (enter), escape cancels."
            )
            yield DataTable(id="pick", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        table = self.query_one("#pick", DataTable)
        table.add_columns("id", "seed", "source", "agent", "player", "return")
        for r in episode_pairs(self.lmrl_app.store, self.episode_id):
            table.add_row(
                str(r["id"]),
                str(r["seed"]),
                r["source"],
                f"{r['agent_kind']}:{r['agent_name']}",
                r["player"] or "",
                f"{r['return']:g}",
                key=str(r["id"]),
            )
        table.focus()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if event.row_key.value is not None:
            self.dismiss(int(event.row_key.value))

    def action_cancel(self) -> None:
        self.dismiss(None)
