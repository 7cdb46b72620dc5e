"""SIGKILL mid-episode: every completed step is in the store and the episode is not finished."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

from data.store import Store

SCRIPT = textwrap.dedent(
    """
    import asyncio, sys
    from lmrl_tui.app import make_app

    async def main():
        app = make_app(sys.argv[1], player="kim")
        async with app.run_test(size=(120, 40)) as pilot:
            app.start_session("maze-fo", None, None, 4, "kim")
            await pilot.pause()
            for key in ["left", "right", "left", "right", "left"]:
                await pilot.press(key)
            await pilot.pause()
            print("READY", flush=True)
            await asyncio.sleep(120)

    asyncio.run(main())
    """
)


def test_sigkill_keeps_completed_steps(tmp_path):
    db = tmp_path / "crash.db"
    proc = subprocess.Popen(
        [sys.executable, "-c", SCRIPT, str(db)], stdout=subprocess.PIPE, text=True
    )
    try:
        line = proc.stdout.readline()
        assert line.strip() == "READY"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == -signal.SIGKILL
    s = Store(db)
    (ep,) = s.recent_episodes(5)
    assert ep["status"] == "in_progress" and ep["ended_at"] is None
    steps = s.steps(ep["id"])
    assert [(st["typed"], st["info"]["key"]) for st in steps] == [
        (None, k) for k in ["left", "right", "left", "right", "left"]
    ]
    assert ep["n_steps"] == 5 and ep["return"] == -5
    s.close()
