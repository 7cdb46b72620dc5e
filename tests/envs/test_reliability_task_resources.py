"""Resource hygiene of the tasks: after playing episodes of every registered task, after closing
a task mid-episode, and after dropping a task without closing it, no child process (Stockfish),
thread or file descriptor is left beyond what the process held before."""

from __future__ import annotations

import gc

import pytest
from support.processes import Baseline

import envs

ENGINE_TASKS = ("chess", "endgames")
TASKS = [t if t in ENGINE_TASKS else pytest.param(t, marks=pytest.mark.slow) for t in envs.ids()]
"""The engine's tasks (a child process each) in the quick selection; the others (threads and
files only, ~0.75 s each for the settling) in the slow one."""
FD_SLACK = 2
"""Descriptors a first use may keep for good (e.g. a module's cached file); more is a leak."""


def _warm(task_id: str) -> None:
    """First use imports the task's modules and caches its assets (and the engine's facts)."""
    t = envs.make(task_id)
    envs.run_episode(t, envs.make_policy(task_id, envs.policies(task_id)[0]), 0, max_steps=2)
    t.close()
    gc.collect()


@pytest.mark.parametrize("task_id", TASKS)
def test_playing_and_closing_every_task_leaves_nothing(task_id: str) -> None:
    _warm(task_id)
    before = Baseline()
    t = envs.make(task_id)
    for seed in range(2):  # two episodes on one task: the second reuses what the first opened
        envs.run_episode(t, envs.make_policy(task_id, envs.policies(task_id)[0]), seed)
    t.close()
    t.close()  # safe twice
    assert before.leaks(fd_slack=FD_SLACK) == {}


@pytest.mark.parametrize("task_id", TASKS)
def test_closing_mid_episode_leaves_nothing(task_id: str) -> None:
    _warm(task_id)
    before = Baseline()
    t = envs.make(task_id)
    agent = envs.make_policy(task_id, envs.policies(task_id)[0])
    t.reset(3)
    agent.reset(t, 3)
    for _ in range(2):
        st = t.step(agent.act(t.history()))
        if st.terminated or st.truncated:
            break
    t.close()
    assert before.leaks(fd_slack=FD_SLACK) == {}


@pytest.mark.stockfish
@pytest.mark.parametrize("task_id", ["chess", "endgames"])
def test_a_task_dropped_without_close_releases_its_engine(task_id: str) -> None:
    _warm(task_id)
    before = Baseline()
    t = envs.make(task_id)
    t.reset(1)
    t.step(t.legal_actions()[0])  # the engine answers: its process runs now
    assert before.new_children(), "the engine should be running mid-game"
    del t
    gc.collect()
    assert before.leaks(fd_slack=FD_SLACK) == {}


def test_the_leak_check_sees_a_thread_a_file_and_a_child(tmp_path) -> None:
    """The check can fail."""
    import subprocess
    import threading

    before = Baseline()
    stop = threading.Event()
    th = threading.Thread(target=stop.wait, name="left-behind")
    th.start()
    f = open(tmp_path / "held", "w")  # noqa: SIM115 - held on purpose
    proc = subprocess.Popen(["sleep", "30"])
    try:
        leaks = before.leaks(timeout=0.2)
        assert leaks["threads"] == ["left-behind"] and proc.pid in leaks["children"]
        assert str(tmp_path / "held") in leaks["fds"].values()
    finally:
        stop.set()
        th.join()
        f.close()
        proc.kill()
        proc.wait()
    assert before.leaks() == {}
