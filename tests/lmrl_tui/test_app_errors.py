"""Failures in the app's workers reach the person as one kind of red toast, and the app goes on."""

from __future__ import annotations

from support.app_support import spy_notifications

import envs
from lmrl_tui.app import make_app
from lmrl_tui.screens.dialogs import NewEpisodeDialog
from lmrl_tui.screens.home import HomeScreen
from lmrl_tui.screens.play import PlayScreen


class _BrokenAgent:
    """An agent whose model falls over on its first move."""

    kind = "test"
    name = "broken"

    def reset(self, task, seed=None):
        pass

    def act(self, history):
        raise RuntimeError("the model fell over")


async def test_a_failed_step_is_one_error_toast_and_stops_auto_play(store):
    app = make_app(store, player="eve")
    async with app.run_test(size=(140, 40)) as pilot:
        await app.workers.wait_for_complete()
        seen = spy_notifications(app)
        screen = app.start_session("maze-fo", _BrokenAgent(), None, 2, None)
        await pilot.pause()
        screen.auto = True
        await pilot.press("space")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert seen == [("RuntimeError: the model fell over", "The step failed", "error", 8)]
        assert app.screen is screen and not screen.auto and not screen.busy
        assert screen.session.transitions == []
        await pilot.press("space")  # the person may try again: the same toast, nothing else
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert len(seen) == 2 and seen[1] == seen[0]


async def test_an_agent_that_cannot_load_is_explained_in_the_dialog_not_a_crash(store):
    app = make_app(store, player="eve")
    async with app.run_test(size=(140, 40)) as pilot:
        await app.workers.wait_for_complete()
        seen = spy_notifications(app)
        app.new_episode("maze-fo", seed=1, checkpoint="no-such-policy")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, NewEpisodeDialog)
        await pilot.click("#start")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.screen is dialog  # the form stays as typed, the message under its field
        message = str(dialog.query_one("#checkpoint-error").render())
        assert message.startswith("unknown policy 'no-such-policy' for maze-fo")  # no class name
        assert seen == [] and store.count() == 0


async def test_a_broken_task_module_is_reported_and_the_rest_are_listed(store, monkeypatch):
    real_ids = envs.ids
    registered = real_ids()  # the modules that did import (the registry imports each only once)
    calls: list[int] = []

    def ids_failing_once() -> list[str]:
        calls.append(1)
        if len(calls) == 1:
            raise ImportError("no module named 'knowledge_base'")
        return real_ids()

    monkeypatch.setattr(envs, "ids", ids_failing_once)
    app = make_app(store)
    seen = spy_notifications(app)
    async with app.run_test(size=(140, 40)) as pilot:
        table = app.screen.query_one("#tasks")
        await settle(app, pilot, until=lambda: bool(seen) and table.row_count == len(registered))
        assert seen == [
            (
                "ImportError: no module named 'knowledge_base'",
                "Could not load the tasks",
                "error",
                30,
            )
        ]
        assert table.row_count == len(registered) and not table.loading


async def test_cannot_start_uses_the_same_error_path(store):
    app = make_app(store)
    async with app.run_test(size=(140, 40)) as pilot:
        await app.workers.wait_for_complete()
        seen = spy_notifications(app)
        assert app.start_session("wordle", None, None, 1, "eve", options={"colour": "red"}) is None
        await pilot.pause()
        assert not isinstance(app.screen, PlayScreen)
        ((message, title, severity, timeout),) = seen
        assert (title, severity, timeout) == ("Cannot start", "error", 10) and "colour" in message


async def settle(app, pilot, until=lambda: True) -> None:
    """Let the workers finish (failed ones included: ``wait_for_complete`` would re-raise) and,
    on a loaded machine where a worker may not have started yet, wait for ``until`` as well."""
    for _ in range(400):
        await pilot.pause(0.05)
        if all(w.is_finished for w in app.workers) and until():
            return


async def test_a_database_that_fails_under_the_home_screen_is_a_toast_not_a_crash(
    store, monkeypatch
):
    import sqlite3

    import lmrl_tui.screens.home as home

    def broken(store):
        raise sqlite3.DatabaseError("database disk image is malformed")

    monkeypatch.setattr(home, "source_counts", broken)
    app = make_app(store)
    seen = spy_notifications(app)
    toast = (
        "DatabaseError: database disk image is malformed",
        "Could not read the database",
        "error",
        30,
    )
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot, until=lambda: toast in seen)
        assert toast in seen
        assert isinstance(app.screen, HomeScreen) and app.is_running


async def test_browse_and_runs_that_cannot_read_are_toasts(store, monkeypatch):
    import sqlite3

    def broken(*a, **kw):
        raise sqlite3.OperationalError("no such table: episodes")

    monkeypatch.setattr(type(store), "recent_episodes", broken)
    monkeypatch.setattr("lmrl_tui.screens.runs.recent_runs", broken)
    app = make_app(store)
    seen = spy_notifications(app)

    def titles() -> list[str]:
        return [t for _, t, severity, _ in seen if severity == "error"]

    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("b")
        await settle(app, pilot, until=lambda: "Could not read the episodes" in titles())
        await pilot.press("escape", "t")
        await settle(app, pilot, until=lambda: "Could not read the training runs" in titles())
        errors = titles()
        assert (
            "Could not read the episodes" in errors and "Could not read the training runs" in errors
        )
        assert app.is_running
