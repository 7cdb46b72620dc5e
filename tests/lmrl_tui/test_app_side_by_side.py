"""Two stored episodes replayed side by side, opened from Browse, stepping together."""

from __future__ import annotations

import envs
from data.generate import generate
from data.store import Store
from lmrl_tui.app import make_app
from lmrl_tui.screens.browse import BrowseScreen
from lmrl_tui.screens.side_by_side import PickEpisodeDialog, SideBySideScreen


def _text(screen, selector: str) -> str:
    return str(screen.query_one(selector).render())


async def _open_browse(app, pilot) -> BrowseScreen:
    await app.workers.wait_for_complete()
    await pilot.press("b")
    await app.workers.wait_for_complete()
    await pilot.pause()
    assert isinstance(app.screen, BrowseScreen)
    return app.screen


async def test_mark_two_episodes_and_step_them_together(db_path):
    with Store(db_path) as store:
        generate(store, "maze-fo", envs.make_policy("maze-fo", "strong"), 1, seed=5)  # episode 1
        generate(store, "maze-fo", envs.make_policy("maze-fo", "random"), 1, seed=5)  # episode 2
        strong_steps, random_steps = store.steps(1), store.steps(2)
    app = make_app(db_path)
    async with app.run_test(size=(200, 50)) as pilot:
        await _open_browse(app, pilot)  # newest first: episode 2 under the cursor
        await pilot.press("m", "down", "v")
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, SideBySideScreen) and screen.episode_ids == (2, 1)
        assert "Episode 2" in _text(screen, "#left-title") and "Episode 1" in _text(
            screen, "#right-title"
        )
        assert "step 0/" in _text(screen, "#left-status")
        await pilot.press("right", "n", "right")  # the maze's own arrow keys must not take them
        await pilot.pause()
        assert screen.idx == 3
        left, right = _text(screen, "#left-status"), _text(screen, "#right-status")
        assert f"action: {random_steps[2]['action'].strip()} ·" in left
        assert f"action: {strong_steps[2]['action'].strip()} ·" in right
        so_far = sum(s["reward"] for s in strong_steps[:3])
        assert f"return so far {so_far:g}" in right
        # Each pane draws the maze at that step: the agent (◉) where the replay put it.
        pos = screen.replays["right"].frame(3).state["position"]
        grid = str(screen.query_one("#right-view #grid").render()).splitlines()
        assert grid[pos[0]][2 * pos[1]] == "◉"
        await pilot.press("p")
        await pilot.pause()
        assert screen.idx == 2
        await pilot.press("end")
        await pilot.pause()
        assert screen.idx == max(len(strong_steps), len(random_steps))
        assert "(ended)" in _text(screen, "#right-status")  # the strong policy finished first
        await pilot.press("home")
        await pilot.pause()
        assert screen.idx == 0 and "start" in _text(screen, "#left-status")
        # Without a mark, v asks for the second episode (the same task's, same seed first).
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, BrowseScreen) and app.screen.marked is None
        await pilot.press("v")
        await pilot.pause()
        assert isinstance(app.screen, PickEpisodeDialog)
        assert app.screen.query_one("#pick").row_count == 1
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, SideBySideScreen) and app.screen.episode_ids == (1, 2)
