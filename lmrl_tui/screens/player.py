"""Asking who plays: the name prompt (at start, when no name is known) and the session note
dialog (a note a person writes about their session, kept with the episodes they play in it)."""

from __future__ import annotations

from dataclasses import dataclass

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from data.annotators import MAX_PLAYER_NAME, MAX_SESSION_NOTE, player_name_error
from lmrl_tui.screens.base import LmrlScreen


@dataclass(frozen=True)
class PlayerChosen:
    """What the name prompt returns: the name (stripped) and the session note (None: none)."""

    name: str
    note: str | None = None


class PlayerPrompt(LmrlScreen, ModalScreen[PlayerChosen]):
    """Who is playing? One name (enter confirms), kept with every episode and label; optionally a
    note about this session. A name is needed: there is no cancel (ctrl+q still quits)."""

    def __init__(self, *, remembered: bool = True) -> None:
        super().__init__()
        self.remembered = remembered
        """Whether the name is kept for the next start (not in a served browser session)."""

    def compose(self) -> ComposeResult:
        later = (
            "It is remembered for next time." if self.remembered else "Asked again at each start."
        )
        with Vertical():
            yield Static("[b]Who is playing?[/b]", id="player-title")
            yield Static(
                f"Your name is saved with every episode you play and every label you give. {later}",
                id="player-explain",
            )
            yield Input(
                placeholder="your name, e.g. ann", max_length=MAX_PLAYER_NAME + 20, id="player-name"
            )
            yield Static("", id="player-error")
            yield Input(
                placeholder="session note (optional): how, where, why you play now",
                max_length=MAX_SESSION_NOTE,
                id="session-note",
            )
            yield Static("enter: start · tab: next field", id="player-keys")

    def on_mount(self) -> None:
        self.query_one("#player-name", Input).focus()

    @on(Input.Submitted)
    def _confirm(self, event: Input.Submitted) -> None:
        event.stop()
        name = self.query_one("#player-name", Input).value
        error = player_name_error(name)
        if error:
            self.query_one("#player-error", Static).update(error)
            self.query_one("#player-error").add_class("-shown")
            self.query_one("#player-name", Input).focus()
            return
        note = self.query_one("#session-note", Input).value.strip()
        self.dismiss(PlayerChosen(name.strip(), note or None))

    @on(Input.Changed, "#player-name")
    def _clear_error(self) -> None:
        self.query_one("#player-error").remove_class("-shown")


class SessionNoteDialog(LmrlScreen, ModalScreen[str | None]):
    """Write (or change, or clear) the note about this session; escape keeps the old one."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="note.cancel")]

    def __init__(self, note: str | None) -> None:
        super().__init__()
        self.note = note

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(
                "[b]Session note[/b]: kept with every episode you play in this session "
                "(enter to save, empty to clear, escape to cancel)"
            )
            yield Input(
                self.note or "",
                placeholder="e.g. tired, on a laptop, learning the rules",
                max_length=MAX_SESSION_NOTE,
                id="session-note",
            )

    @on(Input.Submitted)
    def _save(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value.strip())

    def action_cancel(self) -> None:
        self.dismiss(None)
