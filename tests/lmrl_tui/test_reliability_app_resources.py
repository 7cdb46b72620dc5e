"""Resource hygiene of the app: after the app (driven by Textual's Pilot) exits with a chess game
against Stockfish and a maze on its screens, no child process, thread or file descriptor is
left beyond what the process held before. Each app run has an event loop of its own, as
``lmrl play`` has (``asyncio.run``): the loop's default-executor threads belong to the loop, and
a loop shared with other tests keeps them, idle, for as long as it lives."""

from __future__ import annotations

import asyncio
import gc

import pytest
from support.processes import Baseline

from data.store import Store
from lmrl_tui.app import make_app

pytestmark = [pytest.mark.stockfish, pytest.mark.slow]  # two app runs: ~8-13 s


async def _play(db) -> int:
    """One app run: a chess move against Stockfish (the engine runs), then a maze over it;
    quit with both on the screen stack. Returns how many engine processes ran mid-way."""
    store = Store(db)
    app = make_app(store, player="kim")
    before = Baseline()
    async with app.run_test(size=(140, 40)) as pilot:
        app.start_session("chess", None, None, 1, "kim")
        await pilot.pause()
        await pilot.click("#move-input")
        await pilot.press(*"e4", "enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        engines = len(before.new_children())
        app.start_session("maze-fo", None, None, 2, "kim")
        await pilot.pause()
        await pilot.press("left", "right")
        await app.workers.wait_for_complete()
        await pilot.pause()
    store.close()
    gc.collect()
    return engines


def test_the_app_leaves_nothing_behind_when_it_exits(tmp_path) -> None:
    db = tmp_path / "app.db"
    asyncio.run(_play(db))  # the first run imports and caches what stays for good
    before = Baseline()
    assert asyncio.run(_play(db)) == 1
    assert before.leaks(fd_slack=0) == {}
    store = Store(db)
    try:
        eps = store.recent_episodes(10)
        assert sorted(e["task"] for e in eps) == ["chess", "chess", "maze-fo", "maze-fo"]
        assert {e["status"] for e in eps} == {"abandoned"}  # left when the app closed
    finally:
        store.close()
