"""Training from the app: the train form (its checks, shown in place), the process control
(launch, SIGINT then SIGTERM), and a real tiny run started from the form and stopped from the app."""

from __future__ import annotations

import json
import os
import signal
import sys
import time

import pytest
from support.app_support import settle

import envs
from data import runs
from data.generate import generate
from lmrl_tui import runs_control
from lmrl_tui.app import make_app
from lmrl_tui.runs_control import algorithm_names, parse_train_argv
from lmrl_tui.screens.runs import RunsScreen
from lmrl_tui.screens.train_form import StopDialog, TrainForm
from lmrl_tui.views.curves import Curves


@pytest.fixture(autouse=True)
def fast_poll(monkeypatch):
    monkeypatch.setattr(RunsScreen, "POLL_SECONDS", 0.25)
    # A run honours SIGINT within a second on a quiet machine, but on a heavily loaded one its
    # interpreter's exit took more than the app's 15 s once (then SIGTERM ends it and the stop
    # reads as SIGTERM). What these tests check is that SIGINT stops it: give it the time.
    monkeypatch.setattr(RunsScreen, "STOP_GRACE", 90.0)


async def open_form(app, pilot) -> TrainForm:
    await settle(app)
    await pilot.press("t")
    await pilot.pause()
    await pilot.press("n")
    await pilot.pause()
    assert isinstance(app.screen, TrainForm)
    return app.screen


def fill(form: TrainForm, **values) -> None:
    for name, value in values.items():
        form.query_one(f"#{name.replace('_', '-')}").value = value


def error_under(form: TrainForm, name: str) -> str:
    err = form.query_one(f"#{name}-error")
    return str(err.render()) if err.has_class("-shown") else ""


def test_the_form_offers_every_registered_algorithm():
    from training.algorithms import ALGORITHMS  # torch-free

    assert algorithm_names() == list(ALGORITHMS) and "bc" in ALGORITHMS and "ppo" in ALGORITHMS
    assert (
        parse_train_argv(["train", "bc", "--task", "maze-fo", "--out", "x", "--max-steps", "2"])
        is None
    )
    assert "--lr" in parse_train_argv(
        ["train", "bc", "--task", "maze-fo", "--out", "x", "--lr", "fast"]
    )


async def test_the_form_explains_bad_input_in_place(store, tmp_path):
    app = make_app(store)
    async with app.run_test(size=(120, 60)) as pilot:
        form = await open_form(app, pilot)
        fill(form, steps="ten", seed="-1", n_embd="0", extra="--n-head two")
        form.query_one("#steps").focus()
        await pilot.press("enter")  # enter: the next field
        assert app.focused is form.query_one("#seed")
        form.query_one("#out").focus()
        await pilot.press("enter")  # in the last field: start
        await pilot.pause()
        assert "whole number" in error_under(form, "steps")
        assert "negative" in error_under(form, "seed") and "above 0" in error_under(form, "n-embd")
        assert app.focused is form.query_one("#steps")  # the first field in error, to fix at once
        assert isinstance(app.screen, TrainForm)
        fill(form, steps="5", seed="1", n_embd="")
        form.action_start()  # the fields are fine; the parser refuses the extra flag
        await pilot.pause()
        assert error_under(form, "steps") == ""
        assert "--n-head" in str(form.query_one("#error").render())
        fill(form, extra="")
        form.action_start()  # nothing in the store to train on
        await settle(app)
        await pilot.pause()
        assert "no stored maze-fo episodes" in error_under(form, "source")
        assert isinstance(app.screen, TrainForm) and not form.query_one("#start").disabled
        form.query_one("#algo").value = "ppo"
        await pilot.pause()
        assert not form.query_one("#source-row").display and form.query_one("#init-row").display
        form.action_start()
        await pilot.pause()
        assert "starts from a checkpoint" in error_under(form, "init")
        assert "--rounds" in form.argv and "--max-steps" not in form.argv
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, RunsScreen)
    assert not list(tmp_path.glob("runs/*"))  # nothing was started


def test_stop_sends_sigint_then_sigterm(tmp_path):
    ignores_sigint = "import signal, time; signal.signal(signal.SIGINT, signal.SIG_IGN); print('up', flush=True); time.sleep(60)"
    launch = runs_control.start([sys.executable, "-c", ignores_sigint], tmp_path / "out")
    assert runs_control.read_launch(tmp_path / "out") == launch
    deadline = time.monotonic() + 20
    while "up" not in (tmp_path / "out" / "train.log").read_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert runs_control.is_alive(launch) and os.getpgid(launch.pid) == launch.pid  # its own session
    assert runs_control.stop(launch, grace=0.5, term_grace=5) == "SIGTERM"
    assert not runs_control.is_alive(launch)
    with pytest.raises(ProcessLookupError):
        os.kill(launch.pid, 0)  # reaped, not a zombie
    assert runs_control.stop(launch) == "already gone"


def test_a_run_started_by_an_app_that_ignores_sigint_still_stops_on_it(tmp_path):
    """An app started as a shell's background job ignores SIGINT, and its children inherit that:
    the ``lmrl`` it starts takes SIGINT back (a long ``generate`` here, torch-free), so "stop"
    ends it by SIGINT and it reports the interruption, not a SIGTERM 15 s later."""
    argv = [sys.executable, "-m", "lmrl_tui.cli", "--db", str(tmp_path / "s.db")]
    argv += ["generate", "maze-fo", "--episodes", "1000000", "--seed", "0", "--quiet"]
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        launch = runs_control.start(argv, tmp_path / "out")
    finally:
        signal.signal(signal.SIGINT, before)
    deadline = time.monotonic() + 60
    while not (tmp_path / "s.db").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)
    assert runs_control.is_alive(launch)
    assert runs_control.stop(launch, grace=20, term_grace=5) == "SIGINT"
    assert "interrupted" in (tmp_path / "out" / "train.log").read_text()


@pytest.mark.slow
async def test_start_a_tiny_run_from_the_form_and_stop_it(store, db_path, tmp_path):
    generate(store, "maze-fo", envs.make_policy("maze-fo", "behaviour"), 8, seed=0)
    app = make_app(store)
    async with app.run_test(size=(140, 60)) as pilot:
        form = await open_form(app, pilot)
        fill(
            form,
            steps="100000",
            seed="3",
            n_layer="1",
            n_embd="16",
            batch_size="8",
            eval_episodes="0",
            log_every="1",
            extra="--n-head 2 --vocab-size 300",
            out=str(tmp_path / "runs" / "tiny"),
        )
        form.action_start()
        await settle(app)
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, RunsScreen), str(form.query_one("#error").render())
        launch = screen.launch
        assert launch is not None and launch.out_dir == str(tmp_path / "runs" / "tiny")
        assert launch.argv[3:5] == ["--db", str(db_path)] and "--max-steps" in launch.argv
        curves = screen.query_one(Curves)
        deadline = time.monotonic() + 90  # torch's import and the tokenizer, on a busy machine
        while len(curves.data.xs["loss"]) < 3 and time.monotonic() < deadline:
            assert runs_control.is_alive(launch), "\n".join(runs_control.log_tail(launch))
            await pilot.pause(0.25)
        assert len(curves.data.xs["loss"]) >= 3, "\n".join(runs_control.log_tail(launch))
        run_id = int(screen.key)  # the pending launch became its run's row
        assert (
            screen.run is not None
            and screen.run["status"] == "running"
            and screen.run["algo"] == "bc"
        )
        assert json.loads((tmp_path / "runs" / "tiny" / "config.json").read_text())["seed"] == 3
        await pilot.press("s")
        await pilot.pause()
        assert isinstance(app.screen, StopDialog)
        await pilot.press("y")
        await pilot.pause()
        await settle(app)
        await pilot.pause(0.6)
        assert not runs_control.is_alive(launch)
        with pytest.raises(ProcessLookupError):
            os.kill(launch.pid, 0)
        row = runs.get_run(store, run_id)
        assert row["status"] == "stopped" and "SIGINT" in row["metrics"]["stopped"]
        assert row["ended_at"] is not None
        assert screen.query_one("#runs").get_row(str(run_id))[3] == "stopped"
        assert "lmrl: interrupted" in (tmp_path / "runs" / "tiny" / "train.log").read_text()


def test_a_command_line_run_records_its_own_process(tmp_path, monkeypatch):
    out = tmp_path / "cli-run"
    mine = runs_control.record_self(out)
    assert mine is not None and mine.origin == "cli" and mine.pid == os.getpid() and mine.log == ""
    assert runs_control.read_launch(out) == mine and runs_control.is_alive(mine)
    assert runs_control.log_tail(mine) == []
    assert runs_control.record_self(out) is None  # already this process's: left as it is
    monkeypatch.setenv("RANK", "1")  # another process of a multi-process launch writes nothing
    assert (
        runs_control.record_self(tmp_path / "rank1") is None and not (tmp_path / "rank1").exists()
    )


def test_a_launch_file_without_origin_reads_as_the_apps(tmp_path):
    old = {"pid": 1, "out_dir": str(tmp_path), "argv": ["x"], "log": "l", "started_at": "t"}
    (tmp_path / runs_control.LAUNCH_FILE).write_text(json.dumps(old))
    assert runs_control.read_launch(tmp_path).origin == "app"


@pytest.mark.slow
async def test_a_run_started_on_the_command_line_can_be_followed_and_stopped(
    store, db_path, tmp_path
):
    import subprocess

    generate(store, "maze-fo", envs.make_policy("maze-fo", "behaviour"), 8, seed=0)
    out = tmp_path / "runs" / "from-cli"
    argv = runs_control.train_argv(
        db_path,
        "bc",
        "maze-fo",
        out,
        [
            "--max-steps",
            "100000",
            "--n-layer",
            "1",
            "--n-embd",
            "16",
            "--n-head",
            "2",
            "--vocab-size",
            "300",
            "--batch-size",
            "8",
            "--eval-episodes",
            "0",
            "--log-every",
            "1",
        ],
    )
    log = (tmp_path / "cli.log").open("wb")
    proc = subprocess.Popen(
        argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )  # a shell's job
    try:
        deadline = time.monotonic() + 90
        while (
            not [r for r in runs.recent_runs(store) if r["out_dir"] == str(out)]
            and time.monotonic() < deadline
        ):
            assert proc.poll() is None, (tmp_path / "cli.log").read_text()
            time.sleep(0.2)
        launch = runs_control.read_launch(out)
        assert launch is not None and launch.pid == proc.pid and launch.origin == "cli"
        run_id = next(r["id"] for r in runs.recent_runs(store) if r["out_dir"] == str(out))
        app = make_app(store)
        async with app.run_test(size=(140, 60)) as pilot:
            await settle(app)
            await pilot.press("t")
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, RunsScreen)
            table = screen.query_one("#runs")
            table.move_cursor(row=table.get_row_index(str(run_id)))
            await pilot.pause()
            await settle(app)
            assert screen.launch == launch
            info = str(screen.query_one("#run-info").render())
            assert "started on the command line" in info and "running: s stops it" in info, info
            await pilot.press("s")
            await pilot.pause()
            assert isinstance(app.screen, StopDialog)
            await pilot.press("y")
            await pilot.pause()
            deadline = time.monotonic() + 100
            while proc.poll() is None and time.monotonic() < deadline:
                await pilot.pause(0.2)
            assert proc.returncode == 130, (tmp_path / "cli.log").read_text()
            await settle(app)
            await pilot.pause(0.6)
            assert runs.get_run(store, run_id)["status"] == "stopped"
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        log.close()
