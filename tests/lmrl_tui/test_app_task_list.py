"""The home screen fills its task table from the list kept by the last start, then checks it."""

from __future__ import annotations

import json
import threading

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
        await app.workers.wait_for_complete()
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
