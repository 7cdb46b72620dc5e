"""What a person types is stored as typed, beside the canonical text the task took: a person
playing the oracle, whose reply the task tidies (``y`` -> ``"Yes."``)."""

from __future__ import annotations

from textual.widgets import Input

import envs
from envs.players.session import HumanAgent
from envs.questions.twenty_questions.partner import answer as tq_answer
from lmrl_tui.app import make_app
from lmrl_tui.views.base import TaskView


async def _await_reply_request(pilot, screen) -> None:
    for _ in range(200):
        await pilot.pause(0.02)
        if getattr(screen.view, "replying", None) is not None:
            return
    raise AssertionError("the scripted guesser never asked")


async def test_a_person_oracle_s_typed_reply_is_stored_as_typed(store):
    app = make_app(store, player="bob")
    async with app.run_test(size=(140, 40)) as pilot:
        agent = envs.make_policy("twenty-questions", "strong")
        screen = app.start_session(
            "twenty-questions", agent, HumanAgent("bob", role="oracle"), 9, "bob"
        )
        screen.speed_index = 5
        typed = []
        for _ in range(2):
            await _await_reply_request(pilot, screen)
            yes = tq_answer(screen.view.pending, screen.session.task.secret).text == "Yes."
            typed.append("  y " if yes else "n")
            screen.view.replying = None  # what the view does as it sends the person's text
            screen.view.post_message(
                TaskView.Submitted("   ", role="oracle")
            )  # blank: nothing is sent
            screen.view.post_message(TaskView.Submitted(typed[-1], role="oracle"))
        await _await_reply_request(pilot, screen)
        steps = store.steps(screen.session.episode_id)
    assert [s["info"]["partner"]["typed"] for s in steps] == typed
    assert [s["info"]["partner"]["reply"] for s in steps] == [
        "Yes." if t.strip() == "y" else "No." for t in typed
    ]


async def test_a_yes_typed_into_the_reply_line_is_stored_as_typed(store):
    app = make_app(store, player="bob")
    async with app.run_test(size=(140, 40)) as pilot:
        agent = envs.make_policy("twenty-questions", "strong")
        screen = app.start_session(
            "twenty-questions", agent, HumanAgent("bob", role="oracle"), 9, "bob"
        )
        screen.speed_index = 5
        await _await_reply_request(pilot, screen)
        yes = tq_answer(screen.view.pending, screen.session.task.secret).text == "Yes."
        inp = screen.view.query_one("#chat-input", Input)
        inp.focus()
        inp.value = "yes" if yes else "nope"
        await pilot.press("enter")
        await _await_reply_request(pilot, screen)
        steps = store.steps(screen.session.episode_id)
    assert steps[0]["info"]["partner"]["typed"] == ("yes" if yes else "nope")
    assert steps[0]["info"]["partner"]["reply"] == ("Yes." if yes else "No.")
