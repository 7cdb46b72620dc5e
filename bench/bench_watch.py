"""Watching agents: move latency, event-loop stalls while an agent thinks or a checkpoint loads,
and the time from Start to the first frame with the loading note.

Prints one figure per line as ``name value unit``. Run: ``python bench/bench_watch.py``.
Targets (not tests): a tiny agent's move < 20 ms; the app's longest event-loop stall while an
agent thinks and while a checkpoint loads < 50 ms; Start to the loading frame < 100 ms.

The stalls are measured inside the running app (headless) by a timer every 5 ms that records
the longest gap between its calls, minus the 5 ms. The checkpoints are trained in a subprocess
first, so the app's process starts without torch, as ``lmrl`` does. The app runs a checkpoint in
its own process (``envs.players.process_agent``): the first load (``cold``) and the second (``warm``,
another checkpoint after leaving the first episode) each start one; the app's process must still
be without torch at the end (checked). ``watch_medium_move_app_ms`` is the median think time the
app recorded (the round trip to the agent's process included; a state seen before is answered from
the decoder's cache); ``watch_*_move_ms`` time ``act`` of the checkpoint loaded in this process,
every move computed. A load's stall is split into ``loading`` (Start until the worker has the
agent) and ``opening`` (the play screen mounting and drawing its first frames: the UI's own work);
``watch_leave_stall_ms`` is leaving an episode, which stops its agent's process;
``watch_home_sweep_stall_ms`` the full garbage collection the idle home screen runs a little later
(what the left episode's screen froze, ``LmrlApp.sweep_frozen``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TICK = 0.005


def make_checkpoints(folder: Path) -> None:
    """A tiny ILQL checkpoint (the watched agent) and a larger one (thinks and loads longer)."""
    from data.datasets import DatasetQuery
    from training.config import TrainConfig, resolve
    from training.offline.loop import train
    from training.offline.toy import maze_store

    store = maze_store(folder / "maze.db", episodes=12)
    for name, size in (
        ("tiny", dict(n_embd=32, n_head=2, n_layer=1)),
        ("medium", dict(n_embd=256, n_head=4, n_layer=4)),
    ):
        base = dict(
            algo="ilql",
            task="maze-fo",
            max_steps=2,
            batch_size=8,
            vocab_size=300,
            eval_episodes=0,
            progress=False,
            log_every=1,
            lr=1e-2,
            **size,
        )
        cfg = resolve(TrainConfig(**base), set(base) - {"algo", "task"})
        train(cfg, store, DatasetQuery(task="maze-fo"), folder / name)


class Gaps:
    """The longest gap between the calls of a timer every :data:`TICK` seconds."""

    def __init__(self) -> None:
        self.last = time.perf_counter()
        self.worst = 0.0
        self.all: list[float] = []
        self.timed: list[tuple[float, float]] = []
        """(when, gap) of every call since the last reset."""
        self.long: list[tuple[float, float]] = []
        """(when, gap) of every gap over 20 ms (with ``--verbose``: printed on stderr)."""

    def tick(self) -> None:
        now = time.perf_counter()
        self.worst = max(self.worst, now - self.last)
        self.all.append(now - self.last)
        self.timed.append((now, now - self.last))
        if now - self.last > 0.02:
            self.long.append((now, now - self.last))
        self.last = now

    def reset(self) -> None:
        self.last = time.perf_counter()
        self.worst = 0.0
        self.all = []
        self.timed = []

    def stall_between_ms(self, start: float, end: float) -> float:
        """The longest stall that ended in (start, end]."""
        return max(
            [max(0.0, g - TICK) * 1000 for t, g in self.timed if start < t <= end], default=0.0
        )

    def stall_ms(self) -> float:
        return max(0.0, self.worst - TICK) * 1000

    def p99_ms(self) -> float:
        """The 99th percentile of the stalls (a busy machine's noise shows in the max, not here)."""
        xs = sorted(self.all) or [TICK]
        return max(0.0, xs[int(0.99 * (len(xs) - 1))] - TICK) * 1000


async def until(pilot, check, timeout: float = 120.0) -> None:
    end = time.perf_counter() + timeout
    while not check():
        if time.perf_counter() > end:
            raise TimeoutError("the app did not get there in time")
        await pilot.pause(0.01)


async def load_through_dialog(
    app, pilot, gaps: Gaps, path: Path, frames: list, watched: dict, marks: list
) -> tuple[float, tuple[float, float], float, float]:
    """Start an episode of checkpoint ``path`` in the dialog: (ms from Start to the first frame
    with the loading note, (longest, 99th percentile) stall in ms until the play screen shows,
    the longest stall while the agent loaded, the longest while the play screen opened)."""
    from lmrl_tui.screens.dialogs import NewEpisodeDialog
    from lmrl_tui.screens.play import PlayScreen

    app.new_episode("maze-fo", seed=3, checkpoint=str(path))
    await until(pilot, lambda: isinstance(app.screen, NewEpisodeDialog))
    dialog = app.screen
    await pilot.pause()
    watched["note"] = dialog.query_one("#error")
    frames.clear()
    gaps.reset()
    started = time.perf_counter()
    marks.append(("start", started))
    dialog.query_one("#start").press()
    await until(pilot, lambda: isinstance(app.screen, PlayScreen))
    await pilot.pause(0.2)  # the play screen mounts
    stall = gaps.stall_ms(), gaps.p99_ms()
    loaded = next(t for m, t in reversed(marks) if m == "loaded")
    loading, opening = (
        gaps.stall_between_ms(started, loaded),
        gaps.stall_between_ms(loaded, time.perf_counter()),
    )
    watched["note"] = None
    shown = next((t for t, text in frames if "Loading" in text), None)
    return (
        ((shown - started) * 1000 if shown is not None else float("nan")),
        stall,
        loading,
        opening,
    )


async def app_figures(folder: Path, steps: int, verbose: bool = False) -> dict[str, float]:
    import lmrl_tui.screens.dialogs as dialogs
    from data.store import Store
    from lmrl_tui.app import make_app
    from lmrl_tui.screens.home import SWEEP_AFTER
    from lmrl_tui.screens.play import SPEEDS

    out: dict[str, float] = {}
    real_load = dialogs.load_sides

    def load_sides(*a):  # when the worker's load ends (the stalls after it are the UI's own)
        try:
            return real_load(*a)
        finally:
            marks.append(("loaded", time.perf_counter()))

    real_open = dialogs.open_choice

    def open_choice(*a):
        marks.append(("open", time.perf_counter()))
        try:
            return real_open(*a)
        finally:
            marks.append(("opened", time.perf_counter()))

    marks: list[tuple[str, float]] = []
    dialogs.load_sides = load_sides
    dialogs.open_choice = open_choice
    app = make_app(Store(folder / "app.db"), player="bench")
    app.freeze_after_start = True  # as the lmrl command does
    frames: list[tuple[float, str]] = []
    watched: dict = {"note": None}
    real_display = app._display

    def display(screen, renderable):  # every frame the app composes (headless: not written)
        note = watched["note"]
        if note is not None and renderable is not None:
            frames.append((time.perf_counter(), str(note.content)))
        return real_display(screen, renderable)

    app._display = display  # type: ignore[method-assign]
    async with app.run_test(size=(140, 44)) as pilot:
        gaps = Gaps()
        app.set_interval(TICK, gaps.tick)
        await pilot.pause(0.2)
        assert "torch" not in sys.modules, "the app imported torch before a checkpoint was chosen"
        gaps.reset()
        await pilot.pause(2.0)  # nothing happening: the machine's own noise
        out["watch_idle_stall_ms"] = gaps.stall_ms()
        out["watch_idle_stall_p99_ms"] = gaps.p99_ms()
        (
            first,
            (out["watch_load_cold_stall_ms"], out["watch_load_cold_stall_p99_ms"]),
            out["watch_load_cold_loading_stall_ms"],
            out["watch_load_cold_opening_stall_ms"],
        ) = await load_through_dialog(app, pilot, gaps, folder / "medium", frames, watched, marks)
        out["watch_start_to_loading_frame_ms"] = first
        screen = app.screen
        screen.speed_index = len(SPEEDS) - 1  # auto-play as fast as it goes, values on
        await pilot.press("v")
        gaps.reset()
        await pilot.press("p")
        await until(pilot, lambda: len(screen.session.transitions) >= steps or screen.session.done)
        out["watch_thinking_stall_ms"] = gaps.stall_ms()
        out["watch_thinking_stall_p99_ms"] = gaps.p99_ms()
        moves = [t.think_ms for t in screen.session.transitions if t.think_ms is not None]
        out["watch_medium_move_app_ms"] = statistics.median(moves)
        await pilot.press("p")
        await until(pilot, lambda: not screen._busy)
        gaps.reset()
        app.pop_screen()  # leaving the episode stops its agent's process
        await pilot.pause(0.5)
        out["watch_leave_stall_ms"] = gaps.stall_ms()
        gaps.reset()  # the home screen frees what the episode left once idle (LmrlApp.sweep_frozen)
        await pilot.pause(SWEEP_AFTER + 0.5)
        out["watch_home_sweep_stall_ms"] = gaps.stall_ms()
        (
            warm,
            (out["watch_load_warm_stall_ms"], out["watch_load_warm_stall_p99_ms"]),
            out["watch_load_warm_loading_stall_ms"],
            out["watch_load_warm_opening_stall_ms"],
        ) = await load_through_dialog(app, pilot, gaps, folder / "tiny", frames, watched, marks)
        out["watch_start_to_loading_frame_warm_ms"] = warm
        assert "torch" not in sys.modules, "the app's process imported torch"
    if verbose:
        events = sorted(
            [(t, f"gap {g * 1000:.0f} ms") for t, g in gaps.long] + [(t, m) for m, t in marks]
        )
        for t, what in events:
            print(f"{t - events[0][0]:8.3f} s  {what}", file=sys.stderr)
    return out


def move_latency_ms(path: Path, episodes: int) -> tuple[float, float]:
    """(median, 95th percentile) of the tiny agent's ``act`` over whole maze-fo episodes."""
    import envs
    from training.agents.checkpoint_agent import load_agent

    agent = load_agent(path)
    times = []
    for seed in range(episodes):
        task = envs.make("maze-fo")
        task.reset(seed)
        agent.reset(task, seed)
        for _ in range(30):
            agent.decoder._cache.clear()  # a move computed, not remembered
            t = time.perf_counter()
            action = agent.act(task.history())
            times.append((time.perf_counter() - t) * 1000)
            st = task.step(action)
            if st.terminated or st.truncated:
                break
    times.sort()
    return statistics.median(times), times[int(0.95 * (len(times) - 1))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--steps", type=int, default=20, help="agent moves watched while measuring stalls"
    )
    ap.add_argument("--episodes", type=int, default=5, help="episodes of the move-latency figure")
    ap.add_argument("--verbose", action="store_true", help="list every stall over 20 ms on stderr")
    ap.add_argument("--make-checkpoints", metavar="DIR", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.make_checkpoints:
        make_checkpoints(Path(args.make_checkpoints))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        os.environ["LMRL_CONFIG_DIR"] = str(
            folder / "config"
        )  # never the user's remembered choices
        subprocess.run(
            [sys.executable, __file__, "--make-checkpoints", str(folder)],
            check=True,
            capture_output=True,
        )
        figures = asyncio.run(app_figures(folder, args.steps, args.verbose))
        for name in ("tiny", "medium"):
            med, p95 = move_latency_ms(folder / name / "checkpoint", args.episodes)
            figures[f"watch_{name}_move_ms"] = med
            figures[f"watch_{name}_move_p95_ms"] = p95
    for name, value in figures.items():
        print(f"{name} {value:.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
