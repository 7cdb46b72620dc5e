"""What the task view says while an agent is to move: that it thinks only while it does; when it
waits for a key (auto-play off, or its move was cancelled with escape), how to make it move."""

from __future__ import annotations

import threading

from textual.widgets import Static

from lmrl_tui.app import make_app
from lmrl_tui.screens.play import THINKING_NOTE_AFTER


class SlowGuesser:
    """An agent whose question waits until the test releases it."""

    name = "slow"
    kind = "scripted"

    def __init__(self) -> None:
        self.release = threading.Event()

    def reset(self, task, seed=None) -> None:
        pass

    def act(self, history) -> str:
        self.release.wait(10)
        return "Is it alive?\n"


def turn_line(screen) -> str:
    return str(screen.query_one("#chat-turn", Static).content)


async def test_the_view_says_thinking_only_while_the_agent_thinks(store):
    app = make_app(store, player="ann")
    async with app.run_test(size=(120, 44)) as pilot:
        agent = SlowGuesser()
        screen = app.start_session("twenty-questions", agent, None, 3, None)
        await pilot.pause()
        assert not screen.auto and "space steps" in turn_line(screen) and "thinking" not in turn_line(screen)
        await pilot.press("space")
        await pilot.pause(THINKING_NOTE_AFTER + 0.2)
        assert screen.thinking and "is thinking" in turn_line(screen)
        await pilot.press("escape")  # the move is cancelled: the agent waits again, and says so
        await pilot.pause()
        assert not screen.thinking and "space steps" in turn_line(screen)
        agent.release.set()
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert screen.session.transitions == [] and "space steps" in turn_line(screen)
        await pilot.press("p")  # auto-play on: the agent is about to move, so it thinks
        await pilot.pause()
        assert screen.auto and "space steps" not in turn_line(screen)
