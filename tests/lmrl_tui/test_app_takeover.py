"""Taking over from an agent in the app: the person's steps are stored as corrections of that
agent (what it would have played, who took over), the episode is marked, and a dataset query
returns exactly those steps."""

from __future__ import annotations

import pytest

import envs
from data.datasets import DatasetQuery, select_episode_ids, takeover_steps
from data.session import PlaySession
from envs.maze.task import ACTIONS
from lmrl_tui.app import make_app
from lmrl_tui.screens.play import PlayScreen

KEY_FOR = {"move up\n": "up", "move down\n": "down", "move left\n": "left", "move right\n": "right"}


async def settle(app, pilot) -> None:
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()


async def watch_then_take_over(
    app, pilot, agent, seed: int, agent_moves: int, hand_back_once: bool = False
) -> PlayScreen:
    """Watch ``agent`` play ``agent_moves`` steps, take over and finish the maze by hand
    (``hand_back_once``: after one move by hand, hand back for one agent move, take over again)."""
    screen = app.start_session("maze-fo", agent, None, seed, None)
    await settle(app, pilot)
    for _ in range(agent_moves):
        await pilot.press("space")
        await settle(app, pilot)
    await pilot.press("t")
    await settle(app, pilot)
    assert screen.takeover and "taken over" in str(screen.query_one("#status").content)
    guide = envs.make_policy("maze-fo", "optimal")
    guide.reset(screen.session.task, seed)
    if hand_back_once:
        await pilot.press(KEY_FOR[guide.act(screen.session.task.history())])
        await settle(app, pilot)
        await pilot.press(
            "t", "left"
        )  # handed back: the arrow plays nothing, space steps the agent
        await settle(app, pilot)
        assert not screen.takeover and len(screen.session.transitions) == agent_moves + 1
        await pilot.press("space")
        await settle(app, pilot)
        await pilot.press("t")
        await settle(app, pilot)
    while not screen.session.done:
        await pilot.press(KEY_FOR[guide.act(screen.session.task.history())])
        await settle(app, pilot)
    return screen


def check_takeover_episode(
    store, episode_id: int, agent_steps: set[int], proposals_from, source: str
) -> list[dict]:
    """The steps with index in ``agent_steps`` are the agent's, the others the person's."""
    ep = store.episode(episode_id)
    assert ep["status"] == "finished" and ep["success"] == 1 and ep["source"] == source
    steps = store.steps(episode_id)
    taken = [s for s in steps if s["idx"] not in agent_steps]
    assert taken and all(not s["info"].get("takeover") for s in steps if s["idx"] in agent_steps)
    for s in taken:
        assert s["info"]["takeover"] is True and s["info"]["player"] == "ann"
        assert s["info"]["agent_proposed"] in ACTIONS and s["typed"] is None
        assert s["info"]["via"] == "key" and s["info"]["key"] in KEY_FOR.values()
    assert ep["meta"]["takeover"] is True and ep["meta"]["takeover_steps"] == len(taken)
    check_proposals(steps, ep["seed"], proposals_from)
    return taken


def check_proposals(steps: list[dict], seed: int, agent) -> None:
    """Replay: the agent, asked once per state as in the app, played each agent step and proposed
    each takeover step's ``agent_proposed``."""
    task = envs.make("maze-fo")
    task.reset(seed)
    agent.reset(task, seed)
    for s in steps:
        said = agent.act(task.history())
        assert said == (s["info"]["agent_proposed"] if s["info"].get("takeover") else s["action"])
        task.step(s["action"])


async def test_take_over_mid_episode_and_finish_by_hand(store):
    plain = PlaySession(store, "maze-fo", agent=envs.make_policy("maze-fo", "random"), seed=5)
    plain.start()  # an episode of the same agent watched without taking over
    while not plain.done:
        plain.agent_step()
    app = make_app(store, player="ann")
    async with app.run_test(size=(140, 44)) as pilot:
        screen = await watch_then_take_over(
            app, pilot, envs.make_policy("maze-fo", "random"), 5, 2, hand_back_once=True
        )
        episode_id = screen.session.episode_id
    taken = check_takeover_episode(
        store, episode_id, {0, 1, 3}, envs.make_policy("maze-fo", "random"), "scripted"
    )
    # The dataset query: exactly the takeover episode and exactly the person's steps.
    assert select_episode_ids(store, DatasetQuery(task="maze-fo", takeover_only=True)) == [
        episode_id
    ]
    assert select_episode_ids(
        store, DatasetQuery(task="maze-fo", takeover_only=True, status="any")
    ) == [episode_id]
    assert select_episode_ids(store, DatasetQuery(task="maze-fo", sources=["scripted"])) == [
        plain.episode_id,
        episode_id,
    ]
    got = takeover_steps(store, DatasetQuery(task="maze-fo", takeover_only=True))
    assert [(s["episode_id"], s["idx"]) for s in got] == [(episode_id, s["idx"]) for s in taken]
    assert takeover_steps(store, DatasetQuery(task="maze-po")) == []


def test_export_takeover_only(store, db_path, tmp_path):
    """``lmrl export --takeover-only``: only the corrected episodes, with the proposals."""
    from lmrl_tui.cli import main

    for take_over in (False, True):
        s = PlaySession(
            store, "maze-fo", agent=envs.make_policy("maze-fo", "random"), seed=9, player="ann"
        )
        s.start()
        s.agent_step()
        if take_over:
            s.takeover_input("up", s.agent_action(), "ann")
        s.abandon()  # kept, abandoned; the takeover still marked on its episode
    out = tmp_path / "t.jsonl"
    assert (
        main(["--db", str(db_path), "export", "--status", "any", "--takeover-only", "-o", str(out)])
        == 0
    )
    lines = out.read_text().splitlines()
    assert len(lines) == 1 and '"agent_proposed"' in lines[0] and '"takeover": true' in lines[0]


@pytest.mark.slow
async def test_take_over_from_a_checkpoint(store, tmp_path):
    pytest.importorskip("torch")
    from support.checkpoint_support import tiny_checkpoint

    from training.agents.checkpoint_agent import load_agent

    path = tiny_checkpoint(tmp_path, "ilql")
    app = make_app(store, player="ann")
    async with app.run_test(size=(140, 44)) as pilot:
        screen = await watch_then_take_over(app, pilot, load_agent(path), 4, 3)
        episode_id = screen.session.episode_id
    check_takeover_episode(store, episode_id, {0, 1, 2}, load_agent(path), "agent")
    assert {s["episode_id"] for s in takeover_steps(store)} == {episode_id}


@pytest.mark.slow
async def test_take_over_a_chat_agent_and_hand_back_from_the_text_field(store):
    """Twenty Questions: the person types the watched asker's question; ctrl+t hands back from
    the text field (where t would be typed)."""
    app = make_app(store, player="ann")
    async with app.run_test(size=(140, 44)) as pilot:
        screen = app.start_session(
            "twenty-questions", envs.make_policy("twenty-questions", "strong"), None, 2, None
        )
        await settle(app, pilot)
        await pilot.press("t")
        await settle(app, pilot)
        await pilot.press(*"Is it alive?", "enter")
        await settle(app, pilot)
        assert len(screen.session.transitions) == 1 and screen.takeover
        await pilot.press("ctrl+t")
        await settle(app, pilot)
        assert not screen.takeover
        await pilot.press("space")
        await settle(app, pilot)
    steps = store.steps(screen.session.episode_id)
    assert [bool(s["info"].get("takeover")) for s in steps] == [True, False]
    assert steps[0]["typed"] == "Is it alive?" and steps[0]["action"] == "Is it alive?\n"
    task, asker = envs.make("twenty-questions"), envs.make_policy("twenty-questions", "strong")
    task.reset(2)
    asker.reset(task, 2)
    assert steps[0]["info"]["agent_proposed"] == asker.act(
        task.history()
    )  # what it would have asked
