"""Leaving an episode and coming back: Escape asks first when there is something to lose; an
episode left in progress by a crash is offered on the next start (resumed by replaying its steps,
or marked abandoned); leaving while a person's reply is awaited is silent."""

from __future__ import annotations

from support.app_support import spy_notifications

import envs
from data.session import PlaySession
from envs.players.session import HumanAgent
from envs.questions.twenty_questions.partner import answer as tq_answer
from lmrl_tui.app import make_app
from lmrl_tui.screens.home import HomeScreen
from lmrl_tui.screens.leave import LeaveDialog, UnfinishedDialog
from lmrl_tui.screens.play import PlayScreen


async def test_escape_leaves_at_once_when_nothing_was_played(store):
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        app.start_session("maze-fo", None, None, 5, "cy")
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, HomeScreen)
    (ep,) = store.recent_episodes(5)
    assert ep["status"] == "abandoned" and ep["n_steps"] == 0


async def test_escape_asks_first_when_the_episode_has_steps(store):
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.start_session("maze-fo", None, None, 5, "cy")
        await pilot.pause()
        await pilot.press("up", "escape")
        await pilot.pause()
        assert isinstance(app.screen, LeaveDialog)
        assert "1 step" in str(app.screen.query_one("#question").render())
        await pilot.press("escape")  # stay
        await pilot.pause()
        assert app.screen is screen and not screen.session.done
        assert store.recent_episodes(1)[0]["status"] == "in_progress"
        await pilot.press("down", "escape")
        await pilot.pause()
        await pilot.click("#stay")
        await pilot.pause()
        assert app.screen is screen and len(screen.session.transitions) == 2
        await pilot.press("escape", "a")  # abandon (enter would keep it: Keep is focused)
        await pilot.pause()
        assert isinstance(app.screen, HomeScreen)
        await app.workers.wait_for_complete()
        await pilot.pause()
        counts = app.screen.counts["maze-fo"]  # read as the home screen came back
        assert counts.abandoned == 1 and counts.in_progress == 0
    ep = store.recent_episodes(1)[0]
    assert ep["status"] == "abandoned" and ep["n_steps"] == 2


async def _await_reply_request(pilot, screen) -> None:
    view = screen.view
    for _ in range(100):
        await pilot.pause(0.02)
        if getattr(view, "replying", None) is not None:
            return
    raise AssertionError("the scripted guesser never asked")


async def test_leaving_while_a_scripted_guesser_waits_for_the_person_is_silent(store):
    app = make_app(store, player="bob")
    async with app.run_test(size=(140, 40)) as pilot:
        await app.workers.wait_for_complete()
        seen = spy_notifications(app)
        agent = envs.make_policy("twenty-questions", "strong")
        screen = app.start_session(
            "twenty-questions", agent, HumanAgent("bob", role="oracle"), 9, "bob"
        )
        screen.speed_index = 5
        await _await_reply_request(pilot, screen)
        task = screen.session.task
        await pilot.press(
            "y" if tq_answer(screen.view.pending, task.secret).text == "Yes." else "n", "enter"
        )
        await _await_reply_request(pilot, screen)  # the second question waits for the person
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, LeaveDialog)
        await pilot.click("#abandon")
        await app.workers.wait_for_complete()
        for _ in range(5):
            await pilot.pause(0.05)
        assert isinstance(app.screen, HomeScreen)
        assert [s for s in seen if s[2] == "error"] == []
    ep = store.recent_episodes(1)[0]
    assert ep["status"] == "abandoned" and ep["n_steps"] == 1


def crash_maze(store, seed: int, keys: list[str], player: str = "ann") -> int:
    """Play ``keys`` in a maze and stop as if the app died (the episode stays in progress)."""
    session = PlaySession(store, "maze-fo", player=player, seed=seed)
    session.start()
    for k in keys:
        session.human_input(k)
    return session.episode_id


async def wait_for_screen(app, pilot, kind):
    for _ in range(100):
        await pilot.pause(0.02)
        if isinstance(app.screen, kind) and app.screen.is_mounted:
            await pilot.pause()  # let on_mount fill it
            return app.screen
    raise AssertionError(f"no {kind.__name__}; the screen is {type(app.screen).__name__}")


async def test_a_crashed_episode_is_offered_on_start_and_resumes_where_it_was(store):
    eid = crash_maze(store, 3, ["up", "left"])
    recorded = [s["observation"] for s in store.steps(eid)]
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        dialog = await wait_for_screen(app, pilot, UnfinishedDialog)
        assert f"{eid}" in str(dialog.query_one("#unfinished").get_row(str(eid)))
        await pilot.click("#resume")
        screen = await wait_for_screen(app, pilot, PlayScreen)
        session = screen.session
        assert session.episode_id == eid and session.player == "ann" and session.seed == 3
        assert [t.step.observation for t in session.transitions] == recorded
        assert "Turn: 2 /" in str(screen.query_one("#status").render())
        assert len(screen.query_one("#moves").lines) == 3  # the moves so far, then "(resumed here)"
        task = envs.make("maze-fo")
        task.reset(3)
        for a in ("move up\n", "move left\n"):
            task.step(a)
        assert session.state()["position"] == task.state()["position"]
        optimal = envs.make_policy("maze-fo", "optimal")
        optimal.reset(task, 3)
        keys = []
        while not task.state()["done"]:
            action = optimal.act(task.history())
            keys.append(action.split()[1])
            task.step(action)
        for k in keys:
            await pilot.press(k)
        await pilot.pause()
        assert session.done and session.success
    ep = store.episode(eid)
    assert ep["status"] == "finished" and ep["n_steps"] == 2 + len(keys)
    assert [s["idx"] for s in store.steps(eid)] == list(range(2 + len(keys)))
    assert store.count() == 1


async def test_a_crashed_episode_can_be_marked_abandoned(store):
    first = crash_maze(store, 3, ["up"])
    second = crash_maze(store, 4, ["down", "down"], player="bea")
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        dialog = await wait_for_screen(app, pilot, UnfinishedDialog)
        assert dialog.query_one("#unfinished").row_count == 2
        await pilot.click("#abandon")  # the highlighted one: the newest
        await pilot.pause()
        assert store.episode(second)["status"] == "abandoned"
        assert store.episode(first)["status"] == "in_progress"
        assert app.screen is dialog and dialog.query_one("#unfinished").row_count == 1
        await pilot.pause(0.25)  # a button ignores a second click within 0.2 s
        await pilot.click("#abandon")
        await pilot.pause()
        assert isinstance(app.screen, HomeScreen)
    assert store.episode(first)["status"] == "abandoned"
    again = make_app(store)
    async with again.run_test(size=(120, 40)) as pilot:
        await again.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(again.screen, HomeScreen)  # nothing left to offer


async def test_an_episode_whose_replay_differs_is_not_resumed(store):
    eid = crash_maze(store, 3, ["up", "left"])
    store.db.execute(
        "UPDATE steps SET observation = 'somewhere else' WHERE episode_id = ? AND idx = 1", [eid]
    )
    store.db.conn.commit()
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        dialog = await wait_for_screen(app, pilot, UnfinishedDialog)
        await pilot.click("#resume")
        for _ in range(20):
            await pilot.pause(0.02)
        assert app.screen is dialog
        message = str(dialog.query_one("#resume-error").render())
        assert "step 2" in message and "cannot be resumed" in message
        assert dialog.query_one("#resume").disabled
        await pilot.click("#abandon")
        await pilot.pause()
        assert isinstance(app.screen, HomeScreen)
    assert store.episode(eid)["status"] == "abandoned" and store.count() == 1


async def test_a_crashed_episode_with_a_human_partner_resumes_with_the_recorded_replies(store):
    agent = envs.make_policy("twenty-questions", "strong")
    partner = HumanAgent("bob", role="oracle")
    session = PlaySession(
        store,
        "twenty-questions",
        agent=agent,
        partner=partner,
        player="bob",
        seed=9,
        agent_choice="strong",
    )
    session.start()
    for _ in range(3):
        question = session.agent_action()
        partner.answer(tq_answer(question, session.task.secret).text)
        session._apply(question, typed=None, think_ms=1)
    eid = session.episode_id
    recorded = [s["observation"] for s in store.steps(eid)]
    app = make_app(store)
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for_screen(app, pilot, UnfinishedDialog)
        await pilot.click("#resume")
        screen = await wait_for_screen(app, pilot, PlayScreen)
        resumed = screen.session
        assert isinstance(resumed.partner, HumanAgent) and resumed.partner.name == "bob"
        assert [t.step.observation for t in resumed.transitions] == recorded
        screen.speed_index = 5
        await _await_reply_request(pilot, screen)  # the guesser asks its 4th question; bob answers
        truthful = tq_answer(screen.view.pending, resumed.task.secret).text
        await pilot.press("y" if truthful == "Yes." else "n", "enter")
        for _ in range(50):
            await pilot.pause(0.02)
            if len(resumed.transitions) == 4:
                break
        assert len(resumed.transitions) == 4
    steps = store.steps(eid)
    assert [s["idx"] for s in steps][:4] == [0, 1, 2, 3]


async def test_rejected_attempts_after_the_last_step_are_kept_when_the_person_leaves(store):
    app = make_app(store)
    async with app.run_test(size=(140, 40)) as pilot:
        app.start_session("wordle", None, None, 4, "cy")
        await pilot.pause()
        await pilot.press(*"crane", "enter", *"cranx", "enter", "escape")
        await pilot.pause()
        assert isinstance(app.screen, LeaveDialog)
        await pilot.press("a")
        await pilot.pause()
        assert isinstance(app.screen, HomeScreen)
        app.start_session("wordle", None, None, 5, "cy")  # then the app is closed with one pending
        await pilot.pause()
        await pilot.press(*"ab", "enter")
        await pilot.pause()
    first, second = sorted(store.recent_episodes(2), key=lambda e: e["id"])
    assert first["status"] == "abandoned" and [a["typed"] for a in first["meta"]["attempts"]] == [
        "cranx"
    ]
    assert second["status"] == "abandoned" and [a["typed"] for a in second["meta"]["attempts"]] == [
        "ab"
    ]
