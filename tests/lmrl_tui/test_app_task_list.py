"""The home screen fills its task table from the list kept by the last start, then checks it."""

from __future__ import annotations

import json
import threading

from support.app_support import settle

import envs
from lmrl_tui import task_list
from lmrl_tui.app import make_app
from lmrl_tui.screens.home import HomeScreen
from lmrl_tui.task_list import TaskSummary


async def test_a_kept_task_list_fills_the_table_at_once_and_is_put_right(db_path, monkeypatch):
    real = task_list.all_summaries()
    stale = [TaskSummary("maze-fo", "Old title", "old", ("agent",), 5, (-1.0, 0.0))]
    task_list.save(stale)
    release = threading.Event()

    def slow_summaries():  # the task modules still loading
        release.wait(10)
        return real

    monkeypatch.setattr(task_list, "all_summaries", slow_summaries)
    app = make_app(db_path)
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.pause()
        home = app.screen
        assert isinstance(home, HomeScreen) and home.tasks_ready
        table = home.query_one("#tasks")
        assert table.row_count == 1 and table.get_row("maze-fo")[1] == "Old title"
        release.set()
        await settle(app)
        await pilot.pause()
        assert [str(k.value) for k in table.rows] == envs.ids()
        assert table.get_row("maze-fo")[1] == envs.spec("maze-fo").title
    assert task_list.load_cached() == real  # kept for the next start


def test_a_list_kept_for_other_task_files_is_not_used(tmp_path):
    path = tmp_path / "tasks.json"
    task_list.save([TaskSummary("maze-fo", "t", "s", ("agent",), 5, (-1.0, 0.0))], path)
    assert task_list.load_cached(path) is not None
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "fingerprint": "another"}))
    assert task_list.load_cached(path) is None
    path.write_text("not json")
    assert task_list.load_cached(path) is None


def _store_with_maze_episodes(db_path, n: int) -> None:
    from data.generate import generate
    from data.store import Store

    with Store(db_path) as store:
        generate(store, "maze-fo", envs.make_policy("maze-fo", "behaviour"), n, seed=0)


async def test_the_first_frame_has_the_stores_counts_and_unchanged_counts_draw_nothing(
    db_path, monkeypatch
):
    from textual.widgets import DataTable

    import lmrl_tui.screens.home as home_module

    monkeypatch.setattr(
        home_module, "FIRST_STATS_WAIT", 5.0
    )  # a loaded machine still reads in time
    _store_with_maze_episodes(db_path, 2)
    task_list.save(task_list.all_summaries())
    app = make_app(db_path)
    async with app.run_test(size=(160, 40)):
        home = app.screen  # no pause: as the app is ready
        assert isinstance(home, HomeScreen) and home.tasks_ready
        table = home.query_one("#tasks", DataTable)
        assert table.get_row("maze-fo")[3] == "2 / 2" and table.get_row("wordle")[3] == "0 / 0"
        updates = []
        monkeypatch.setattr(DataTable, "update_cell", lambda self, *a, **k: updates.append(a))
        home._fill_stats(dict(home.counts))  # a reload that found nothing new (each screen resume)
        assert updates == []
        home._fill_stats({})
        assert len(updates) == 3 * len(home.tasks)


async def test_a_slow_or_failing_store_fills_the_counts_later(db_path, monkeypatch):
    import lmrl_tui.screens.home as home_module

    _store_with_maze_episodes(db_path, 1)
    task_list.save(task_list.all_summaries())
    real = home_module.source_counts
    released = (
        threading.Event()
    )  # the store answers only when the test lets it (no race with start-up)

    def slow(store):
        released.wait(30)
        return real(store)

    monkeypatch.setattr(home_module, "source_counts", slow)
    app = make_app(db_path)
    async with app.run_test(size=(160, 40)) as pilot:
        table = app.screen.query_one("#tasks")
        assert table.get_row("maze-fo")[3] == "…"  # the table did not wait for the store
        released.set()
        await settle(app)
        for _ in range(200):
            await pilot.pause(0.05)
            if table.get_row("maze-fo")[3] != "…":
                break
        assert table.get_row("maze-fo")[3] == "1 / 1"

    def broken(store):
        raise RuntimeError("disk I/O error")

    monkeypatch.setattr(home_module, "source_counts", broken)
    app = make_app(db_path)
    async with app.run_test(size=(160, 40)) as pilot:
        for _ in range(200):  # the worker reads again, fails and says so (a loaded machine: slowly)
            await pilot.pause(0.05)
            if any("disk I/O error" in str(n.message) for n in app._notifications):
                break
        assert any("disk I/O error" in str(n.message) for n in app._notifications)
        assert app.screen.query_one("#tasks").get_row("maze-fo")[3] == "…"


async def test_refreshes_during_a_read_are_one_more_read_and_cancel_nothing(db_path, monkeypatch):
    from textual.worker import Worker

    import lmrl_tui.screens.home as home_module

    _store_with_maze_episodes(db_path, 1)
    task_list.save(task_list.all_summaries())
    real = home_module.source_counts
    release, reads = threading.Event(), []

    def held(store):  # a read that takes a while (a busy disk)
        reads.append(1)
        release.wait(10)
        return real(store)

    cancelled, real_cancel = [], Worker.cancel

    def cancel(worker):
        cancelled.append(worker.group)
        real_cancel(worker)

    app = make_app(db_path)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(app)
        home = app.screen
        assert isinstance(home, HomeScreen)
        monkeypatch.setattr(home_module, "source_counts", held)
        monkeypatch.setattr(Worker, "cancel", cancel)
        home.action_refresh_stats()
        for _ in range(100):
            await pilot.pause(0.02)
            if reads:
                break
        _store_with_maze_episodes(db_path, 1)  # a second episode lands while the first read runs
        for _ in range(3):
            home.action_refresh_stats()  # the person presses r three times
        release.set()
        await settle(app)
        table = home.query_one("#tasks")
        for _ in range(40):
            await pilot.pause(0.05)
            if table.get_row("maze-fo")[3] == "2 / 2":
                break
        assert len(reads) == 2 and "home-stats" not in cancelled
        assert table.get_row("maze-fo")[3] == "2 / 2"


def test_the_shipped_task_list_is_the_tasks():
    assert task_list.load_shipped() == task_list.all_summaries(), (
        "a task changed: write the shipped list again with python -m lmrl_tui.task_list"
    )


async def test_a_first_start_fills_the_table_from_the_shipped_list(db_path, monkeypatch, tmp_path):
    shipped = tmp_path / "shipped.json"
    shipped.write_text(
        json.dumps(
            {
                "tasks": [
                    {
                        "id": "maze-fo",
                        "title": "Shipped title",
                        "summary": "s",
                        "roles": ["agent"],
                        "max_turns": 5,
                        "reward_range": [-1, 0],
                    }
                ]
            }
        )
    )
    monkeypatch.setattr(task_list, "SHIPPED", shipped)
    monkeypatch.setattr(task_list.load_shipped, "__defaults__", (shipped,))
    assert task_list.load_cached() is None  # no list kept by an earlier start
    release = threading.Event()
    real = task_list.all_summaries()
    monkeypatch.setattr(task_list, "all_summaries", lambda: (release.wait(10), real)[1])
    app = make_app(db_path)
    async with app.run_test(size=(160, 40)) as pilot:
        home = app.screen
        table = home.query_one("#tasks")
        assert (
            home.tasks_ready
            and not table.loading
            and table.get_row("maze-fo")[1] == "Shipped title"
        )
        release.set()
        await settle(app)
        await pilot.pause()
        assert [str(k.value) for k in table.rows] == envs.ids()  # put right by the check
    assert task_list.load_cached() == real
    assert task_list.load_shipped(tmp_path / "missing.json") is None
