"""The value overlay of the play screen: what a watched checkpoint thinks of the current state.

It draws an explanation computed elsewhere (``training.agents.explain.explain``, in a worker of the play
screen): the top candidate actions with Q, V and A = Q − V for value-based checkpoints (ILQL, MC,
Q-SFT), or their probabilities for policy checkpoints; ``★`` marks the action the agent plays (the
RL choice), ``◆`` the one its BC/policy head (π_β) ranks first. The widget is duck-typed on the
explanation's attributes, so this module imports no torch.
"""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.styled import Styled
from rich.table import Table
from rich.text import Text as RichText
from textual.widgets import Static

from lmrl_tui.views.redraw import update_static

RL_MARK = "★"
BC_MARK = "◆"


def number(x: float | None) -> str:
    """A value as the overlay shows it: 3 decimals, or 3 significant digits when it is tiny."""
    if x is None:
        return "–"
    if x != 0 and abs(x) < 0.001:
        return f"{x:.2e}"
    return f"{x:.3f}"


def legend_text(expl: Any) -> str:
    """What the marks mean: a guided agent's final pick after its value model's critique (goal
    values, or an utterance critic's expected return), else the agent's and π_β's choices."""
    if expl.algo != "guided":
        return f"{RL_MARK} the agent's choice  {BC_MARK} BC/π_β's choice"
    returns = bool(expl.notes) and "expected return" in expl.notes[0]  # an utterance critic
    q = "expected return" if returns else "positive goals − negative goals"
    return f"{RL_MARK} the model's final choice  {BC_MARK} the value model's best (Q: {q})"


def action_text(action: str, width: int = 18) -> str:
    """One line of an action (its newline dropped, control characters shown as ``·``)."""
    line = "".join(c if c.isprintable() else "·" for c in action.rstrip("\n"))
    return line if len(line) <= width else line[: width - 1] + "…"


def explanation_table(expl: Any) -> Table:
    """The rows of an explanation as a Rich table (value columns or probability columns)."""
    table = Table(box=None, padding=(0, 1), pad_edge=False, show_edge=False, expand=False)
    table.add_column("action", no_wrap=True)
    value = expl.kind == "value"
    for name in ("Q", "V", "A", "π_β") if value else ("p", "π_β"):
        table.add_column(name, justify="right", no_wrap=True)
    table.add_column("", no_wrap=True)
    for c in expl.candidates:
        marks = (RL_MARK if c.action == expl.rl_choice else "") + (
            BC_MARK if c.action == expl.bc_choice else ""
        )
        nums = [number(c.q), number(c.v), number(c.advantage)] if value else [f"{c.prob:.3f}"]
        style = "bold" if c.action == expl.rl_choice else ""
        table.add_row(action_text(c.action), *nums, f"{c.beta_prob:.3f}", marks, style=style)
    return table


class ValueOverlay(Static):
    """Shown with the play screen's overlay key; :meth:`show_explanation` draws one state."""

    def __init__(self, **kw: Any) -> None:
        super().__init__("", **kw)
        self.explanation: Any = None
        """The explanation drawn now (None: a note is shown instead)."""
        self.for_step: int | None = None
        """The number of steps played when it was computed (the state it belongs to)."""

    def show_note(self, text: str) -> None:
        """A line instead of numbers (computing, not available, failed)."""
        self.explanation = None
        update_static(self, RichText(text, style="italic"))

    def mark_updating(self) -> None:
        """Keep the numbers shown, dimmed (the previous state's), while the next ones compute."""
        if self.explanation is not None:
            self.show_explanation(self.explanation, self.for_step, self._engine, updating=True)

    _engine: str | None = None

    def show_explanation(
        self,
        expl: Any,
        for_step: int | None = None,
        engine: str | None = None,
        updating: bool = False,
    ) -> None:
        """Draw ``expl``; ``engine``: a line about the position from an engine (chess);
        ``updating``: these are the previous state's numbers (the next ones are being computed)."""
        self.explanation = expl
        self.for_step = for_step
        self._engine = engine
        head = f"{expl.algo} · {expl.kind} · {expl.total} {expl.source}"
        if expl.state_value is not None:
            head += f" · V(s)={number(expl.state_value)}"
        legend = RichText(legend_text(expl), style="dim")
        table = explanation_table(expl)
        parts = [RichText(head, style="bold"), table, legend]
        if expl.algo == "guided" and expl.notes:  # each candidate's predicted outcomes
            parts.append(RichText("\n".join(expl.notes[1:])))
        if engine:
            parts.append(RichText(engine))
        texts = [p for p in parts if p is not table]

        def height(width: int) -> int:  # the table's cells never wrap: a header and a line a row
            return 1 + table.row_count + sum(len(t.wrap(self.app.console, width)) for t in texts)

        # the previous state's numbers, dimmed while the next compute: the same size, no jump
        update_static(self, Styled(Group(*parts), "dim") if updating else Group(*parts), height)
