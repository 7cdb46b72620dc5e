"""The OpenEnv (0.3) server of our tasks (``envs/adapters/openenv_env.py``): a real server on a free
loopback port (uvicorn in a thread), OpenEnv's own WebSocket client, whole episodes played through
it from either side; the rewards it hands out sum to the task's return.

Slow: importing openenv 0.3 imports gradio (its web UI), 5-15 s, so the module imports it only
in its fixtures and is skipped without it."""

from __future__ import annotations

import importlib.util
import math
import socket
import threading
import time
from collections.abc import Iterator
from types import ModuleType

import pytest

import envs
from envs.adapters.episode import ChatEpisode

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("openenv") is None, reason="needs openenv-core"),
]


@pytest.fixture(scope="module")
def oe() -> ModuleType:
    return pytest.importorskip("envs.adapters.openenv_env")


@pytest.fixture(scope="module")
def base_url(oe: ModuleType) -> Iterator[str]:
    """A maze-fo server (other tasks are picked at reset) on a free loopback port."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(oe.create_app("maze-fo"), log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=5)
    sock.close()


SHORT = {"chess": {"max_moves": 12}}


def _scripted(task_id: str, seed: int) -> envs.Episode:
    names = envs.policies(task_id)
    policy = "behaviour" if "behaviour" in names else names[0]
    task = envs.make(task_id, **SHORT.get(task_id, {}))
    return envs.run_episode(task, envs.make_policy(task_id, policy), seed)


@pytest.mark.parametrize("task_id", envs.ids())
def test_a_scripted_episode_over_openenv_scores_the_task_s_return(oe, base_url, task_id) -> None:
    seed = 3
    episode = _scripted(task_id, seed)
    with oe.LmrlEnvClient(base_url=base_url).sync() as client:
        first = client.reset(seed=seed, task=task_id, options=SHORT.get(task_id, {}))
        obs = first.observation
        assert not first.done and obs.task == task_id and obs.side == envs.spec(task_id).roles[0]
        assert [m["role"] for m in obs.messages] == ["system", "user"]
        assert obs.text == episode.first_observation.rstrip("\n")
        rewards = []
        for t in episode.transitions:
            assert not obs.done
            result = client.step(oe.LmrlAction(text=t.action.rstrip("\n") + "\nthinking aloud"))
            obs = result.observation
            rewards.append(result.reward)
        state = client.state()
    ours = [t.reward for t in episode.transitions]
    assert result.done and rewards == ours
    assert obs.text == episode.transitions[-1].observation.rstrip("\n")
    assert math.fsum(rewards) == pytest.approx(math.fsum(ours)) == obs.episode_return
    assert obs.turn_rewards == ours and obs.agent_return == obs.episode_return
    assert [m["role"] for m in obs.messages[1:3]] == ["user", "assistant"]
    assert "thinking aloud" not in obs.messages[2]["content"]  # the reply's first line is played
    assert state.done and state.step_count == len(ours) and state.seed == seed
    assert state.task == task_id and state.episode_return == obs.episode_return
    if envs.spec(task_id).success_return is not None or "success" in episode.transitions[-1].info:
        assert isinstance(obs.success, bool)


@pytest.mark.parametrize("task_id", [t for t in envs.ids() if len(envs.spec(t).roles) > 1])
def test_the_partner_s_side_over_openenv(oe, base_url, task_id) -> None:
    """The partner's seat (the car buyer, the oracle, the chess opponent): the acting side's
    scripted policy acts; the partner's replies are ours; the rewards are zero-sum."""
    seed, replies = 1, ["No.", "Too expensive for me.", "I'll think about it."] * 150
    role, options = envs.spec(task_id).roles[1], SHORT.get(task_id, {})
    local = ChatEpisode(task_id, role, partner_reward="zero-sum", options=options)
    said, local_rewards = local.reset(seed), []
    with oe.LmrlEnvClient(base_url=base_url).sync() as client:
        result = client.reset(
            seed=seed, task=task_id, side=role, partner_reward="zero-sum", options=options
        )
        assert result.observation.side == role and result.observation.text == said
        rewards = []
        for reply in replies:
            if result.done:
                break
            result = client.step(oe.LmrlAction(text=reply))
            rewards.append(result.reward)
            said, reward, _ = local.step(reply)
            local_rewards.append(reward)
            assert result.observation.text == said
    obs = result.observation
    assert result.done and local.done and rewards == local_rewards
    assert math.fsum(rewards) == pytest.approx(obs.episode_return) == local.total_return
    assert obs.episode_return == pytest.approx(-obs.agent_return)  # zero-sum
    assert obs.agent_return == pytest.approx(local.agent_return)
    local.close()


def test_sessions_are_apart_and_reset_defaults_to_the_server_s_task(oe, base_url) -> None:
    with (
        oe.LmrlEnvClient(base_url=base_url).sync() as one,
        oe.LmrlEnvClient(base_url=base_url).sync() as two,
    ):
        assert one.reset(seed=0, task="wordle").observation.task == "wordle"
        assert two.reset(seed=0).observation.task == "maze-fo"  # the server's task
        played = one.step(oe.LmrlAction(text="c r a n e"))
        assert played.reward == -1.0 and one.state().step_count == 1
        assert two.state().step_count == 0 and two.state().task == "maze-fo"
        assert one.reset(seed=1).observation.task == "maze-fo"  # not the last episode's


def test_a_bad_side_fails_when_the_server_is_made(oe) -> None:
    with pytest.raises(ValueError, match="maze-fo: side must be agent"):
        oe.create_app("maze-fo", side="partner")
