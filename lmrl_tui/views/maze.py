"""The maze view: the grid (walls, agent, goal, trail), drawn from ``MazeTask.state()``.

In maze-po the person sees only the cells the agent has stood on and the walls next to them.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text as RichText
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Center, Vertical
from textual.widgets import Static

from lmrl_tui.views.base import TaskView
from lmrl_tui.views.redraw import update_static

WALL = ("██", "grey50")
FLOOR = ("  ", "")
TRAIL = ("··", "grey42")
UNKNOWN = ("░░", "grey23")
AGENT = ("◉ ", "bold yellow")
GOAL = ("★ ", "bold green")


ARROW_STYLE = "bold cyan"


def render_maze(
    state: dict[str, Any], arrows: dict[tuple[int, int], str] | None = None
) -> RichText:
    """The grid; ``arrows``: a watched agent's greedy move per free cell (its policy map)."""
    layout: list[str] = state["layout"]
    pos = tuple(state["position"])
    goal = tuple(state["goal"])
    visited = {tuple(rc) for rc in state["visited"]}
    partial = state["observed"] == "po"
    seen = set(visited)
    if partial:
        for r, c in visited:
            seen.update({(r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)})
    out = RichText()
    for r, row in enumerate(layout):
        for c, ch in enumerate(row):
            if (r, c) == pos:
                glyph = AGENT
            elif (r, c) == goal and (not partial or (r, c) in seen or state["done"]):
                glyph = GOAL
            elif partial and (r, c) not in seen:
                glyph = UNKNOWN
            elif ch == "#":
                glyph = WALL
            elif arrows and (r, c) in arrows:
                glyph = (arrows[(r, c)] + " ", ARROW_STYLE)
            elif (r, c) in visited:
                glyph = TRAIL
            else:
                glyph = FLOOR
            out.append(glyph[0], style=glyph[1])
        out.append("\n")
    return out


def bumped(state: dict[str, Any]) -> bool:
    """Whether the last move ran into a wall (the maze task's ``state()["last"]``)."""
    last = state.get("last")
    return isinstance(last, dict) and last.get("outcome") == "bump"


class MazeView(TaskView):
    can_focus = True
    BINDINGS = [
        Binding("up", "move('up', 'up')", "Up", id="maze.up"),
        Binding("w", "move('up', 'w')", "Up", id="maze.up.w", show=False),
        Binding("down", "move('down', 'down')", "Down", id="maze.down"),
        Binding("s", "move('down', 's')", "Down", id="maze.down.s", show=False),
        Binding("left", "move('left', 'left')", "Left", id="maze.left"),
        Binding("a", "move('left', 'a')", "Left", id="maze.left.a", show=False),
        Binding("right", "move('right', 'right')", "Right", id="maze.right"),
        Binding("d", "move('right', 'd')", "Right", id="maze.right.d", show=False),
    ]

    def compose(self) -> ComposeResult:
        with Vertical():
            with Center():
                yield Static(id="grid")
            with Center():
                yield Static("", id="hint")

    _bumped = False
    _hint = ""
    _state: dict[str, Any] | None = None
    arrows: dict[tuple[int, int], str] | None = None
    """The watched agent's policy map drawn on the grid (None: not shown)."""

    def on_mount(self) -> None:
        self.focus()

    def show_state(self, state: dict[str, Any]) -> None:
        self._state = state
        update_static(self.query_one("#grid", Static), render_maze(state, self.arrows))
        # A move into a wall is a turn (-1) that leaves the agent where it was: say so.
        self._bumped = bumped(state)
        self._show_hint()

    def show_policy_map(self, arrows: dict[tuple[int, int], str] | None) -> None:
        """Draw (or, with None, clear) an agent's greedy move on every free cell."""
        self.arrows = arrows
        if self._state is not None:
            update_static(self.query_one("#grid", Static), render_maze(self._state, arrows))

    def step_note(self, info: dict[str, Any], state: dict[str, Any]) -> str | None:
        return "wall bump" if bumped(state) else None

    def set_turn(self, role: str | None, human: bool) -> None:
        self._human = human
        self._hint = (
            "Arrow keys or w/a/s/d to move"
            if human
            else ("" if role is None else "Watching the agent: space steps, p auto-plays")
        )
        self._show_hint()
        if human:
            self.focus()

    def _show_hint(self) -> None:
        hint = RichText(self._hint)
        if self._bumped:
            hint = RichText("\n").join(
                [RichText("You bumped into a wall (−1)", style="bold red"), hint]
            )
        update_static(self.query_one("#hint", Static), hint)

    def action_move(self, direction: str, key: str | None = None) -> None:
        """A move by a key press: recorded as the key pressed, not as typed text."""
        if getattr(self, "_human", False):
            self.post_message(self.Submitted(direction, via="key", pressed=key or direction))


TASK_VIEWS = {"maze-fo": MazeView, "maze-po": MazeView}
