"""The Wordle view: the 6x5 grid of coloured tiles and an on-screen keyboard, from ``state()``.

The person types letters (they appear in the next row), Backspace deletes, Enter guesses. A word
the task does not accept is explained under the grid and stays in the row to be fixed (the play
screen records the attempt; it costs a guess only in LMRL-strict mode). F2 toggles a hint: how many
answers are still consistent with the feedback. The answer is shown when the game ends.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text as RichText
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Center, Vertical
from textual.widgets import Static

from lmrl_tui.views.base import TaskView

TILE_STYLES = {
    "g": "bold white on #538d4e",
    "y": "bold white on #b59f3b",
    "b": "bold white on #3a3a3c",
    "typing": "bold white on grey35",
    "empty": "on grey15",
    "invalid": "bold white on dark_red",
}
KEY_STYLES = {
    "g": "bold white on #538d4e",
    "y": "bold white on #b59f3b",
    "b": "grey50 on grey15",
    None: "bold black on grey70",
}
KEYBOARD_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
LETTERS = frozenset("abcdefghijklmnopqrstuvwxyz")


def render_grid(state: dict[str, Any], typing: str, human: bool, tall: bool = True) -> RichText:
    """Six rows of five tiles (three lines high when ``tall``, else one); the next row holds what
    the person is typing."""
    rows: list[list[tuple[str, str]]] = []
    notes: list[str] = []
    for row in state["rows"]:
        word = row["word"]
        if row["valid"]:
            rows.append([(ch, TILE_STYLES[m]) for ch, m in zip(word, row["marks"], strict=True)])
            notes.append("")
        else:
            shown = (word[:5] + " " * 5)[:5]
            rows.append([(ch if ch.isprintable() else "?", TILE_STYLES["invalid"]) for ch in shown])
            notes.append("not a word" if word else "empty guess")
    if human and not state["done"] and len(rows) < state["max_guesses"]:
        rows.append([((typing + " " * 5)[i], TILE_STYLES["typing"]) for i in range(5)])
        notes.append("")
    while len(rows) < state["max_guesses"]:
        rows.append([(" ", TILE_STYLES["empty"])] * 5)
        notes.append("")
    out = RichText()
    lines = (0, 1, 2) if tall else (1,)
    for r, tiles in enumerate(rows):
        for line in lines:
            for i, (ch, style) in enumerate(tiles):
                if i:
                    out.append(" ")
                out.append(f"  {ch.upper()}  " if line == 1 else "     ", style=style)
            if line == 1 and notes[r]:
                out.append(f"  {notes[r]}", style="red")
            out.append("\n")
        if r < len(rows) - 1:
            out.append("\n")
    return out


def render_keyboard(letters: dict[str, str]) -> RichText:
    out = RichText(justify="center")
    for r, keys in enumerate(KEYBOARD_ROWS):
        if r:
            out.append("\n\n")
        out.append(" " * (r * 2))
        for i, ch in enumerate(keys):
            if i:
                out.append(" ")
            out.append(f" {ch.upper()} ", style=KEY_STYLES[letters.get(ch)])
    return out


class WordleView(TaskView):
    can_focus = True
    BINDINGS = [
        Binding("enter", "submit", "Guess", id="wordle.submit"),
        Binding("backspace", "delete", "Delete", id="wordle.delete"),
        Binding("f2", "toggle_hint", "Hint", id="wordle.hint"),
    ]

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.typing = ""
        self.show_hint = False
        self._human = False
        self._state: dict[str, Any] | None = None
        self._n_rows = 0
        self._message = ""

    def compose(self) -> ComposeResult:
        with Vertical():
            with Center():
                yield Static(id="grid")
            with Center():
                yield Static("", id="message")
            with Center():
                yield Static(id="keyboard")
            with Center():
                yield Static("", id="hint")

    def on_mount(self) -> None:
        self.focus()

    # -- drawing ------------------------------------------------------------------------------
    def show_state(self, state: dict[str, Any]) -> None:
        if len(state["rows"]) != self._n_rows:  # a guess was accepted: start a fresh row
            self._n_rows = len(state["rows"])
            self.typing = ""
            self._message = ""
        self._state = state
        self._redraw()

    def _redraw(self) -> None:
        state = self._state
        if state is None:
            return
        tall = self.size.height == 0 or self.size.height >= 30
        grid = render_grid(state, self.typing, self._human, tall)
        self.query_one("#grid", Static).update(grid)
        self.query_one("#keyboard", Static).update(render_keyboard(state["letters"]))
        message = self._message
        if state["done"]:
            answer = (state.get("answer") or "").upper()
            message = (
                f"Solved in {len(state['rows'])}! The word was {answer}."
                if state.get("success")
                else f"Out of guesses. The word was {answer}."
            )
        self.query_one("#message", Static).update(message)
        self.query_one("#hint", Static).update(self._hint_text(state))

    def _hint_text(self, state: dict[str, Any]) -> str:
        parts = []
        if self.show_hint:
            n = state["consistent"]
            parts.append(f"{n} word{'s' if n != 1 else ''} still possible")
        if self._human and not state["done"]:
            parts.append("type a word, Enter to guess, F2 hint")
        elif not self._human and not state["done"]:
            parts.append("F2 hint")
        return " · ".join(parts)

    def on_resize(self, event: events.Resize) -> None:
        self._redraw()

    def set_turn(self, role: str | None, human: bool) -> None:
        self._human = human
        if human:
            self.focus()
        self._redraw()

    def show_error(self, message: str) -> None:
        self._message = message
        self._redraw()
        super().show_error(message)

    # -- input --------------------------------------------------------------------------------
    def on_key(self, event: events.Key) -> None:
        if not self._human:
            return
        ch = (event.character or "").lower()
        if ch in LETTERS and len(ch) == 1:
            event.stop()
            event.prevent_default()
            if len(self.typing) < 5:
                self.typing += ch
                self._message = ""
                self._redraw()

    def action_delete(self) -> None:
        if self._human and self.typing:
            self.typing = self.typing[:-1]
            self._message = ""
            self._redraw()

    def action_submit(self) -> None:
        if self._human and self.typing and self._state is not None and not self._state["done"]:
            self.post_message(self.Submitted(self.typing))

    def action_toggle_hint(self) -> None:
        self.show_hint = not self.show_hint
        if self.show_hint and self._human:
            self.post_message(self.HintShown("wordle_hint"))
        self._redraw()

    def hints_shown(self) -> list[str]:
        return ["wordle_hint"] if self.show_hint else []


TASK_VIEWS = {"wordle": WordleView, "wordle-lmrl": WordleView}
