"""The verifiers (0.4) environment of every task (``envs/adapters/verifiers_env.py``): found by its
plugin id, one row per seed, and an episode played through it scores exactly the task's return.

The model's side is scripted: a stand-in for verifiers' ``interaction`` answers each user message
with the next action of a reference episode (verifiers' own agents need a model server and a
harness process); the environment's ``run``, the episode, the scoring and verifiers' ``Trace``
are the real ones."""

from __future__ import annotations

import asyncio
import math
from contextlib import asynccontextmanager
from types import SimpleNamespace

import pytest

import envs

vf = pytest.importorskip("verifiers.v1")
from envs.adapters.verifiers_env import PLUGIN_ID, LmrlEnv, load_environment  # noqa: E402

SHORT = {"chess": {"max_moves": 12}}


class ScriptedInteraction:
    """Answers each turn with the next scripted reply; then the run ends (``terminated``)."""

    def __init__(self, task, replies: list[str]) -> None:
        self.replies = iter(replies)
        self.heard: list[str | None] = []
        self.trace = vf.Trace(
            task=vf.TraceTask(type="LmrlTask", data=task.data),
            agent=vf.AgentInfo(config=vf.AgentConfig()),
        )

    async def turn(self, message=None):
        self.heard.append(message)
        reply = next(self.replies, None)
        if reply is None:
            return vf.Segment(messages=[], terminated=True)
        return vf.Segment(messages=[], root_reply=reply)


def _run(env: LmrlEnv, task, replies: list[str]) -> ScriptedInteraction:
    seen: list[ScriptedInteraction] = []

    @asynccontextmanager
    async def interaction(t):
        seen.append(ScriptedInteraction(t, replies))
        yield seen[-1]

    asyncio.run(env.run(task, SimpleNamespace(player=SimpleNamespace(interaction=interaction))))
    return seen[0]


def _policy(task_id: str) -> str:
    names = envs.policies(task_id)
    return "behaviour" if "behaviour" in names else names[0]


def test_verifiers_finds_the_environment_by_its_plugin_id() -> None:
    from verifiers.v1.utils.loaders import environment_class, resolve_env_config, taskset_class

    assert environment_class(PLUGIN_ID) is LmrlEnv
    config = resolve_env_config({"taskset": {"id": PLUGIN_ID, "game": "guess-city"}})
    assert config.taskset.game == "guess-city"
    assert config.player.harness.id == "null"  # a tool-less chat loop
    env = vf.load_environment(config)
    assert type(env) is LmrlEnv and type(env.taskset) is taskset_class(PLUGIN_ID)


def test_rows_are_seeds_with_the_side_s_rules_as_system_prompt() -> None:
    env = load_environment("twenty-questions", side="oracle", seeds=[5, 9])
    tasks = list(env.taskset)
    assert [t.data.info["seed"] for t in tasks] == [5, 9]
    assert tasks[0].data.system_prompt == envs.spec("twenty-questions").instructions["oracle"]
    assert tasks[0].data.prompt is None and tasks[0].data.info["side"] == "oracle"
    assert len(list(load_environment("maze-fo", num_examples=4, first_seed=10).taskset)) == 4
    with pytest.raises(ValueError, match="maze-fo: side must be agent"):
        load_environment("maze-fo", side="partner")


@pytest.mark.parametrize("task_id", envs.ids())
def test_the_reward_of_an_episode_is_the_task_s_return(task_id: str) -> None:
    seed, options = 3, SHORT.get(task_id, {})
    episode = envs.run_episode(
        envs.make(task_id, **options), envs.make_policy(task_id, _policy(task_id)), seed
    )
    env = load_environment(task_id, seeds=[seed], options=options)
    (task,) = list(env.taskset)
    played = _run(env, task, [t.action.rstrip("\n") for t in episode.transitions])
    rewards = [t.reward for t in episode.transitions]
    assert played.trace.rewards["return"].score == pytest.approx(math.fsum(rewards))
    assert played.trace.info["turn_rewards"] == rewards and played.trace.info["finished"]
    assert played.heard[0] == episode.first_observation.rstrip("\n")
    assert len(played.heard) == len(episode.transitions)  # nothing is asked after the end
    if envs.spec(task_id).success_return is not None or "success" in episode.transitions[-1].info:
        assert "success" in played.trace.metrics


@pytest.mark.parametrize("task_id", [t for t in envs.ids() if len(envs.spec(t).roles) > 1])
def test_the_partner_side_scores_its_replies(task_id: str) -> None:
    options = SHORT.get(task_id, {})
    env = load_environment(
        task_id, side="partner", partner_reward="zero-sum", seeds=[1], options=options
    )
    (task,) = list(env.taskset)
    played = _run(env, task, ["No."] * 400)
    info = played.trace.info
    assert info["finished"] and played.heard[0]
    assert played.trace.rewards["return"].score == pytest.approx(-info["agent_return"])
    assert math.fsum(info["turn_rewards"]) == pytest.approx(-info["agent_return"])


def test_a_model_that_stops_early_scores_what_it_played() -> None:
    env = load_environment("wordle", seeds=[0])
    (task,) = list(env.taskset)
    played = _run(env, task, ["c r a n e"])
    assert played.trace.info["finished"] is False
    assert played.trace.rewards["return"].score == played.trace.info["turn_rewards"][0] == -1.0
