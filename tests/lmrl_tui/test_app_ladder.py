"""The ladder screen: opened from the home screen, ranked, filtered by source."""

from __future__ import annotations

import envs
from data.generate import generate
from data.store import Store
from lmrl_tui.app import make_app
from lmrl_tui.screens.home import HomeScreen
from lmrl_tui.screens.ladder import LadderScreen


async def test_ladder_from_home_ranks_and_filters(db_path):
    with Store(db_path) as store:
        generate(store, "maze-fo", envs.make_policy("maze-fo", "random"), 3, seed=0)
        generate(store, "maze-fo", envs.make_policy("maze-fo", "strong"), 3, seed=0)
    app = make_app(db_path)
    async with app.run_test(size=(160, 40)) as pilot:
        while not (isinstance(app.screen, HomeScreen) and app.screen.tasks_ready):
            await pilot.pause(0.01)
        await pilot.press("l")  # the highlighted task: maze-fo, the first
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, LadderScreen) and screen.task_id == "maze-fo"
        table = screen.query_one("#ladder")
        assert table.row_count == 2
        first, second = table.get_row_at(0), table.get_row_at(1)
        assert first[:2] == ["1", "optimal"] and second[:2] == ["2", "random"]
        assert float(first[6]) > float(second[6]) and first[9] == "100%"
        screen.query_one("#ladder-source").value = "human"
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert table.row_count == 0
        await pilot.press("escape")
        assert isinstance(app.screen, HomeScreen)
