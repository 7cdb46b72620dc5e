"""Leaving an episode and coming back to one: the confirmation before an episode with steps is
left, and the offer, when the app starts, to resume (or mark abandoned) the episodes an app that
stopped left ``in_progress``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.markup import escape
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Button, DataTable, Static

from data.holds import EpisodeHeld, hold
from data.session import PlaySession
from envs.players.session import ResumeError
from lmrl_tui.screens.base import LmrlScreen
from lmrl_tui.workers import ErrorToast


class QuestionDialog(LmrlScreen, ModalScreen[Any]):
    """A question with a row of buttons (:meth:`buttons`: label, variant, id, in order)."""

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def buttons(self) -> list[tuple[str, str, str]]:
        raise NotImplementedError

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.question, id="question")
            with Horizontal(id="buttons"):
                for label, variant, button_id in self.buttons():
                    yield Button(label, variant=variant, id=button_id)  # type: ignore[arg-type]

    def action_choose(self, choice: Any) -> None:
        self.dismiss(choice)


class ConfirmDialog(QuestionDialog):
    """A yes/no question: the first button (``YES``: label, variant, id) answers True, the second
    (``NO``: label, id) False; subclasses bind their keys to ``choose(True)`` / ``choose(False)``."""

    YES: tuple[str, str, str] = ("Yes", "warning", "yes")
    NO: tuple[str, str] = ("No", "no")

    def buttons(self) -> list[tuple[str, str, str]]:
        return [self.YES, (self.NO[0], "default", self.NO[1])]

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == self.YES[2])


class LeaveDialog(QuestionDialog):
    """Leave an unfinished episode: keep it to resume later (``"keep"``, focused: enter), abandon
    it (``"abandon"``), or stay (None: escape). Keys k, a and s say the same."""

    BINDINGS = [
        Binding("escape,s", "choose(None)", "Stay", id="leave.stay"),
        Binding("k", "choose('keep')", "Keep to resume", id="leave.keep"),
        Binding("a", "choose('abandon')", "Abandon", id="leave.abandon"),
    ]
    AUTO_FOCUS = "#keep"

    def buttons(self) -> list[tuple[str, str, str]]:
        return [
            ("Keep to resume", "primary", "keep"),
            ("Abandon", "warning", "abandon"),
            ("Stay", "default", "stay"),
        ]

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(None if event.button.id == "stay" else event.button.id)


class LeavingEpisode:
    """The play screen's way out of an episode (escape, and ctrl+q through the app): at once when
    nothing would be lost; else ask (:class:`LeaveDialog`) whether to keep it to resume later,
    abandon it, or stay. Expects the play screen's ``session``, ``thinking``, ``cancel_thinking``,
    ``_stop_auto``, ``_stop_episode`` and ``_end_and_pop``."""

    session: PlaySession
    thinking: bool
    app: Any
    lmrl_app: Any

    if TYPE_CHECKING:

        def cancel_thinking(self) -> None: ...
        def notify(self, message: str, **kw: Any) -> None: ...
        def _stop_auto(self) -> None: ...
        def _stop_episode(self) -> None: ...
        def _end_and_pop(self) -> None: ...

    def action_leave(self) -> None:
        """Leave the episode: at once when nothing would be lost, else after asking."""
        if self.thinking:  # escape while the agent thinks: cancel its move, stay
            self.cancel_thinking()
            return
        if not self.has_unfinished_steps:
            self._end_and_pop()
            return
        self.ask_to_leave(quitting=False)

    @property
    def has_unfinished_steps(self) -> bool:
        """Whether leaving now would leave an unfinished episode that has steps (so we ask)."""
        s = self.session
        return s.started and not s.done and bool(s.transitions)

    def ask_to_leave(self, *, quitting: bool) -> None:
        """Ask whether to keep the episode to resume later, abandon it, or stay; ``quitting``:
        the app closes after a keep or an abandon (ctrl+q), else the home screen shows."""
        s = self.session
        n = len(s.transitions)
        where = "quit lmrl" if quitting else "leave it"
        question = (
            f"Episode {s.episode_id} has {n} step{'s' if n != 1 else ''} and is not over. Before you "
            f"{where}:\n"
            "· Keep it (enter, k): it stays in progress, and lmrl offers to resume it at the next "
            "start (u on the home screen too).\n"
            "· Abandon it (a): kept in the store, marked abandoned, never used as data.\n"
            "· Stay (escape, s)."
        )
        self.app.push_screen(
            LeaveDialog(question), lambda choice: self._leave_answered(choice, quitting)
        )

    def _leave_answered(self, choice: str | None, quitting: bool = False) -> None:
        if choice is None:
            return
        eid = self.session.episode_id
        if choice == "keep" and not self.session.done:
            self._stop_auto()
            self.session.suspend()
            if eid is not None:
                self.lmrl_app.kept_here.add(eid)
                self.lmrl_app.let_go(eid)  # another window of this person may resume it now
            self.notify(
                f"Episode {eid} kept: resume it at the next start, or with u on the home screen."
            )
        elif not self.session.done:
            self._stop_episode()
            self.notify(f"Episode {eid} kept, marked abandoned.")
        if quitting:
            self.app.exit()
        elif self.app.screen is self:
            self.app.pop_screen()


@dataclass(frozen=True)
class PairedComeBack:
    """Resume a paired episode (two people, each in their own app): its person waits for the
    other to come back to it (the row of the episode, marked ``paired``)."""

    episode: dict[str, Any]


class UnfinishedDialog(LmrlScreen, ModalScreen[PlaySession | PairedComeBack | None]):
    """Episodes left in progress by an app that stopped: resume the highlighted one (its steps
    are replayed from its seed; it must reproduce them exactly; a paired one once the other
    person comes back to it too), mark it abandoned, or not now."""

    BINDINGS = [
        Binding("escape", "later", "Not now", id="unfinished.later"),
        Binding("r", "resume", "Resume", id="unfinished.resume"),
        Binding("a", "abandon", "Mark abandoned", id="unfinished.abandon"),
    ]
    AUTO_FOCUS = "#unfinished"
    WORKER_ERRORS = {"resume": ErrorToast("Cannot resume", in_place=True)}

    class Resumed(Message, bubble=False):
        """The episode, replayed by the worker to where it stopped."""

        def __init__(self, session: PlaySession) -> None:
            super().__init__()
            self.session = session

    def __init__(self, episodes: list[dict[str, Any]]) -> None:
        super().__init__()
        self.episodes = {int(ep["id"]): ep for ep in episodes}
        self.cannot: dict[int, str] = {}
        """Episodes whose replay failed, with the reason."""
        self.held: set[int] = set()
        """Episodes another app began playing after this dialog opened (left alone)."""
        self._resuming: int | None = None

    def compose(self) -> ComposeResult:
        n = len(self.episodes)
        with Vertical():
            yield Static(f"[b]{n} unfinished episode{'s' if n != 1 else ''}[/b]")
            yield Static(
                "These were kept to resume, or lmrl stopped while they were played; they are still "
                "marked in progress. Resume one (its steps are replayed from its seed) or mark it "
                "abandoned (kept, never used as data). Only your own are listed, and none that is being "
                "played in another window now. One played with another person, each in their "
                "own app, goes on when you both come back to it: resuming it waits for them.\n"
                "Keys: enter or r resumes the highlighted one, a marks it abandoned, escape: not now.",
                id="explain",
            )
            yield DataTable(id="unfinished", cursor_type="row", zebra_stripes=True)
            yield Static("", id="resume-error")
            with Horizontal(id="buttons"):
                yield Button("Resume", variant="primary", id="resume")
                yield Button("Mark abandoned", variant="warning", id="abandon")
                yield Button("Not now", id="later")

    def on_mount(self) -> None:
        table = self.query_one("#unfinished", DataTable)
        table.add_columns("id", "task", "steps", "player", "agent", "started")
        for eid, ep in self.episodes.items():
            agent = (
                f"paired: {ep['player']} and {ep['partner_name']}"  # the same for both of them
                if ep.get("paired")
                else "a person"
                if ep["agent_kind"] == "human"
                else f"{ep['agent_kind']}:{ep['agent_name']}"
            )
            table.add_row(
                str(eid),
                ep["task"],
                str(ep["n_steps"]),
                ep["player"] or "",
                agent,
                str(ep["started_at"] or "")[:16].replace("T", " "),
                key=str(eid),
            )

    def _current(self) -> int | None:
        table = self.query_one("#unfinished", DataTable)
        if table.row_count == 0:
            return None
        return int(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value or 0)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_reason()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_resume()

    def _show_reason(self) -> None:
        eid = self._current()
        reason = self.cannot.get(eid) if eid is not None else None
        self.query_one("#resume", Button).disabled = (
            reason is not None or self._resuming is not None
        )
        if reason is None:
            text = ""
        elif eid in self.held:
            text = f"Episode {eid}: {reason}; it is not yours to resume or abandon."
        else:
            text = f"Episode {eid} cannot be resumed: {reason}. Mark it abandoned."
        self.query_one("#resume-error", Static).update(escape(text))
        self.query_one("#abandon", Button).disabled = eid in self.held

    @on(Button.Pressed, "#resume")
    def action_resume(self) -> None:
        eid = self._current()
        if eid is None or eid in self.cannot or self._resuming is not None:
            return
        if self.episodes[eid].get("paired"):  # never hot-seat: the other person comes back too
            self.dismiss(PairedComeBack(self.episodes[eid]))
            return
        self._resuming = eid
        self.query_one("#resume", Button).disabled = True
        self.query_one("#resume-error", Static).update(f"Replaying episode {eid} …")
        self._replay(eid)

    @work(thread=True, exclusive=True, group="resume", exit_on_error=False)
    def _replay(self, episode_id: int) -> None:
        app = self.lmrl_app
        hold(app.store, episode_id, app.holder, app.player)  # or EpisodeHeld: played elsewhere
        resumed = False
        try:
            session = PlaySession.resume_episode(app.store, episode_id)
            resumed = True
        finally:
            if not resumed:  # its failure is reported (WORKER_ERRORS): the hold goes
                app.let_go(episode_id)
        self.post_message(self.Resumed(session))

    def on_unfinished_dialog_resumed(self, message: UnfinishedDialog.Resumed) -> None:
        self._resuming = None
        self.dismiss(message.session)

    def worker_failed(self, group: str, error: BaseException) -> None:
        eid, self._resuming = self._resuming, None
        if eid is not None:
            if isinstance(error, EpisodeHeld):
                self.held.add(eid)
            self.cannot[eid] = (
                str(error)
                if isinstance(error, ResumeError | EpisodeHeld)
                else f"{type(error).__name__}: {error}"
            )
        self._show_reason()

    @on(Button.Pressed, "#abandon")
    def action_abandon(self) -> None:
        eid = self._current()
        if eid is None or eid == self._resuming or eid in self.held:
            return
        app = self.lmrl_app
        try:  # never under the feet of the app playing it now
            hold(app.store, eid, app.holder, app.player)
        except EpisodeHeld as e:
            self.cannot[eid] = str(e)
            self.held.add(eid)
            self._show_reason()
            return
        app.store.finish_episode(eid, status="abandoned")
        app.let_go(eid)
        self.notify(f"Episode {eid} marked abandoned.")
        del self.episodes[eid]
        self.query_one("#unfinished", DataTable).remove_row(str(eid))
        if not self.episodes:
            self.dismiss(None)
        else:
            self._show_reason()

    @on(Button.Pressed, "#later")
    def action_later(self) -> None:
        self.dismiss(None)
