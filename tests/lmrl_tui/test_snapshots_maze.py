"""Snapshot of the maze play screen (pytest-textual-snapshot)."""

from __future__ import annotations

from lmrl_tui.app import make_app


def test_maze_fo_screen(snap_compare, tmp_path):
    app = make_app(tmp_path / "snap.db", player="snap")

    async def run_before(pilot):
        app.start_session("maze-fo", None, None, 2, "snap")
        await pilot.pause()
        for key in ("down", "right", "up"):
            await pilot.press(key)
        await pilot.pause()

    assert snap_compare(app, terminal_size=(120, 36), run_before=run_before)


def test_maze_po_screen_shows_only_what_was_seen(snap_compare, tmp_path):
    app = make_app(tmp_path / "snap.db", player="snap")

    async def run_before(pilot):
        app.start_session("maze-po", None, None, 2, "snap")
        await pilot.pause()
        for key in ("up", "left", "left"):
            await pilot.press(key)
        await pilot.pause()

    assert snap_compare(app, terminal_size=(120, 36), run_before=run_before)
