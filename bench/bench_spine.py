"""Spine benchmarks: maze env speed, store write speed vs raw sqlite3, app start time.

Prints one figure per line as ``name value unit``. Run: ``python bench/bench_spine.py``
(``--start-only``: the app's start figures only).
Targets (not tests): maze >= 1,000,000 steps/s under random actions; store >= 0.5x raw
executemany; app start to the home screen < 0.3 s (as ``lmrl`` starts: its arguments read and its
store opened by the command's own code, then the app run headless until the home screen's task
table is filled).
"""

from __future__ import annotations

import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import envs
from data.store import EpisodeRecord, StepRecord, Store, Who
from envs.maze.task import ACTIONS
from lmrl_tui import task_list
from lmrl_tui.prefs import CONFIG_ENV


def best_of(n: int, fn) -> float:
    return min(fn() for _ in range(n))


def maze_random_steps_per_s(task_id: str, steps: int = 1_000_000) -> float:
    rng = random.Random(0)
    actions = [rng.choice(ACTIONS) for _ in range(steps)]
    task = envs.make(task_id)

    def run() -> float:
        task.reset(0)
        step = task.step
        reset = task.reset
        t0 = time.perf_counter()
        for a in actions:
            st = step(a)
            if st[2] or st[3]:
                reset()
        return time.perf_counter() - t0

    return steps / best_of(3, run)


def maze_behaviour_steps_per_s(episodes: int = 2000) -> tuple[float, float]:
    task = envs.make("maze-fo")
    agent = envs.make_policy("maze-fo", "behaviour")
    t0 = time.perf_counter()
    n = 0
    for seed in range(episodes):
        n += len(envs.run_episode(task, agent, seed).transitions)
    dt = time.perf_counter() - t0
    return n / dt, episodes / dt


def store_rows_per_s(episodes: int = 1000) -> tuple[float, float, float]:
    recs = []
    for seed in range(episodes):
        ep = envs.run_episode(envs.make("maze-fo"), envs.make_policy("maze-fo", "behaviour"), seed)
        steps = [
            StepRecord(t.action, t.observation, t.reward, t.terminated, t.truncated, t.info)
            for t in ep.transitions
        ]
        recs.append(
            EpisodeRecord(
                "maze-fo", 1, seed, ep.first_observation, steps, Who("scripted", "behaviour")
            )
        )
    n_rows = sum(len(r.steps) + 1 for r in recs)
    with tempfile.TemporaryDirectory() as d:
        store = Store(Path(d) / "bench.db")
        t0 = time.perf_counter()
        for i in range(0, len(recs), 200):
            store.write_episodes(recs[i : i + 200])
        ours = time.perf_counter() - t0
        # The same rows through raw sqlite3.executemany into the same schema, same pragmas.
        raw = sqlite3.connect(Path(d) / "raw.db")
        store2 = Store(Path(d) / "raw.db")
        store2.close()
        raw.execute("PRAGMA journal_mode=WAL")
        raw.execute("PRAGMA synchronous=NORMAL")
        ep_rows = [r.episode_row(i + 1, "t") for i, r in enumerate(recs)]
        step_rows = [row for i, r in enumerate(recs) for row in r.step_rows(i + 1, "t")]
        from data.store import STEP_COLUMNS

        ecols, scols = list(ep_rows[0]), list(STEP_COLUMNS)
        e_sql = f"INSERT INTO episodes({','.join(ecols)}) VALUES ({','.join('?' * len(ecols))})"
        s_sql = f"INSERT INTO steps({','.join(scols)}) VALUES ({','.join('?' * len(scols))})"
        t0 = time.perf_counter()
        for i in range(0, len(recs), 200):
            lo, hi = i + 1, i + 200
            with raw:
                raw.executemany(e_sql, [[r[c] for c in ecols] for r in ep_rows[i : i + 200]])
                raw.executemany(s_sql, [r for r in step_rows if lo <= r[0] <= hi])
        raw_t = time.perf_counter() - t0
        raw.close()
        store.close()
    return n_rows / ours, n_rows / raw_t, raw_t / ours


START_SCRIPT = textwrap.dedent(
    """
    import time, sys, asyncio
    t0 = float(sys.argv[2])
    from lmrl_tui.cli import entry, parser  # the lmrl command's own path: its arguments, its store
    args = parser.app_only(["--db", sys.argv[1]])
    store = entry.open_store(args)
    from lmrl_tui.app import make_app
    from lmrl_tui.screens.home import HomeScreen

    async def main():
        app = make_app(store, player=args.player)
        async with app.run_test() as pilot:
            while not isinstance(app.screen, HomeScreen) or not app.screen.is_mounted:
                await pilot.pause(0.001)
            shown = time.time() - t0
            while not app.screen.tasks_ready:
                await pilot.pause(0.001)
            print(shown, time.time() - t0, time.process_time(), flush=True)
    asyncio.run(main())
    """
)


def app_start_seconds(runs: int = 3, *, cold: bool = False) -> tuple[float, float, float]:
    """(to the home screen, to its task table filled, the CPU time of the app's process until
    then), the best of ``runs`` starts (the CPU time is steadier on a busy machine). The app keeps
    its task list between starts (lmrl_tui/task_list.py): ``cold`` removes it before each start
    (the first start after installing or changing the tasks: the list shipped with the package
    fills the table)."""
    with tempfile.TemporaryDirectory() as d:
        db = str(Path(d) / "start.db")
        Store(db).close()
        env = {**os.environ, CONFIG_ENV: str(Path(d) / "config")}  # not the user's prefs or cache
        # As a user's start: the bytecode caches written (a fresh install writes them on its
        # first start); without them each start compiles the app's modules again (~+0.1 s here).
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        subprocess.run(
            [sys.executable, "-c", START_SCRIPT, db, str(time.time())], capture_output=True, env=env
        )
        times = []
        for _ in range(runs):
            if cold:
                (Path(d) / "config" / task_list.FILE_NAME).unlink(missing_ok=True)
            t0 = time.time()
            out = subprocess.run(
                [sys.executable, "-c", START_SCRIPT, db, str(t0)],
                capture_output=True,
                text=True,
                check=True,
                env=env,
            )
            shown, filled, cpu = out.stdout.strip().splitlines()[-1].split()
            times.append((float(shown), float(filled), float(cpu)))
        return min(times, key=lambda t: t[1])[:2] + (min(t[2] for t in times),)


def print_app_start(runs: int = 3) -> None:
    shown, filled, cpu = app_start_seconds(runs)
    print(f"app_start_to_home_s {shown:.3f} s")
    print(f"app_start_to_task_table_s {filled:.3f} s")
    print(f"app_start_to_task_table_cpu_s {cpu:.3f} s")
    shown, filled, cpu = app_start_seconds(runs, cold=True)
    print(
        f"app_start_to_task_table_cold_s {filled:.3f} s"
    )  # no task list kept from a previous start
    print(f"app_start_to_task_table_cold_cpu_s {cpu:.3f} s")


def main() -> None:
    if "--start-only" in sys.argv:  # the app's start figures only
        print_app_start(runs=5)
        return
    print(f"maze_fo_random_steps_per_s {maze_random_steps_per_s('maze-fo'):.0f} steps/s")
    print(f"maze_po_random_steps_per_s {maze_random_steps_per_s('maze-po'):.0f} steps/s")
    sps, eps = maze_behaviour_steps_per_s()
    print(f"maze_fo_behaviour_steps_per_s {sps:.0f} steps/s")
    print(f"maze_fo_behaviour_episodes_per_s {eps:.0f} episodes/s")
    ours, raw, ratio = store_rows_per_s()
    print(f"store_write_rows_per_s {ours:.0f} rows/s")
    print(f"raw_executemany_rows_per_s {raw:.0f} rows/s")
    print(f"store_vs_raw_ratio {ratio:.2f} x")
    print_app_start()


if __name__ == "__main__":
    main()
