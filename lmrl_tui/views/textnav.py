"""The Text-Nav view: the room text, a map of the house, the inventory and the commands.

The admissible commands are a selectable list; the person types a command in their own words
(``east``, ``grab the stale food``: the task reads it, see ``envs.textnav.text``; Tab or the
right arrow completes it from the list) or plays one from the list explicitly: Up/Down move the
list's highlight and ctrl+o plays it, or click it (or Enter on the focused list). A step played
from the list is stored as chosen, not as typed. An empty Enter does nothing. In textnav-po the
map shows only the rooms visited so far, and names none of them (the task's text hides the room's
name from the agent: the person gets no more).
"""

from __future__ import annotations

from typing import Any

from rich.text import Text as RichText
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.suggester import SuggestFromList
from textual.widgets import Input, OptionList, Static

from lmrl_tui.views.base import TaskView
from lmrl_tui.views.redraw import TypingInput

CELL = 11
SHORT_NAMES = {"dining room": "dining", "living room": "living"}


def render_map(state: dict[str, Any]) -> RichText:
    """The house on a grid: rooms as labelled boxes, links as lines; the player's room highlighted."""
    positions = {name: tuple(p) for name, p in state["map"].items()}
    visited = set(state["visited"])
    partial = state["observed"] == "po"
    shown = visited if partial else set(positions)
    cols = 1 + max(c for c, _ in positions.values())
    rows = 1 + max(r for _, r in positions.values())
    at = {pos: name for name, pos in positions.items()}
    right: set[tuple[int, int]] = set()
    down: set[tuple[int, int]] = set()
    for a, _, b in state["links"]:
        if a not in shown or b not in shown:
            continue
        (ca, ra), (cb, rb) = positions[a], positions[b]
        if ra == rb:
            right.add((min(ca, cb), ra))
        else:
            down.add((ca, min(ra, rb)))
    out = RichText()
    for r in range(rows):
        for c in range(cols):
            name = at.get((c, r))
            if name is None or name not in shown:
                out.append(" " * CELL)
            else:
                # PO hides where you are (LMRL's PO text never names the room): no names on its map
                shown_name = (
                    ("you" if name == state["room"] else "seen")
                    if partial
                    else SHORT_NAMES.get(name, name)
                )
                label = shown_name[: CELL - 2].center(CELL - 2)
                if name == state["room"]:
                    style = "bold black on yellow"
                elif name in visited:
                    style = "bold white on #3a5a8a"
                else:
                    style = "white on grey23"
                out.append(f"[{label}]", style=style)
            if c < cols - 1:
                out.append("──" if (c, r) in right else "  ", style="grey62")
        out.append("\n")
        if r < rows - 1:
            for c in range(cols):
                mark = "│" if (c, r) in down else " "
                out.append(mark.center(CELL), style="grey62")
                if c < cols - 1:
                    out.append("  ")
            out.append("\n")
    return out


class CommandInput(TypingInput):
    """A command line: Tab accepts the suggestion, Up/Down move the command list's highlight."""

    BINDINGS = [
        Binding("tab", "complete", "Complete", id="textnav.complete", show=False),
        Binding("up", "highlight(-1)", "Previous command", id="textnav.up", show=False),
        Binding("down", "highlight(1)", "Next command", id="textnav.down", show=False),
        Binding("ctrl+o", "play_highlighted", "Play highlighted", id="textnav.play"),
    ]

    class Highlight(Message):
        def __init__(self, delta: int) -> None:
            super().__init__()
            self.delta = delta

    def action_complete(self) -> None:
        if self._suggestion and self._suggestion != self.value:
            self.value = self._suggestion
            self.cursor_position = len(self.value)
        else:
            self.screen.focus_next()

    class PlayHighlighted(Message):
        """Play the command highlighted in the list (chosen from it, not typed)."""

    def action_highlight(self, delta: int) -> None:
        self.post_message(self.Highlight(delta))

    def action_play_highlighted(self) -> None:
        self.post_message(self.PlayHighlighted())


class TextNavView(TaskView):
    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self._human = False
        self._commands: list[str] = []

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(id="map")
            with VerticalScroll(id="room-box"):
                yield Static(id="room", markup=False)
            yield Static(id="inventory", markup=False)
            yield OptionList(id="commands")
            yield CommandInput(
                placeholder="Type a command (Tab completes) or pick one above", id="prompt"
            )
            yield Static("", id="turn")

    # -- drawing ------------------------------------------------------------------------------
    def show_state(self, state: dict[str, Any]) -> None:
        self.query_one("#map", Static).update(render_map(state))
        room = self.query_one("#room-box", VerticalScroll)
        room.border_title = state["room_title"] if state["observed"] == "fo" else "Where you are"
        text = state["description"]
        if state["feedback"] and state["feedback"] != state["description"]:
            text = f"{state['feedback']}\n\n{text}"
        if state["done"]:
            text += {
                "won": "\n\nYou won: the stale food is in the closed fridge.",
                "lost": "\n\nYou lost: you ate the stale food.",
                "timeout": "\n\nOut of time.",
            }.get(state["outcome"] or "", "")
        self.query_one("#room", Static).update(text)
        room.scroll_home(animate=False)
        inv = state["inventory"]
        self.query_one("#inventory", Static).update(
            "You carry: "
            + (", ".join(inv) if inv else "nothing")
            + f"    Step {state['steps']} / {state['max_steps']}"
        )
        self._commands = [] if state["done"] else list(state["admissible"])
        options = self.query_one("#commands", OptionList)
        options.clear_options()
        options.add_options(self._commands)
        if self._commands:
            options.highlighted = 0
        prompt = self.query_one("#prompt", CommandInput)
        prompt.suggester = SuggestFromList(self._commands, case_sensitive=False)

    def set_turn(self, role: str | None, human: bool) -> None:
        self._human = human
        prompt = self.query_one("#prompt", CommandInput)
        prompt.disabled = not human
        self.query_one("#commands", OptionList).disabled = not human
        self.query_one("#turn", Static).update(
            "Your move: type a command or pick one (↑/↓, ctrl+o)"
            if human
            else ("" if role is None else self.agent_turn_text(role, "The agent is moving…"))
        )
        if human:
            prompt.focus()

    def show_error(self, message: str) -> None:
        self.query_one("#turn", Static).update(message)
        super().show_error(message)

    # -- input --------------------------------------------------------------------------------
    def _submit(self, command: str, chosen: bool = False) -> None:
        if self._human:
            self.post_message(self.Submitted(command, chosen=chosen))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        value = event.value.strip()
        if not value:  # an empty Enter is no move
            return
        event.input.value = ""
        self._submit(value)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self._submit(str(event.option.prompt), chosen=True)

    def on_command_input_play_highlighted(self, event: CommandInput.PlayHighlighted) -> None:
        event.stop()
        options = self.query_one("#commands", OptionList)
        if options.highlighted is not None and self._commands:
            self._submit(self._commands[options.highlighted], chosen=True)

    def on_command_input_highlight(self, event: CommandInput.Highlight) -> None:
        event.stop()
        options = self.query_one("#commands", OptionList)
        if not self._commands:
            return
        current = options.highlighted if options.highlighted is not None else 0
        options.highlighted = max(0, min(len(self._commands) - 1, current + event.delta))


TASK_VIEWS = {"textnav-fo": TextNavView, "textnav-po": TextNavView}
