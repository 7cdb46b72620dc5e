"""Snapshot of the runs screen: a finished run with its learning curves (pytest-textual-snapshot)."""

from __future__ import annotations

import json
import time

from support.app_support import settle
from textual.widgets import DataTable

from data import runs
from lmrl_tui.app import make_app
from lmrl_tui.screens.runs import RunsScreen
from lmrl_tui.views.curves import Curves


def test_runs_screen_with_curves(snap_compare, store, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a relative run folder: the same text on every machine
    monkeypatch.setattr(runs, "now", lambda: "2026-01-02T03:04:05")
    monkeypatch.setattr(RunsScreen, "POLL_SECONDS", 60.0)
    rows = [{"kind": "train", "step": i, "loss": 2.0 / i + 0.05} for i in range(1, 41)]
    rows += [
        {"kind": "eval", "step": s, "mean_return": -30 + s / 2, "normalised_lmrl": 10 + s}
        for s in (10, 20, 30, 40)
    ]
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    run_id = runs.start_run(
        store,
        kind="train",
        algo="bc",
        task="maze-fo",
        config={"lr": 0.001},
        dataset_query=None,
        episode_ids=None,
        out_dir="run",
    )
    runs.add_checkpoint(store, run_id, "run/checkpoint", 40, {})
    runs.finish_run(store, run_id, "finished", {"steps": 40})
    app = make_app(store)

    def ready() -> bool:
        """Every point of the run is in the curves and the checkpoints table has measured its row
        (DataTable sizes its columns for new rows on idle)."""
        if not isinstance(app.screen, RunsScreen):
            return False
        curves = app.screen.query(Curves)
        table = app.screen.query_one("#checkpoints", DataTable)
        return bool(
            curves
            and len(curves.first().data.xs["loss"]) == 40
            and len(curves.first().data.xs["return"]) == 4
            and table.row_count == 1
            and table.ordered_columns[0].content_width == len("run/checkpoint")
        )

    async def run_before(pilot):
        await settle(app)
        await pilot.press("t")
        deadline, held = time.monotonic() + 60, 0  # a loaded machine can take many seconds
        while held < 2 and time.monotonic() < deadline:  # ready on two checks in a row: settled
            await pilot.pause(0.05)
            await settle(app)
            held = held + 1 if ready() else 0
        assert held == 2, "the runs screen did not settle within 60 s"
        await pilot.pause()

    assert snap_compare(app, terminal_size=(120, 36), run_before=run_before)


def test_train_form_with_an_error_in_place(snap_compare, store, tmp_path, monkeypatch):
    """The train form over the runs screen, for maze-fo, after Start with a bad learning rate."""
    from lmrl_tui.screens.train_form import TrainForm

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(RunsScreen, "POLL_SECONDS", 60.0)
    app = make_app(store)

    async def run_before(pilot):
        await settle(app)
        await pilot.press("t")
        await settle(app)
        await pilot.press("n")
        for _ in range(100):
            await pilot.pause(0.05)
            if isinstance(app.screen, TrainForm):
                break
        form = app.screen
        assert isinstance(form, TrainForm)
        form.query_one("#lr").value = "fast"
        form.query_one("#steps").value = "500"
        form.action_start()
        for _ in range(100):  # the command is checked in place (its errors under the fields)
            await pilot.pause(0.05)
            await settle(app)
            if form.query_one("#lr-error").has_class("-shown"):
                break
        await pilot.pause()

    assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)
