"""Small things a person notices: the turn counter at the cap, the wall bump, one name per agent,
what the home screen counts, which browse columns show in 120 columns, the help's keys."""

from __future__ import annotations

import envs
from data.session import PlaySession
from lmrl_tui.app import make_app
from lmrl_tui.screens.browse import BrowseScreen
from lmrl_tui.screens.info import HelpScreen
from lmrl_tui.screens.play import PlayScreen


def status(screen: PlayScreen) -> str:
    return str(screen.query_one("#status").render())


async def test_the_turn_counter_never_passes_the_cap(store):
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.start_session("maze-fo", None, None, 3, "cy", options={"max_steps": 3})
        await pilot.pause()
        assert "Turn: 0 / 3" in status(screen)
        wall = next(d for d, w in screen.session.state()["walls"].items() if w)
        for _ in range(3):
            await pilot.press(wall)
        await pilot.pause()
        assert "Turn: 3 / 3" in status(screen) and not screen.session.done
        await pilot.press(wall)  # the time limit: the task answers "Failure"
        await pilot.pause()
        assert screen.session.done and len(screen.session.transitions) == 4
        assert "Turn: 3 / 3 (time limit)" in status(screen) and "4 / 3" not in status(screen)


async def test_a_wall_bump_is_explained(store):
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.start_session("maze-fo", None, None, 3, "cy")
        await pilot.pause()
        walls = screen.session.state()["walls"]
        wall = next(d for d, w in walls.items() if w)
        free = next(d for d, w in walls.items() if not w)
        await pilot.press(wall)
        await pilot.pause()
        moves = screen.query_one("#moves").lines
        assert moves[-1].endswith("r=-1  (wall bump)")
        assert "You bumped into a wall" in str(screen.view.query_one("#hint").render())
        await pilot.press(free)
        await pilot.pause()
        assert "bump" not in screen.query_one("#moves").lines[-1]
        assert "bumped" not in str(screen.view.query_one("#hint").render())


async def test_an_agent_has_one_name_in_the_dialog_and_on_the_play_screen(store):
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.workers.wait_for_complete()
        app.new_episode("maze-fo", seed=2)
        await pilot.pause()
        dialog = app.screen
        agent = dialog.query_one("#agent")
        labels = {value: str(label) for label, value in agent._options}
        agent.value = "strong"
        await pilot.click("#start")
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, PlayScreen)
        assert f"Player: {labels['strong']}" in status(screen) and "scripted:" not in status(screen)
        # Started without the dialog (the policy's own name is "optimal"): the same name.
        other = app.start_session("maze-po", envs.make_policy("maze-po", "optimal"), None, 2, None)
        await pilot.pause()
        assert f"Player: {labels['strong']}" in status(other)


async def test_the_home_screen_counts_finished_of_all_episodes(store):
    for seed, leave in ((1, False), (2, True), (3, True)):
        s = PlaySession(store, "maze-fo", player="ann", seed=seed)
        s.start()
        if leave:
            s.human_input("up")
            s.abandon()
        else:
            agent = envs.make_policy("maze-fo", "optimal")
            agent.reset(s.task, seed)
            while not s.done:
                s.human_input(agent.act(s.task.history()).split()[1])
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        table = app.screen.query_one("#tasks")
        labels = [str(c.label) for c in table.columns.values()]
        assert "Finished / all" in labels
        assert str(table.get_cell("maze-fo", "Finished / all")) == "1 / 3"
        assert str(table.get_cell("maze-po", "Finished / all")) == "0 / 0"
        detail = str(app.screen.query_one("#detail").render())
        assert "2 abandoned" in detail and "human 1" in detail


async def test_browse_shows_status_and_return_first(db_path):
    from lmrl_tui.cli import main

    assert main(["--db", str(db_path), "generate", "maze-fo", "--episodes", "2", "--quiet"]) == 0
    app = make_app(db_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.press("b")
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, BrowseScreen)
        episodes = screen.query_one("#episodes")
        names = [str(c.label) for c in episodes.columns.values()]
        assert names[:5] == ["id", "task", "status", "steps", "return"]
        # Everything up to the return fits in the table's width without scrolling.
        upto = sum(c.get_render_width(episodes) for c in list(episodes.columns.values())[:5])
        assert upto <= episodes.size.width
        steps = screen.query_one("#steps")
        assert [str(c.label) for c in steps.columns.values()][:3] == ["#", "reward", "labels"]


async def test_the_home_help_lists_every_key(store):
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        text = app.screen.markdown
        for key in ("`enter`", "`b`", "`t`", "`r`", "`?`", "`ctrl+q`"):
            assert key in text, key
