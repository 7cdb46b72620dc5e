"""The training-runs screen: runs from the store, live curves and metrics from the run folder, a
run whose process died, the details pane, and watching a checkpoint."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from support.app_support import settle

from data import runs
from lmrl_tui import runs_control
from lmrl_tui.app import make_app
from lmrl_tui.screens.dialogs import NewEpisodeDialog
from lmrl_tui.screens.runs import EMPTY, RunsScreen
from lmrl_tui.views.curves import Curves, MetricsTail, row_points

COMPOSITION = {
    "rows": [
        {
            "source": "scripted",
            "player": None,
            "agent": "scripted:behaviour",
            "partner": None,
            "episodes": 12,
            "steps": 140,
            "mean_return": -11.5,
            "success_rate": 1.0,
        }
    ],
    "total": {"episodes": 12, "steps": 140, "mean_return": -11.5, "success_rate": 1.0},
    "selected_by": "task maze-fo, status finished",
}


@pytest.fixture(autouse=True)
def fast_poll(monkeypatch):
    monkeypatch.setattr(RunsScreen, "POLL_SECONDS", 0.2)


def add_run(store, out_dir, status="finished", config=None) -> int:
    run_id = runs.start_run(
        store,
        kind="train",
        algo="bc",
        task="maze-fo",
        config=config or {},
        dataset_query=None,
        episode_ids=None,
        out_dir=str(out_dir),
    )
    runs.add_checkpoint(store, run_id, str(out_dir / "checkpoint"), 40, {})
    if status != "running":
        runs.finish_run(store, run_id, status, {"steps": 40})
    return run_id


async def open_runs(app, pilot) -> RunsScreen:
    await settle(app)
    await pilot.press("t")
    await settle(app)
    await pilot.pause()
    assert isinstance(app.screen, RunsScreen)
    return app.screen


async def test_curves_and_metrics_follow_the_growing_file(store, tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    rows = [{"kind": "train", "step": i, "loss": 1.0 / (i + 1)} for i in range(1, 6)]
    (out / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows) + "{broken\n")
    add_run(store, out, config={"lr": 0.001, "n_embd": 32, "dataset": COMPOSITION})
    app = make_app(store)
    async with app.run_test(size=(110, 40)) as pilot:
        screen = await open_runs(app, pilot)
        curves = screen.query_one(Curves)
        assert screen.run is not None and screen.run["algo"] == "bc"
        assert curves.data.xs["loss"] == [1, 2, 3, 4, 5] and curves.data.ys["loss"][
            -1
        ] == pytest.approx(1 / 6)
        assert curves.data.xs["return"] == [] and "loss=0.1667" in screen.metric_lines[-1]
        drawn = curves.redraws
        with (out / "metrics.jsonl").open("a") as f:  # an eval row, and a line still being written
            f.write(
                json.dumps(
                    {"kind": "eval", "step": 5, "mean_return": -12.25, "normalised_lmrl": 61.5}
                )
                + "\n"
            )
            f.write('{"kind": "train", "step": 6, "lo')
        await pilot.pause(0.6)
        await settle(app)
        await pilot.pause()
        assert curves.data.xs["return"] == [5] and curves.data.ys["normalised"] == [61.5]
        assert curves.data.xs["loss"] == [1, 2, 3, 4, 5] and curves.redraws > drawn
        with (out / "metrics.jsonl").open("a") as f:
            f.write('ss": 0.125}\n')
        screen.action_reload()  # (the timer polls too: see above)
        await settle(app)
        await pilot.pause()
        assert curves.data.xs["loss"][-1] == 6 and curves.data.ys["loss"][-1] == 0.125
        assert screen.metric_lines[-1] == "train step 6: loss=0.125"
        assert "normalised_lmrl=61.5" in screen.metric_lines[-2]
        details = str(screen.query_one("#details").render())
        assert "12 episodes" in details and "scripted" in details and "n_embd = 32" in details
        info = str(screen.query_one("#run-info").render())
        assert "finished" in info and "No training runs yet" not in info
        screen.query_one("#tabs").active = "tab-metrics"
        with (out / "metrics.jsonl").open(
            "a"
        ) as f:  # a row far wider than the pane: wrapped, not cut
            f.write(
                json.dumps(
                    {"kind": "train", "step": 7, **{f"metric_{k}": k / 3 for k in range(12)}}
                )
                + "\n"
            )
        screen.action_reload()
        await settle(app)
        await pilot.pause()
        log = screen.query_one("#metrics")
        shown = "".join(strip.text for strip in log.lines)
        assert "train step 7:" in shown and "metric_11=3.667" in shown
        assert max(strip.cell_length for strip in log.lines) <= log.scrollable_content_region.width
        narrow = len(log.lines)
        await pilot.resize_terminal(150, 40)  # wrapped again at the new width
        await pilot.pause()
        assert len(log.lines) < narrow and "metric_11=3.667" in "".join(
            strip.text for strip in log.lines
        )
        await pilot.press("w")
        await pilot.pause()
        assert isinstance(app.screen, NewEpisodeDialog)
        assert app.screen.query_one("#checkpoint").value == str(out / "checkpoint")


async def test_a_running_run_whose_process_died_shows_as_dead(store, tmp_path):
    out = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()  # its id is free now
    argv = runs_control.train_argv(tmp_path / "e.db", "bc", "maze-fo", out)
    out.mkdir()
    (out / runs_control.LAUNCH_FILE).write_text(
        json.dumps(
            {
                "pid": proc.pid,
                "out_dir": str(out),
                "argv": argv,
                "log": str(out / "train.log"),
                "started_at": "2026-01-01T00:00:00+00:00",
            }
        )
    )
    dead = add_run(store, out, status="running")
    other = add_run(store, tmp_path / "cli-run", status="running")  # started outside the app
    app = make_app(store)
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await open_runs(app, pilot)
        await pilot.pause(0.5)
        table = screen.query_one("#runs")
        assert table.get_row(str(dead))[3] == "dead" and table.get_row(str(other))[3] == "running"
        await pilot.press("down")  # the newest run first: `other`, then the dead one
        await pilot.pause(0.5)
        assert screen.key == str(dead)
        info = str(screen.query_one("#run-info").render())
        assert "dead" in info and f"process {proc.pid} is gone" in info
        await pilot.press("s")
        await pilot.pause()
        assert isinstance(app.screen, RunsScreen)  # nothing to stop: no dialog
    assert runs.get_run(store, dead)["status"] == "running"  # the app does not rewrite what it saw


async def test_empty_store_says_so_and_a_listed_run_does_not(store, tmp_path):
    app = make_app(store)
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await open_runs(app, pilot)
        assert str(screen.query_one("#run-info").render()) == EMPTY
        add_run(store, tmp_path / "r")
        await pilot.pause(0.5)
        await settle(app)
        await pilot.pause()
        assert screen.query_one("#runs").row_count == 1
        assert "No training runs yet" not in str(screen.query_one("#run-info").render())


def test_metrics_tail_reads_only_new_complete_lines(tmp_path):
    p = tmp_path / "m.jsonl"
    tail = MetricsTail(p)
    assert tail.read_new() == ([], False)
    p.write_text('[1, 2]\n{"a": 1}\nnot json\n{"b"')
    assert tail.read_new() == ([{"a": 1}], False)
    with p.open("a") as f:
        f.write(": 2}\n")
    assert tail.read_new() == ([{"b": 2}], False)
    assert tail.read_new() == ([], False)
    p.write_text('{"c": 3}\n')  # rewritten shorter: read again from the start
    assert tail.read_new() == ([{"c": 3}], True)


def test_row_points_by_kind():
    assert row_points({"kind": "train", "step": 3, "loss": 0.5}) == {"loss": (3, 0.5)}
    assert row_points({"kind": "eval", "step": 3, "mean_return": -2, "normalised_lmrl": 40.0}) == {
        "return": (3, -2),
        "normalised": (3, 40.0),
    }
    assert row_points({"kind": "train", "round": 2, "mean_return": 1.5, "loss": float("nan")}) == {
        "return": (2, 1.5)
    }
    assert row_points({"kind": "eval", "loss": 1.0}) == {}


def test_a_started_run_imports_its_own_modules_not_the_working_folders(tmp_path, monkeypatch):
    work = tmp_path / "work"
    work.mkdir()
    (work / "random.py").write_text("raise SystemExit('the working folder shadowed random')\n")
    monkeypatch.chdir(work)
    out = tmp_path / "run"
    launch = runs_control.start(
        [sys.executable, "-c", "import random, lmrl_tui; print('ran', random.random() < 2)"], out
    )
    runs_control._CHILDREN[launch.pid].wait(timeout=60)
    assert "ran True" in (out / runs_control.LOG_FILE).read_text()
