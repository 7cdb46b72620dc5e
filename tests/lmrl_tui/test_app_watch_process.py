"""A checkpoint chosen in the new-episode dialog runs in its own process: the app's process never
imports torch while it loads, plays, explains and maps; escape stops a load's process at once, and
leaving the episode ends it."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("torch")

from support.checkpoint_support import tiny_checkpoint  # noqa: E402

from envs.players.process_agent import ProcessAgent  # noqa: E402
from lmrl_tui.app import make_app  # noqa: E402
from lmrl_tui.screens.dialogs import NewEpisodeDialog  # noqa: E402

HEAD = """
import asyncio, io, json, sys
from lmrl_tui.app import make_app
from lmrl_tui.screens.play import PlayScreen

async def settle(app, pilot):
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()

async def watched(app, pilot, task, choice):
    # Start the agent chosen in the dialog, let it play two steps, show its values (v)
    app.new_episode(task, seed=4, checkpoint=choice)
    await pilot.pause()
    app.screen.query_one("#start").press()
    await settle(app, pilot)
    screen = app.screen
    assert isinstance(screen, PlayScreen), type(screen)
    for key in ("space", "space", "v"):
        await pilot.press(key)
        await settle(app, pilot)
    return screen
"""

WATCH = (
    HEAD
    + """
async def main():
    app = make_app(DB, player="ann")
    out = {}
    async with app.run_test(size=(140, 44)) as pilot:
        screen = await watched(app, pilot, "maze-fo", CKPT)
        agent = screen.session.agent
        out["agent"] = [type(agent).__name__, agent.kind, agent.name]
        overlay = screen.query_one("#overlay")
        out["overlay"] = [overlay.for_step, overlay.explanation.algo, len(overlay.explanation.candidates)]
        await pilot.press("m")
        await settle(app, pilot)
        out["arrows"] = len(screen.view.arrows or {})
        out["steps"] = len(screen.session.transitions)
        out["torch"] = sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "transformers"))
        proc = agent._proc
        app.pop_screen()  # leave the episode: its model's process ends
        await settle(app, pilot)
        out["child_exit"] = proc.wait(timeout=10)
    print(json.dumps(out))

asyncio.run(main())
"""
)


@pytest.mark.slow
def test_watching_a_checkpoint_never_imports_torch_in_the_app(tmp_path):
    ckpt = tiny_checkpoint(tmp_path / "ck", "ilql")
    code = f"DB = {str(tmp_path / 'app.db')!r}\nCKPT = {str(ckpt)!r}\n" + textwrap.dedent(WATCH)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["agent"][:2] == ["ProcessAgent", "checkpoint"] and out["agent"][2].startswith(
        "ilql:"
    )
    assert out["steps"] == 2 and out["overlay"] == [2, "ilql", 4] and out["arrows"] > 0
    assert out["torch"] == []
    assert out["child_exit"] is not None


async def test_escape_stops_the_loading_process(store, tmp_path, monkeypatch):
    ckpt = tmp_path / "ck"
    (ckpt / "checkpoint").mkdir(parents=True)  # the child fails on it later; escape comes first
    started: list[ProcessAgent] = []
    real_init = ProcessAgent.__init__

    def spy(self, *a, **kw):
        real_init(self, *a, **kw)
        started.append(self)

    monkeypatch.setattr(ProcessAgent, "__init__", spy)
    app = make_app(store, player="ann")
    async with app.run_test(size=(120, 44)) as pilot:
        app.new_episode("maze-fo", seed=3, checkpoint=str(ckpt))
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, NewEpisodeDialog)
        dialog.query_one("#start").press()
        for _ in range(50):  # the worker starts the child process
            await pilot.pause(0.02)
            if started:
                break
        assert started and "Loading checkpoint" in str(dialog.query_one("#error").content)
        await pilot.press("escape")
        await pilot.pause()
        assert started[0]._proc.wait(timeout=5) is not None  # stopped, not left importing torch
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.screen is dialog and "cancelled" in str(dialog.query_one("#error").content)
    assert store.count() == 0


GUIDED = (
    HEAD
    + """
async def main():
    app = make_app(DB, player="ann")
    out = {}
    async with app.run_test(size=(140, 50)) as pilot:
        screen = await watched(app, pilot, "twenty-questions", CHOICE)
        agent = screen.session.agent
        out["agent"] = [type(agent).__name__, agent.kind]
        overlay = screen.query_one("#overlay")
        expl = overlay.explanation
        out["overlay"] = [overlay.for_step, expl.algo, len(expl.candidates), expl.notes[:1]]
        from rich.console import Console
        console = Console(width=130, record=True, file=io.StringIO())
        console.print(overlay.content)
        out["shown"] = console.export_text()
        out["torch"] = sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "transformers"))
        app.pop_screen()
        await settle(app, pilot)
    print(json.dumps(out))

asyncio.run(main())
"""
)


@pytest.mark.slow
def test_a_guided_agent_chosen_in_the_dialog_plays_and_shows_its_candidates(tmp_path):
    from support.checkpoint_support import tiny_goal_checkpoint, tiny_hf_model

    from data.store import Store

    choice = f"guided:hf:{tiny_hf_model(tmp_path / 'llm', 1024)}+{tiny_goal_checkpoint(tmp_path)}"
    db = str(tmp_path / "app.db")
    code = f"DB = {db!r}\nCHOICE = {choice!r}\n" + textwrap.dedent(GUIDED)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["agent"] == ["ProcessAgent", "guided"] and out["torch"] == []
    step, algo, n, notes = out["overlay"]
    assert step == 2 and algo == "guided" and 1 <= n <= 4
    assert notes == ["A value model predicts how the conversation ends after each possible reply:"]
    assert "the model's final choice" in out["shown"] and "the secret is found:" in out["shown"]
    store = Store(db)
    (ep,) = store.recent_episodes(5)
    agent_steps = [s for s in store.steps(ep["id"]) if s["role"] == "agent"]
    assert len(agent_steps) == 2 and all(s["info"]["guided"]["candidates"] for s in agent_steps)
    assert ep["agent_kind"] == "guided"
    store.close()
