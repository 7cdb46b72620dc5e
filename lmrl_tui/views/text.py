"""A plain text view: the model-facing transcript and a line to type into.

Used for any task that has no view of its own, and by people who want to play exactly as the model
does.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Input, Log, Static

from lmrl_tui.views.base import TaskView
from lmrl_tui.views.redraw import GrowingLog, TypingInput


class TextView(TaskView):
    def compose(self) -> ComposeResult:
        with Vertical():
            yield GrowingLog(id="transcript", auto_scroll=True)
            yield Static("", id="turn")
            yield TypingInput(placeholder="Type your action and press Enter", id="prompt")

    def show_state(self, state: dict[str, Any]) -> None:
        text = state.get("model_text")
        if text is not None:
            log = self.query_one("#transcript", Log)
            log.clear()
            log.write(text)

    def set_turn(self, role: str | None, human: bool) -> None:
        inp = self.query_one("#prompt", Input)
        inp.disabled = not human
        self.query_one("#turn", Static).update(
            f"Your move ({role})"
            if human and role
            else ("" if role is None else self.agent_turn_text(role, f"{role} is thinking…"))
        )
        if human:
            inp.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        value = event.value
        if not value.strip():  # an empty Enter is no move
            return
        event.input.value = ""
        self.post_message(self.Submitted(value, role=self.spec.roles[0]))
