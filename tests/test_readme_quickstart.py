"""The README's quickstart, run as written at small sizes: its commands are read from the README
itself (so the test follows the text), the install line is checked, not run, each `lmrl` command
runs on a fresh store in a temporary folder with fewer episodes and steps, and the last one, the
app, watches the trained agent play through the keys the README names (t, w, ctrl+s, space)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SMALL = {"--episodes": "40", "--max-steps": "2"}  # the sizes the quickstart's commands run at here


def quickstart() -> list[str]:
    """The commands of the README's quickstart block, comments dropped."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Quickstart") :]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    assert block is not None, "the quickstart has a bash block"
    lines = block.group(1).splitlines()
    return [re.sub(r"\s#.*$", "", line).strip() for line in lines if line.strip()]


def shrunk(argv: list[str]) -> list[str]:
    out = list(argv)
    for i, arg in enumerate(out[:-1]):
        if arg in SMALL:
            out[i + 1] = SMALL[arg]
    if out and out[0] == "train":  # no evaluation during training; the next command evaluates
        out += ["--eval-episodes", "0", "--no-progress"]
    return out


def test_the_quickstart_is_short_and_starts_from_nothing() -> None:
    commands = quickstart()
    assert 2 <= len(commands) <= 6
    assert commands[0].startswith("python3 -m venv .venv") and "'.[train]'" in commands[0]
    assert all(c.startswith(".venv/bin/lmrl") for c in commands[1:])
    assert commands[-1] == ".venv/bin/lmrl"  # the app: where the agent is watched


@pytest.mark.slow  # trains and evaluates a tiny model: about a minute on a loaded 2-core machine
async def test_the_quickstart_runs_to_watching_the_trained_agent(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from support.app_support import settle, wait_for

    from data.store import Store
    from lmrl_tui.app import make_app
    from lmrl_tui.screens.runs import RunsScreen

    db = tmp_path / "store.db"
    for command in quickstart()[1:-1]:
        argv = shrunk(shlex.split(command)[1:])
        done = subprocess.run(
            [sys.executable, "-m", "lmrl_tui.cli", "--db", str(db), *argv],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=600,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        assert done.returncode == 0, f"{command}\n{done.stderr[-2000:]}"
    assert (tmp_path / "runs" / "bc" / "checkpoint").is_dir()

    store = Store(db)
    before = store.count(task="maze-fo")
    app = make_app(store, player="newcomer")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app)
        await pilot.press("t")
        await wait_for(pilot, lambda: isinstance(app.screen, RunsScreen), "the runs screen")
        await settle(app)
        await pilot.pause()
        await pilot.press("w")
        await wait_for(pilot, lambda: not isinstance(app.screen, RunsScreen), "the dialog")
        assert app.screen.query_one("#checkpoint").value.endswith("checkpoint")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: store.count(task="maze-fo") > before, "the watched episode")
        for _ in range(3):
            await pilot.press("space")
            await pilot.pause(0.2)
        episode_id = store.last_episode_id()
        await wait_for(pilot, lambda: len(store.steps(episode_id)) >= 1, "the agent's steps")
        episode = store.episode(episode_id)
        assert episode is not None and "bc" in str(episode.get("agent_name"))
    store.close()
