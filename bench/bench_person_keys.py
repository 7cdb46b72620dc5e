"""What a person waits for at the keyboard (headless app, Textual's Pilot): the new-episode dialog
opening (enter on the home screen until its first field has the focus), and an answer as the
Twenty Questions oracle (y or n typed and enter, until the scripted guesser's next question waits for the person),
with the CPU each answer costs the app and the longest event-loop stall while answering.

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
    from envs.core.session import HumanAgent
    from envs.questions.twenty_questions.partner import answer
    from lmrl_tui.app import make_app
    from lmrl_tui.screens.dialogs import NewEpisodeDialog
    from lmrl_tui.views.chat import ChatView

    out: dict[str, tuple[float, str]] = {}
    app = make_app(Store(folder / "keys.db"), player="bench")
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

        guesser = envs.make_policy("twenty-questions", "strong")
        guesser.prepare()
        screen = app.start_session("twenty-questions", guesser, HumanAgent("bench", role="oracle"), 9, "bench")
        screen.speed_index = 5
        await pilot.pause(0.2)  # the play screen mounts
        view = screen.query_one(ChatView)
        secret = screen.session.task.secret
        waits: list[float] = []
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
            if not waits:
                timer = app.set_interval(TICK, tick)
                worst, last = 0.0, time.perf_counter()
            await pilot.press(key, "enter")  # typed into the reply line, which has the focus
            while (view.replying is None or view.pending is None) and not screen.session.done:
                await asyncio.sleep(0.001)
            waits.append((time.perf_counter() - t) * 1000)
            cpu.append((time.process_time() - c) * 1000)
        if timer is None:
            return out
        timer.stop()
        out["keys_oracle_answer_ms"] = (statistics.median(waits), "ms")
        out["keys_oracle_answer_cpu_ms"] = (statistics.median(cpu), "ms")
        out["keys_oracle_answer_stall_ms"] = (max(0.0, worst - TICK) * 1000, "ms")
        out["keys_oracle_answers"] = (float(len(waits)), "answers")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--answers", type=int, default=8, help="answers given as the oracle")
    ap.add_argument("--dialogs", type=int, default=3, help="times the new-episode dialog is opened")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["LMRL_CONFIG_DIR"] = str(Path(tmp) / "config")  # never the user's remembered choices
        got = asyncio.run(figures(Path(tmp), args.answers, args.dialogs))
    for name, (value, unit) in got.items():
        print(f"{name} {value:.1f} {unit}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
