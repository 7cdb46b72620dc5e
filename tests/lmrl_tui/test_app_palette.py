"""The command palette finds and runs the app's own commands."""

from __future__ import annotations

from textual.command import CommandList, CommandPalette

from lmrl_tui.app import make_app
from lmrl_tui.commands import export_help
from lmrl_tui.screens.dialogs import NewEpisodeDialog
from lmrl_tui.screens.home import HomeScreen
from lmrl_tui.screens.ladder import LadderScreen


async def _run_from_palette(app, pilot, query: str, want: str) -> None:
    await pilot.press("ctrl+p")
    await pilot.pause()
    assert isinstance(app.screen, CommandPalette)
    await pilot.press(*query)
    options = app.screen.query_one(CommandList)
    for _ in range(200):  # the providers search in the background, their hits come in batches
        await pilot.pause(0.05)
        if options.option_count and str(options.get_option_at_index(0).prompt).startswith(want):
            break
    assert str(options.get_option_at_index(0).prompt).startswith(want)
    await pilot.press("enter")  # the first command is highlighted
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()


async def test_typing_in_the_palette_finds_and_runs_the_apps_commands(db_path):
    app = make_app(db_path)
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.pause()
        await _run_from_palette(app, pilot, "ladder", "Ladder")
        assert (
            isinstance(app.screen, LadderScreen) and app.screen.task_id == "maze-fo"
        )  # the first task
        await pilot.press("escape")
        await _run_from_palette(app, pilot, "maze-po", "New episode: maze-po")
        assert isinstance(app.screen, NewEpisodeDialog) and app.screen.task_id == "maze-po"
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, HomeScreen)


def test_export_help_is_the_commands_own():
    text = export_help()
    assert "--format" in text and text.startswith("# Export episodes")
