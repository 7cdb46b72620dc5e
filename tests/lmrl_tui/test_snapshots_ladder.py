"""Snapshots of the ladder and side-by-side screens (pytest-textual-snapshot)."""

from __future__ import annotations

import envs
from data.generate import generate
from data.store import Store
from lmrl_tui.app import make_app
from lmrl_tui.screens.ladder import LadderScreen
from lmrl_tui.screens.side_by_side import SideBySideScreen


def _store(path) -> None:
    with Store(path) as store:
        generate(store, "maze-fo", envs.make_policy("maze-fo", "strong"), 3, seed=2)
        generate(store, "maze-fo", envs.make_policy("maze-fo", "random"), 3, seed=2)


def test_ladder_screen(snap_compare, tmp_path):
    _store(tmp_path / "snap.db")
    app = make_app(tmp_path / "snap.db", player="snap")

    async def run_before(pilot):
        await app.workers.wait_for_complete()
        app.push_screen(LadderScreen("maze-fo"))
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()

    assert snap_compare(app, terminal_size=(140, 30), run_before=run_before)


def test_side_by_side_screen(snap_compare, tmp_path):
    _store(tmp_path / "snap.db")
    app = make_app(tmp_path / "snap.db", player="snap")

    async def run_before(pilot):
        await app.workers.wait_for_complete()
        app.push_screen(SideBySideScreen(1, 4))  # strong and random, both from seed 2
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("right", "right", "right")
        await pilot.pause()

    assert snap_compare(app, terminal_size=(160, 40), run_before=run_before)
