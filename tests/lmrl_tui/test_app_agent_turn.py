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
        assert (
            not screen.auto
            and "space steps" in turn_line(screen)
            and "thinking" not in turn_line(screen)
        )
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


async def test_a_task_whose_only_side_is_the_agent_says_so_once(store):
    """Chess, endgames and Text-Nav call their acting side "agent": the waiting line reads "The
    agent to move", not "The agent (the agent)", and it fits beside the board."""
    import envs
    from lmrl_tui.views.chess import ChessView

    app = make_app(store, player="ann")
    async with app.run_test(size=(140, 44)) as pilot:
        for task_id, widget in (("textnav-fo", "#turn"), ("endgames", "#hint")):
            screen = app.start_session(task_id, envs.make_policy(task_id, "random"), None, 3, None)
            await pilot.pause()
            line = str(screen.query_one(widget, Static).content)
            assert line == "The agent to move: space steps, p auto-plays", (task_id, line)
            if isinstance(screen.view, ChessView):
                hint = screen.query_one("#hint", Static)
                assert hint.size.width >= len(line), hint.size  # not cut at the board's width
                assert (
                    "Your move" not in screen.query_one("#move-input").placeholder
                )  # a disabled box
            app.pop_screen()
            await pilot.pause()
