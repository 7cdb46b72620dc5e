"""A person on one side of an episode: the partner that waits for the UI's answer, and the record
of how a person gave a move or a reply (typed, a button, a key, a list)."""

from __future__ import annotations

import queue
import time
from collections.abc import Callable, Sequence
from typing import Any

from envs.core.api import Task, Text, clean_text
from envs.players.agents import HUMAN

TYPED, BUTTON, KEY, LIST = "typed", "button", "key", "list"
HUMAN_VIAS = (TYPED, BUTTON, KEY, LIST)
"""How a person gave a move or a reply (``info["via"]``, ``info["partner"]["via"]``): typed it,
pressed a button, pressed a key bound to it (an arrow key, ``y``), or picked it from a list."""


def how_given(via: str, pressed: str | None, text: str) -> dict[str, Any]:
    """The record of how a person gave a move: ``{"via": via}``, with the key or button pressed
    (``list``: ``{"chosen": "list"}``, as older records say it)."""
    if via not in HUMAN_VIAS:
        raise ValueError(f"via must be one of {', '.join(HUMAN_VIAS)}, not {via!r}")
    if via == TYPED:
        return {"via": TYPED}
    if via == LIST:
        return {"via": LIST, "chosen": "list"}
    return {"via": via, via: pressed if pressed is not None else text}


class HumanAgent:
    """A person on one side of a task. ``act`` blocks (in a worker thread) until the UI answers.

    The UI sets ``on_request`` to learn that a reply is wanted, then calls :meth:`answer`.
    """

    kind = HUMAN

    def __init__(self, name: str = HUMAN, role: str = "agent") -> None:
        self.name = name
        self.role = role
        self.on_request: Callable[[str, Sequence[Text]], None] | None = None
        self._answers: queue.Queue[tuple[str, dict[str, Any]] | None] = queue.Queue()
        self.last_said: dict[str, Any] | None = None
        """How the person gave the last reply, for the record (None once recorded): ``via``
        (``typed``, ``button`` or ``key``), what was ``typed`` as typed, or the ``button`` or
        ``key`` pressed, the ``reply`` the task took when it differs from what was typed, and
        ``think_ms``."""

    def reset(self, task: Task, seed: int | None = None) -> None:
        self._answers = queue.Queue()

    def act(self, history: Sequence[Text]) -> str:
        started = time.monotonic()
        if self.on_request is not None:
            self.on_request(self.role, history)
        got = self._answers.get()
        if got is None:
            raise SessionClosed("the session was closed while waiting for a reply")
        reply, said = got
        said["think_ms"] = int((time.monotonic() - started) * 1000)
        self.last_said = said
        return reply

    def answer(
        self, text: str, typed: str | None = None, *, via: str = TYPED, pressed: str | None = None
    ) -> None:
        """Give the reply the waiting :meth:`act` returns.

        ``via`` says how the person gave it: ``typed`` (``typed`` is what they typed when the task
        tidied it into ``text`` with ``parse_reply``, kept as typed), or ``button`` / ``key`` with
        ``pressed`` the button's label or the key's name (nothing was typed: none is recorded)."""
        if via not in HUMAN_VIAS:
            raise ValueError(f"via must be one of {', '.join(HUMAN_VIAS)}, not {via!r}")
        text = clean_text(text)
        said: dict[str, Any] = {"via": via}
        if via == TYPED:
            said["typed"] = (text if typed is None else clean_text(typed))[:2000]
            if said["typed"] != text:
                said["reply"] = text
        else:
            said[via] = pressed if pressed is not None else text
            said["reply"] = text
        self._answers.put((text, said))

    def cancel(self) -> None:
        """Wake a waiting :meth:`act` with :class:`SessionClosed`."""
        self._answers.put(None)

    def replay(self, replies: Sequence[str]) -> None:
        """Answer the next :meth:`act` calls with ``replies`` (recorded ones: an episode being
        replayed); one call more raises :class:`SessionClosed` instead of waiting for a person."""
        for reply in replies:
            self._answers.put((reply, {"via": "replay"}))
        self._answers.put(None)

    def replayed(self) -> bool:
        """After :meth:`replay`: whether exactly its replies were used. Forgets any left over."""
        exact = False
        try:
            exact = self._answers.get_nowait() is None and self._answers.empty()
        except queue.Empty:
            pass
        self._answers = queue.Queue()
        self.last_said = None
        return exact


class SessionClosed(RuntimeError):
    pass
