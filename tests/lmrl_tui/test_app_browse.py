"""Browsing stored episodes and labelling steps in the app."""

from __future__ import annotations

from lmrl_tui.app import make_app
from lmrl_tui.cli import main
from lmrl_tui.screens.browse import BrowseScreen


async def test_browse_and_label_steps(db_path):
    assert main(["--db", str(db_path), "generate", "maze-fo", "--episodes", "5", "--quiet"]) == 0
    app = make_app(db_path, player="lab")
    async with app.run_test(size=(160, 40)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.press("b")
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, BrowseScreen)
        assert screen.query_one("#episodes").row_count == 5
        assert screen.episode_id == 5  # newest first, highlighted
        screen.query_one("#steps").focus()
        await pilot.press("down", "g")  # step 1 is good
        await pilot.press("down", "x")  # step 2 is bad
        await pilot.press("l")
        await pilot.pause()
        await pilot.press(*"note: wall", "enter")
        await pilot.pause()
        labels = app.store.labels(5)
        assert [(lab["step_idx"], lab["label"], lab["author"]) for lab in labels] == [
            (1, "good", "lab"),
            (2, "bad", "lab"),
            (2, "note: wall", "lab"),
        ]
        assert "good" in str(screen.query_one("#steps").get_row("1"))
