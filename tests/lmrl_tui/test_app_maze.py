"""Drive the real app with Textual's Pilot: open, start a maze, press keys to the goal, check the store."""

from __future__ import annotations

import envs
from envs.maze.task import ACTIONS
from lmrl_tui.app import make_app
from lmrl_tui.screens.dialogs import NewEpisodeDialog
from lmrl_tui.screens.home import HomeScreen
from lmrl_tui.screens.play import PlayScreen

KEY_FOR = {"move up\n": "up", "move down\n": "down", "move left\n": "left", "move right\n": "right"}


def optimal_keys(seed: int) -> list[str]:
    task = envs.make("maze-fo")
    agent = envs.make_policy("maze-fo", "optimal")
    ep = envs.run_episode(task, agent, seed)
    return [KEY_FOR[t.action] for t in ep.transitions]


async def test_human_plays_maze_to_goal_through_the_dialog(store):
    app = make_app(store, player="ann")
    async with app.run_test(size=(140, 40)) as pilot:
        assert isinstance(app.screen, HomeScreen)
        await app.workers.wait_for_complete()  # the task table fills off the UI thread
        await pilot.pause()
        await pilot.press("enter")  # the highlighted task (maze-fo) -> new-episode dialog
        await pilot.pause()
        assert isinstance(app.screen, NewEpisodeDialog)
        await pilot.click("#seed")
        await pilot.pause()
        assert app.focused is app.screen.query_one("#seed")
        await pilot.press("7", "enter")  # enter in a field moves on to the next one
        await pilot.pause()
        assert isinstance(app.screen, NewEpisodeDialog)
        await pilot.click("#start")
        await pilot.pause()
        assert isinstance(app.screen, PlayScreen)
        keys = optimal_keys(7)
        for k in keys:
            await pilot.press(k)
        await pilot.pause()
        session = (
            app.screen_stack[-2].session
            if not isinstance(app.screen, PlayScreen)
            else app.screen.session
        )
        assert session.done and session.success
    ep = store.recent_episodes(1)[0]
    assert ep["task"] == "maze-fo" and ep["seed"] == 7 and ep["player"] == "ann"
    assert ep["status"] == "finished" and ep["success"] == 1 and ep["source"] == "human"
    assert ep["agent_kind"] == "human"
    steps = store.steps(ep["id"])
    # arrow keys are recorded as the keys pressed, not as typed text
    assert [s["typed"] for s in steps] == [None] * len(keys)
    assert [(s["info"]["via"], s["info"]["key"]) for s in steps] == [("key", k) for k in keys]
    assert all(s["think_ms"] is not None and s["think_ms"] >= 0 for s in steps)
    task = envs.make("maze-fo")
    task.reset(7)
    assert ep["return"] == sum(s["reward"] for s in steps) == task.state()["optimal_return"]
    # Replaying the recorded actions from the recorded seed reproduces the episode.
    again = envs.replay(envs.make("maze-fo"), ep["seed"], [s["action"] for s in steps])
    assert again.first_observation == ep["first_observation"]
    assert [(t.observation, t.reward) for t in again.transitions] == [
        (s["observation"], s["reward"]) for s in steps
    ]


async def test_wall_bump_and_summary_then_home(store):
    app = make_app(store, player="bob")
    async with app.run_test(size=(140, 40)) as pilot:
        screen = app.start_session("maze-fo", None, None, 3, "bob")
        await pilot.pause()
        start = screen.session.state()["position"]
        # Find a direction with a wall next to the start and bump into it.
        walls = screen.session.state()["walls"]
        bump = next(d for d, w in walls.items() if w)
        await pilot.press(bump)
        await pilot.pause()
        assert screen.session.state()["position"] == start
        assert screen.session.total_return == -1
        for k in optimal_keys(3):
            await pilot.press(k)
        await pilot.pause()
        assert screen.session.done
        await pilot.press("h")  # summary -> home
        await pilot.pause()
        assert isinstance(app.screen, HomeScreen)
    ep = store.recent_episodes(1)[0]
    assert ep["n_steps"] == len(optimal_keys(3)) + 1 and ep["status"] == "finished"


async def test_watch_scripted_agent_step_and_autoplay(store):
    app = make_app(store)
    async with app.run_test(size=(140, 40)) as pilot:
        agent = envs.make_policy("maze-po", "optimal")
        screen = app.start_session("maze-po", agent, None, 11, None)
        await pilot.pause()
        assert not screen.auto  # watching alone: step by hand
        await pilot.press("space")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert len(screen.session.transitions) == 1
        for _ in range(5):
            await pilot.press("plus")
        await pilot.press("p")
        for _ in range(100):
            await pilot.pause(0.05)
            if screen.session.done:
                break
        assert screen.session.done and screen.session.success
    ep = store.recent_episodes(1)[0]
    assert (
        ep["source"] == "scripted" and ep["agent_name"] == "optimal" and ep["status"] == "finished"
    )


async def test_leaving_mid_episode_marks_it_abandoned(store):
    app = make_app(store)
    async with app.run_test(size=(140, 40)) as pilot:
        app.start_session("maze-fo", None, None, 5, "cy")
        await pilot.pause()
        await pilot.press("up", "escape", "a")  # a: abandon (asked once there are steps)
        await pilot.pause()
        assert isinstance(app.screen, HomeScreen)
    ep = store.recent_episodes(1)[0]
    assert ep["status"] == "abandoned" and ep["n_steps"] == 1


async def test_help_shows_database_path(store):
    app = make_app(store)
    async with app.run_test(size=(140, 40)) as pilot:
        app.start_session("maze-fo", None, None, 1, "di")
        await pilot.pause()
        await pilot.press("question_mark")
        await pilot.pause()
        md = app.screen.query_one("Markdown")
        assert str(store.path) in md._markdown
        assert len(ACTIONS) == 4
