"""Snapshot of the chess play screen (pytest-textual-snapshot), against the real Stockfish."""

from __future__ import annotations

import pytest

from lmrl_tui.app import make_app

pytestmark = pytest.mark.stockfish


def test_chess_screen_after_two_moves(snap_compare, tmp_path):
    app = make_app(tmp_path / "snap.db", player="snap")

    async def run_before(pilot):
        app.start_session("chess", None, None, 3, "snap")
        await pilot.pause()
        for move in ("e4", "Nf3"):
            await pilot.click("#move-input")
            await pilot.press(*move, "enter")
            await app.workers.wait_for_complete()
            await pilot.pause()

    assert snap_compare(app, terminal_size=(140, 40), run_before=run_before)
