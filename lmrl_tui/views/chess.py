"""The chess view (``chess`` and ``endgames``): the board, the moves, a line to type a move into.

Everything is drawn from ``ChessTask.state()``: the squares, the last move (highlighted), a king in
check (red), the SAN move list, whose turn it is and the result. The person types a move in SAN or
UCI (``e4``, ``Nf3``, ``O-O``, ``g1f3``) and presses Enter; the play screen turns it into the
model's spaced SAN through the task. F2 lists the legal moves, F3 turns the board around. In
hot-seat play the person on Black types Black's replies into the same line when asked.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePath
from typing import Any

from rich.text import Text as RichText
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Input, Static

from envs.core import Text
from lmrl_tui.views.base import TaskView
from lmrl_tui.views.redraw import TypingInput

FILES = "abcdefgh"
GLYPHS = {
    "K": "♔",
    "Q": "♕",
    "R": "♖",
    "B": "♗",
    "N": "♘",
    "P": "♙",
    "k": "♚",
    "q": "♛",
    "r": "♜",
    "b": "♝",
    "n": "♞",
    "p": "♟",
}
LIGHT, DARK = "#f0d9b5", "#b58863"
LIGHT_LAST, DARK_LAST = "#cdd26a", "#aaa23a"
CHECK = "#e0584f"
PIECE = "bold #101010"


def square_background(name: str, light: bool, state: dict[str, Any]) -> str:
    last = state.get("last_move") or {}
    if name == state.get("check_square"):
        return CHECK
    if name in (last.get("from"), last.get("to")):
        return LIGHT_LAST if light else DARK_LAST
    return LIGHT if light else DARK


def render_board(state: dict[str, Any], tall: bool = True, flipped: bool = False) -> RichText:
    """The 8x8 board from ``state["board"]`` (rank 8 first), White at the bottom unless flipped.

    Pieces use the diagram convention (outlined White, filled Black) so both read on both squares.
    ``tall`` squares are 6x3 cells (square on screen), else 3x1.
    """
    width, height = (6, 3) if tall else (3, 1)
    ranks = range(7, -1, -1) if flipped else range(8)
    files = range(7, -1, -1) if flipped else range(8)
    out = RichText()
    for r in ranks:
        rank = 8 - r
        for line in range(height):
            middle = line == height // 2
            out.append(f" {rank} " if middle else "   ", style="bold")
            for f in files:
                name = f"{FILES[f]}{rank}"
                light = (r + f) % 2 == 0
                symbol = state["board"][r][f]
                glyph = GLYPHS.get(symbol, " ") if middle else " "
                out.append(
                    glyph.center(width), style=f"{PIECE} on {square_background(name, light, state)}"
                )
            out.append("\n")
    out.append("   ")
    for f in files:
        out.append(FILES[f].center(width), style="bold")
    return out


def move_list(sans: Sequence[str], start_fen: str) -> str:
    """SAN moves numbered in pairs (``1. e4 e5``), starting from the start position's move number."""
    parts = start_fen.split()
    number = int(parts[5]) if len(parts) > 5 and parts[5].isdigit() else 1
    black_first = len(parts) > 1 and parts[1] == "b"
    lines, i = [], 0
    if black_first and sans:
        lines.append(f"{number}. … {sans[0]}")
        i, number = 1, number + 1
    while i < len(sans):
        pair = sans[i : i + 2]
        lines.append(f"{number}. " + " ".join(pair))
        i += 2
        number += 1
    return "\n".join(lines)


def status_line(state: dict[str, Any]) -> str:
    if state["done"]:
        result = state["result"]
        why = state.get("termination") or ""
        if result == "1-0":
            return f"[b green]White wins[/] by {why}"
        if result == "0-1":
            return f"[b red]Black wins[/] by {why}"
        if result == "1/2-1/2":
            return f"[b yellow]Draw[/] by {why}"
        return f"[b]Game over[/] ({why})" if why else "[b]Game over[/]"
    turn = "White" if state["turn"] == "white" else "Black"
    check = "  [b red]Check![/]" if state["check"] else ""
    return f"{turn} to move{check}"


class ChessView(TaskView):
    can_focus = False
    BINDINGS = [
        Binding("f2", "toggle_legal", "Legal moves", id="chess.legal"),
        Binding("f3", "flip", "Flip board", id="chess.flip"),
    ]

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self._state: dict[str, Any] | None = None
        self._role: str | None = None
        self._human = False
        self.flipped = False
        self.show_legal = False
        self.message = ""

    def compose(self) -> ComposeResult:
        with Horizontal():
            with Vertical(id="board-column"):
                yield Static(id="board")
                yield Static("", id="message")
                yield TypingInput(placeholder="Your move: e4, Nf3, O-O or g1f3", id="move-input")
                yield Static("", id="hint")
            with Vertical(id="info"):
                yield Static("", id="status")
                yield Static("", id="moves")
                yield Static("", id="legal")

    def on_mount(self) -> None:
        self.query_one("#legal", Static).display = False

    # -- drawing ------------------------------------------------------------------------------
    def show_state(self, state: dict[str, Any]) -> None:
        self._state = state
        self.message = ""
        self._redraw()

    def _redraw(self) -> None:
        state = self._state
        if state is None:
            return
        tall = self.size.height == 0 or self.size.height >= 30
        self.query_one("#board", Static).update(render_board(state, tall, self.flipped))
        self.query_one("#message", Static).update(self.message)
        opponent = state.get("opponent") or {}
        lines = [status_line(state), f"Black: {opponent.get('description', '')}"]
        if state.get("setup"):
            lines.append(f"Endgame {state['setup']}" + position_label(state))
        lines.append(
            f"Moves {state['agent_moves']}/{state['max_moves']} · illegal {state['illegal_moves']}"
        )
        self.query_one("#status", Static).update("\n".join(lines))
        self.query_one("#moves", Static).update(
            move_list(state["moves_san"], state["start_fen"]) or "No moves yet."
        )
        legal = self.query_one("#legal", Static)
        legal.display = self.show_legal and not state["done"]
        legal.update("Legal: " + "  ".join(state["legal_moves_san"]))

    def on_resize(self) -> None:
        self._redraw()

    # -- turns and input ------------------------------------------------------------------------
    def set_turn(self, role: str | None, human: bool) -> None:
        self._role, self._human = role, human
        inp = self.query_one("#move-input", Input)
        inp.disabled = not human
        if role is None:
            hint = "Game over."
        elif human:
            side = "White" if role == self.spec.roles[0] else "Black"
            inp.placeholder = f"{side}'s move: e4, Nf3, O-O or g1f3"
            hint = "Enter: play · F2: legal moves · F3: flip board"
        else:
            hint = (
                self.agent_turn_text(role, "The agent is thinking…")
                if role == self.spec.roles[0]
                else "Black is thinking…"
            )
            inp.placeholder = "Not your move: watching"  # the box is disabled
        self.query_one("#hint", Static).update(hint)
        if human:
            inp.focus()

    def request_reply(self, role: str, history: Sequence[Text]) -> None:
        """Black is a person (hot-seat): ask for Black's move, with the reason a reply was refused."""
        self.message = history[1].text.strip() if len(history) > 1 else ""
        self.query_one("#message", Static).update(self.message)
        self.set_turn(role, True)

    def show_error(self, message: str) -> None:
        self.message = message
        self.query_one("#message", Static).update(message)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if not self._human or self._role is None:
            return
        value = event.value
        event.input.value = ""
        if not value.strip():
            return
        self.post_message(self.Submitted(value, role=self._role))

    # -- actions ------------------------------------------------------------------------------
    def action_toggle_legal(self) -> None:
        self.show_legal = not self.show_legal
        if self.show_legal and self._human:
            self.post_message(self.HintShown("legal_moves"))
        self._redraw()

    def hints_shown(self) -> list[str]:
        return ["legal_moves"] if self.show_legal else []

    def action_flip(self) -> None:
        self.flipped = not self.flipped
        self._redraw()


TASK_VIEWS = {"chess": ChessView, "endgames": ChessView}


def position_label(state: dict) -> str:
    """`` · test position 12`` or `` · position 12 of train.jsonl`` (none for a fresh random one)."""
    index, source = state.get("position_index"), state.get("positions") or "test"
    if index is None:
        return ""
    return (
        f" · test position {index}"
        if source == "test"
        else f" · position {index} of {PurePath(source).name}"
    )
