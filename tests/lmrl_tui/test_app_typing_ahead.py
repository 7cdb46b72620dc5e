"""Typing ahead: what a person types right behind a tab, or while the new-episode dialog is still
opening, lands in the field it was typed for (it went to the field being left, and was lost)."""

from __future__ import annotations

import asyncio

from textual import events
from textual.widgets import DataTable, Input

from lmrl_tui.app import make_app
from lmrl_tui.screens.dialogs import NewEpisodeDialog
from lmrl_tui.screens.episode_form import FormSelect


async def tasks_listed(app, pilot) -> None:
    """Until the home screen lists the tasks (a test's first start imports every task module in a
    worker first; an enter before that has no task to open, as for a person)."""
    while app.screen.query_one("#tasks", DataTable).row_count == 0:
        await pilot.pause(0.02)


async def open_dialog(app, pilot) -> NewEpisodeDialog:
    """Enter on the first task, and the new-episode dialog once it has mounted."""
    await tasks_listed(app, pilot)
    await pilot.press("enter")
    await app.workers.wait_for_complete()
    await pilot.pause()
    assert isinstance(app.screen, NewEpisodeDialog)
    return app.screen


async def test_keys_typed_behind_enter_and_tab_reach_the_seed(store):
    app = make_app(store, player="kim")
    async with app.run_test(size=(140, 40)) as pilot:
        await tasks_listed(app, pilot)
        app.post_message(events.Key("enter", None))
        while not isinstance(app.screen, NewEpisodeDialog):  # pushed, not yet mounted
            await asyncio.sleep(0)
        # all read at once, as a terminal delivers them while the dialog mounts (0.7 s here)
        for key, char in [("tab", None), ("4", "4"), ("2", "2"), ("tab", None), ("tab", None)]:
            app.post_message(events.Key(key, char))
        await pilot.pause(0.3)
        await app.workers.wait_for_complete()
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, NewEpisodeDialog)
        assert dialog.query_one("#seed", Input).value == "42"
        assert dialog.focused is not None and dialog.focused.id not in (
            "task",
            "seed",
        )  # two tabs on


async def test_text_that_comes_back_unused_goes_to_the_focused_field_once(store):
    app = make_app(store, player="kim")
    async with app.run_test(size=(140, 40)) as pilot:
        dialog = await open_dialog(app, pilot)
        seed, task = dialog.query_one("#seed", Input), dialog.query_one("#task", FormSelect)
        seed.focus()
        await pilot.pause()
        task._forward_event(events.Key("7", "7"))  # read while the task list still had the focus
        task._forward_event(events.Paste("13"))
        await pilot.pause()
        assert seed.value == "713"
        await pilot.press("9")  # typed into the field: once, not again through the screen
        assert seed.value == "7139"


async def test_keys_typed_behind_enter_in_a_field_reach_the_next_field(store):
    """Enter in a text field moves on the moment it is read: the seed keeps "7", and what follows
    goes on (it went into the seed as "78" while the field's Submitted message travelled)."""
    app = make_app(store, player="kim")
    async with app.run_test(size=(140, 40)) as pilot:
        dialog = await open_dialog(app, pilot)
        assert dialog.focused is not None
        assert dialog.focused.id == "task"
        # all read at once: enter on the task list, the seed, enter, then on past the agent list
        for key, char in [
            ("enter", None),
            ("7", "7"),
            ("enter", None),
            ("8", "8"),
            ("enter", None),
        ]:
            app.post_message(events.Key(key, char))
        await pilot.pause(0.3)
        assert dialog.query_one("#seed", Input).value == "7"
        assert dialog.focused is not None and dialog.focused.id == "checkpoint"
        assert isinstance(app.screen, NewEpisodeDialog)  # nothing started


async def test_enter_in_the_last_field_still_starts_the_episode(store):
    app = make_app(store, player="kim")
    async with app.run_test(size=(140, 40)) as pilot:
        dialog = await open_dialog(app, pilot)
        dialog.query_one("#player", Input).focus()
        await pilot.pause()
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause(0.2)
        assert not isinstance(app.screen, NewEpisodeDialog)  # the episode opened


async def test_arrows_typed_ahead_of_enter_choose_the_task_that_opens(store):
    """down, down, enter read at once (typed quickly, or pasted ahead by a script): the dialog is
    that of the task two rows down (enter was a priority binding, handled before the table had
    moved its cursor: the first task opened)."""
    app = make_app(store, player="kim")
    async with app.run_test(size=(140, 40)) as pilot:
        await tasks_listed(app, pilot)
        table = app.screen.query_one("#tasks", DataTable)
        start = table.cursor_row
        assert app.focused is table and any(  # the key bar still says what enter does
            "Play / watch" in str(w.render())
            for w in app.screen.query("*")
            if type(w).__name__ == "Footer"
        )
        for key in ("down", "down", "enter"):
            app.post_message(events.Key(key, None))
        while not (isinstance(app.screen, NewEpisodeDialog) and app.screen.focused is not None):
            await pilot.pause(0.02)  # mounted: an app closed while its selects mount fails
        expected = str(table.coordinate_to_cell_key((start + 2, 0)).row_key.value)
        assert app.screen.task_id == expected
