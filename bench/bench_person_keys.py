"""What a person waits for at the keyboard (headless app, Textual's Pilot): the new-episode dialog
opening (enter on the home screen: until its first frame is drawn with the first field focused,
and until the app is idle again), and an answer as the Twenty Questions oracle (y or n typed and
enter, until the scripted guesser's next question waits for the person), with the CPU each answer
costs the app and the longest event-loop stall while answering. The answer that ends the game
opens the summary screen: its stall is a figure of its own.

Prints one figure per line as ``name value unit``. Usage:
``python bench/bench_person_keys.py [--answers N] [--dialogs N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

TICK = 0.005


async def figures(folder: Path, answers: int, dialogs: int) -> dict[str, tuple[float, str]]:
    import envs
    from data.store import Store
    from envs.players.session import HumanAgent
    from envs.questions.twenty_questions.partner import answer
    from lmrl_tui.app import make_app
    from lmrl_tui.screens.dialogs import NewEpisodeDialog
    from lmrl_tui.views.chat import ChatView

    out: dict[str, tuple[float, str]] = {}
    app = make_app(Store(folder / "keys.db"), player="bench")
    app.freeze_after_start = True  # as the lmrl command does (gc.freeze once drawn)
    async with app.run_test(size=(140, 44)) as pilot:
        await pilot.pause(0.3)
        opened = []
        for _ in range(dialogs):
            t = time.perf_counter()
            await pilot.press("enter")
            while not (isinstance(app.screen, NewEpisodeDialog) and app.screen.focused is not None):
                await asyncio.sleep(0.001)
            opened.append((time.perf_counter() - t) * 1000)
            await pilot.pause(0.2)
            await pilot.press("escape")
            await pilot.pause(0.2)
        if opened:
            out["keys_dialog_open_ms"] = (statistics.median(opened), "ms")
        if dialogs:
            out["keys_dialog_first_frame_ms"] = (
                statistics.median(await first_frames(app, pilot, dialogs)),
                "ms",
            )

        guesser = envs.make_policy("twenty-questions", "strong")
        guesser.prepare()
        screen = app.start_session(
            "twenty-questions", guesser, HumanAgent("bench", role="oracle"), 9, "bench"
        )
        screen.speed_index = 5
        await pilot.pause(0.2)  # the play screen mounts
        view = screen.query_one(ChatView)
        secret = screen.session.task.secret
        waits: list[float] = []
        stalls: list[float] = []
        end_stall: float | None = None
        cpu: list[float] = []
        worst, last, timer = 0.0, time.perf_counter(), None

        def tick() -> None:
            nonlocal worst, last
            now = time.perf_counter()
            worst, last = max(worst, now - last), now

        for _ in range(answers):
            while view.replying is None and not screen.session.done:
                await asyncio.sleep(0.001)
            if screen.session.done:
                break
            key = "y" if answer(view.pending, secret).text == "Yes." else "n"
            c, t = time.process_time(), time.perf_counter()
            if timer is None:
                timer = app.set_interval(TICK, tick)
            worst, last = 0.0, time.perf_counter()
            await pilot.press(key, "enter")  # typed into the reply line, which has the focus
            while (view.replying is None or view.pending is None) and not screen.session.done:
                await asyncio.sleep(0.001)
            if screen.session.done:  # the answer ended the game: the summary screen opens
                await pilot.pause(0.3)
                end_stall = worst
                break
            waits.append((time.perf_counter() - t) * 1000)
            cpu.append((time.process_time() - c) * 1000)
            stalls.append(worst)
        if timer is None:
            return out
        timer.stop()
        if waits:
            out["keys_oracle_answer_ms"] = (statistics.median(waits), "ms")
            out["keys_oracle_answer_cpu_ms"] = (statistics.median(cpu), "ms")
            out["keys_oracle_answer_stall_ms"] = (max(0.0, max(stalls) - TICK) * 1000, "ms")
            out["keys_oracle_answers"] = (float(len(waits)), "answers")
        if end_stall is not None:
            out["keys_last_answer_summary_stall_ms"] = (max(0.0, end_stall - TICK) * 1000, "ms")
    return out


async def first_frames(app, pilot, times: int) -> list[float]:
    """Enter on the home screen until the first frame of the dialog drawn with its first field
    focused: what the person sees and types into (``keys_dialog_open_ms`` waits on until the app
    is idle, through the frames that follow: the same picture, laid out again)."""
    from textual import events

    from lmrl_tui.screens.dialogs import NewEpisodeDialog

    frames: list[float] = []
    draw = app._display

    def display(
        screen, renderable
    ) -> None:  # every frame goes through here (drawn or, headless, not)
        if (
            isinstance(screen, NewEpisodeDialog)
            and screen.focused is not None
            and renderable is not None
        ):
            frames.append(time.perf_counter())
        draw(screen, renderable)

    app._display = display
    got = []
    try:
        for _ in range(times):
            frames.clear()
            t = time.perf_counter()
            app.post_message(events.Key("enter", "\r"))  # as the terminal driver hands it over
            while not frames and time.perf_counter() - t < 10:
                await asyncio.sleep(0.001)
            got.append((frames[0] - t) * 1000)
            await pilot.pause(0.2)
            await pilot.press("escape")
            await pilot.pause(0.2)
    finally:
        app._display = draw
    return got


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--answers",
        type=int,
        default=20,
        help="answers given as the oracle (at most: the game may end)",
    )
    ap.add_argument("--dialogs", type=int, default=3, help="times the new-episode dialog is opened")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["LMRL_CONFIG_DIR"] = str(
            Path(tmp) / "config"
        )  # never the user's remembered choices
        got = asyncio.run(figures(Path(tmp), args.answers, args.dialogs))
    for name, (value, unit) in got.items():
        print(f"{name} {value:.1f} {unit}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
