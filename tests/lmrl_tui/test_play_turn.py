"""The play screen's turn (lmrl_tui/screens/turn.py): watching, the agent thinking, taking over,
and handing back while the person's move for the agent is still in flight."""

from __future__ import annotations

import threading

from lmrl_tui.app import make_app
from lmrl_tui.screens.turn import Turn


class GatedAgent:
    """A maze agent that answers (its move, or its proposal when taken over) once let through."""

    kind = "scripted"
    name = "gated"

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.gate.set()

    def reset(self, task, seed=None) -> None:
        pass

    def act(self, history) -> str:
        self.gate.wait(10)
        return "move up\n"


async def settle(app, pilot) -> None:
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()


def status(screen) -> str:
    return str(screen.query_one("#status").content)


async def test_the_turn_through_watching_taking_over_and_handing_back_mid_move(store):
    app = make_app(store, player="ann")
    async with app.run_test(size=(120, 40)) as pilot:
        agent = GatedAgent()
        screen = app.start_session("maze-fo", agent, None, 1, None)
        await settle(app, pilot)
        assert screen.turn is Turn.WATCHING and not screen.auto  # watching alone: step by hand
        agent.gate.clear()
        await pilot.press("space")
        await pilot.pause()
        assert screen.turn is Turn.AGENT_THINKING and screen.busy and screen.thinking
        agent.gate.set()
        await settle(app, pilot)
        assert screen.turn is Turn.WATCHING and len(screen.session.transitions) == 1
        await pilot.press("t")
        await settle(app, pilot)
        assert screen.turn is Turn.TAKEN_OVER and "taken over" in status(screen)
        agent.gate.clear()  # the agent's proposal for the person's move waits
        await pilot.press("down")
        await pilot.pause()
        assert screen.turn is Turn.TAKEN_OVER_MOVING and screen.takeover and screen.busy
        await pilot.press("t")  # hand back while that move is in flight
        await pilot.pause()
        assert (
            screen.turn is Turn.HANDING_BACK
            and not screen.takeover
            and "taken over" not in status(screen)
        )
        agent.gate.set()
        await settle(app, pilot)
        assert screen.turn is Turn.WATCHING and len(screen.session.transitions) == 2
        steps = store.steps(screen.session.episode_id)
        assert steps[1]["info"]["takeover"] is True and not steps[0]["info"].get("takeover")


async def test_a_person_playing_a_task_without_a_partner_keeps_the_turn(store):
    app = make_app(store, player="ann")
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.start_session("maze-fo", None, None, 1, None)
        await settle(app, pilot)
        assert screen.turn is Turn.HUMAN and not screen.needs_worker
        await pilot.press("down")  # played at once, on the UI thread
        await settle(app, pilot)
        assert screen.turn is Turn.HUMAN and len(screen.session.transitions) == 1
        assert "Turn: 1 /" in status(screen)


class GatedWordle(GatedAgent):
    """A Wordle agent whose proposals wait at the gate too."""

    def act(self, history) -> str:
        self.gate.wait(10)
        return "crane\n"


async def test_a_refused_move_after_handing_back_leaves_the_agent_to_move(store):
    app = make_app(store, player="ann")
    async with app.run_test(size=(120, 40)) as pilot:
        agent = GatedWordle()
        screen = app.start_session("wordle", agent, None, 1, None)
        await settle(app, pilot)
        await pilot.press("t")
        await settle(app, pilot)
        assert screen.turn is Turn.TAKEN_OVER and screen.view._human
        agent.gate.clear()  # the agent's proposal for the person's move waits
        await pilot.press("a", "b", "enter")  # two letters: the task refuses it
        await pilot.pause()
        assert screen.turn is Turn.TAKEN_OVER_MOVING
        await pilot.press("t")  # hand back while that move is in flight
        await pilot.pause()
        assert screen.turn is Turn.HANDING_BACK
        agent.gate.set()
        await settle(app, pilot)
        # the person is told why, and the agent, not the person, is to move: keys type nothing
        assert screen.turn is Turn.WATCHING and not screen.view._human
        assert "five letters" in screen.view._message
        await pilot.press("c", "r")
        await pilot.press("space")  # auto-play is off: space steps the agent
        await settle(app, pilot)
        steps = store.steps(screen.session.episode_id)
        assert [s["action"] for s in steps] == ["crane\n"]
        assert not steps[0]["info"].get("takeover")
