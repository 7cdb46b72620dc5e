"""The contract between the play screen and a task's view.

The play screen owns the :class:`~data.session.PlaySession`; a view only draws the task's
``state()`` and posts :class:`TaskView.Submitted` with what the person typed or pressed
("attributes down, messages up"). Views never step the task themselves.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from textual.message import Message
from textual.widget import Widget

from envs.core import TaskSpec, Text


class TaskView(Widget):
    """Base class for a task's play view."""

    class Submitted(Message):
        """The person acted: ``typed`` is their raw input, ``role`` the side they play;
        ``chosen``: they picked it from a list of the task's commands instead of typing it;
        ``via``: how they gave it (``typed``, ``key``, ``button``; ``list`` when ``chosen``) and
        ``pressed`` the key's name or the button's label (the record says so, never "typed").
        Blank input is never a move: the play screen ignores it."""

        def __init__(
            self,
            typed: str,
            role: str = "agent",
            *,
            chosen: bool = False,
            raw: str | None = None,
            via: str = "typed",
            pressed: str | None = None,
        ) -> None:
            super().__init__()
            self.typed = typed
            self.role = role
            self.chosen = chosen
            self.via = "list" if chosen else via
            self.pressed = pressed
            self.raw = typed if raw is None else raw
            """What the person typed when the view already tidied it into ``typed``."""

    class HintShown(Message):
        """The person opened the hint ``name`` (``"legal_moves"``, ``"wordle_hint"``): their next
        step records it in ``info["hints"]``."""

        def __init__(self, name: str) -> None:
            super().__init__()
            self.name = name

    def __init__(
        self, spec: TaskSpec, *, human_roles: frozenset[str] = frozenset(), **kw: Any
    ) -> None:
        super().__init__(**kw)
        self.spec = spec
        self.human_roles = human_roles

    def show_state(self, state: dict[str, Any]) -> None:
        """Redraw from the task's structured state (after reset and after every step)."""
        raise NotImplementedError

    agent_paused = False
    """Set by the play screen: the agent is to move but waits for a key (auto-play off, or its
    move was cancelled), so the view must not say that it is thinking."""

    def set_turn(self, role: str | None, human: bool) -> None:
        """Whose turn it is; ``human`` says whether the person at the keyboard should act now."""

    def agent_turn_text(self, role: str, thinking: str) -> str:
        """What the view says while ``role`` (an agent, not the person) is to move: ``thinking``,
        or, when the agent waits for a key, how to make it move."""
        if self.agent_paused:
            who = "The agent" if role == "agent" else f"{role.capitalize()} (the agent)"
            return f"{who} to move: space steps, p auto-plays"
        return thinking

    def step_note(self, info: dict[str, Any], state: dict[str, Any]) -> str | None:
        """A few words for the moves log about the step just played (its ``info``, the task's
        ``state()`` after it) when its reward alone does not explain it; None: nothing to add."""
        return None

    def result_text(self) -> str | None:
        """The episode's outcome in the task's own words for the summary (``No sale: the buyer
        walked away``); None: the summary says success or failure."""
        return None

    def hints_shown(self) -> list[str]:
        """The hints on screen now (a step taken while one is shown is an assisted step)."""
        return []

    def show_error(self, message: str) -> None:
        """Explain why the person's input was not accepted (it did not count as a move)."""
        self.notify(message, severity="warning", timeout=4)

    def request_reply(self, role: str, history: Sequence[Text]) -> None:
        """A person must answer as ``role`` (the partner side); by default, focus the input."""
        self.set_turn(role, True)
