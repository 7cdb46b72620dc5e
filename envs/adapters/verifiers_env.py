"""Every lmrl-tui task as a `verifiers` (0.4) environment: the model plays one side of the
dialogue, the task (and its built-in partner) the rest.

``load_environment("wordle", side="agent", num_examples=50)`` returns the environment (a
``verifiers.v1.Env``); ``vf-eval lmrl-verifiers --env.taskset.game wordle`` finds the same one by
its plugin id (the top-level package ``lmrl_verifiers`` re-exports this module, as verifiers 0.4
imports a plugin by its id). Verifiers 0.4 replaced 0.3's ``MultiTurnEnv`` with ``Env.run``: the
environment drives an ``interaction`` turn by turn, as its TextArena taskset does.

* Tasks (rows): one per seed, ``first_seed``, ``first_seed + 1``, ... (``num_examples`` of them),
  or the given ``seeds``; the system prompt is the side's rules (:mod:`envs.adapters.chat`); the
  environment opens with the task's first observation.
* A turn: the model's reply (its first line, as the task's action) goes to the task; what comes
  back is the next user message; the episode ends when the task ends it (or the agent's own
  ``max_turns`` does).
* Scoring: the reward ``return`` is the episode's return on the played side (weight 1), the
  task's own sum of per-turn rewards; ``success`` is a metric where the task defines success;
  the per-turn rewards, the acting side's return and whether the episode finished are in
  ``trace.info`` (``turn_rewards``, ``agent_return``, ``finished``).

This module imports verifiers (``pip install 'lmrl-tui[trainers]'``); ``envs`` never imports it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from typing import Any

import verifiers.v1 as vf

from envs.adapters.chat import resolve_side
from envs.adapters.episode import ChatEpisode
from envs.adapters.seat import partner_reward as seat_reward
from envs.core import spec

PLUGIN_ID = "lmrl-verifiers"
"""The taskset id verifiers knows these tasks by (it imports the module ``lmrl_verifiers``)."""

__all__ = [
    "PLUGIN_ID",
    "LmrlEnv",
    "LmrlEnvConfig",
    "LmrlTask",
    "LmrlTaskData",
    "LmrlTaskset",
    "LmrlTasksetConfig",
    "load_environment",
    "play",
]


class LmrlTasksetConfig(vf.TasksetConfig):
    game: str = "maze-fo"
    """The lmrl-tui task id (``lmrl tasks`` lists them)."""
    side: str = "agent"
    """``agent`` (the acting side), ``partner`` or a role name (``oracle``, ``buyer``)."""
    partner: str | None = None
    """Who plays the other side (see :mod:`envs.adapters.episode`): built in by default."""
    partner_reward: str = "none"
    """On the partner's side: ``none``, ``zero-sum`` or ``shared`` (:mod:`envs.adapters.seat`)."""
    options: dict[str, Any] = {}
    """The task's options (``{"words": "small"}``)."""
    seeds: list[int] | None = None
    first_seed: int = 0
    num_examples: int = 100


class LmrlTaskData(vf.TaskData):
    info: dict[str, Any]
    """The task id, seed, side, partner and options the episode is played from."""


class LmrlTask(vf.Task[LmrlTaskData, vf.State, vf.TaskConfig]):
    pass


class LmrlTaskset(vf.Taskset[LmrlTask, LmrlTasksetConfig]):
    def load(self) -> Iterator[LmrlTask]:
        c = self.config
        role = resolve_side(spec(c.game, **c.options), c.side)
        probe = ChatEpisode(c.game, c.side, c.partner, c.partner_reward, c.options)
        system = probe.system
        probe.close()
        seeds: Sequence[int] = (
            c.seeds if c.seeds is not None else range(c.first_seed, c.first_seed + c.num_examples)
        )
        for seed in seeds:
            info = {
                "game": c.game,
                "seed": int(seed),
                "side": role,
                "partner": c.partner,
                "partner_reward": c.partner_reward,
                "options": dict(c.options),
            }
            yield LmrlTask(
                LmrlTaskData(
                    id=f"{c.game}/{role}/{seed}",
                    name=f"{c.game} as {role}, seed {seed}",
                    prompt=None,  # the environment opens with the task's first observation
                    system_prompt=system,
                    info=info,
                ),
                c.task,
            )


class LmrlEnvConfig(vf.EnvConfig):
    player: vf.AgentConfig = vf.AgentConfig(harness={"id": "null"})
    """The model under training or evaluation: a tool-less chat loop by default."""


async def play(info: dict[str, Any], interaction: Any) -> ChatEpisode:
    """One episode over a verifiers ``interaction`` (``turn(message) -> Segment``); records the
    rewards on its trace (see the module docstring) and returns the finished episode."""
    episode = ChatEpisode(
        info["game"], info["side"], info.get("partner"), info["partner_reward"], info["options"]
    )
    try:
        said = await asyncio.to_thread(episode.reset, info["seed"])
        while not episode.done:
            segment = await interaction.turn(said)
            if segment.terminated:
                break
            said, _, _ = await asyncio.to_thread(episode.step, segment.last_reply)
    finally:
        await asyncio.to_thread(episode.close)
    return episode


def record(trace: Any, episode: ChatEpisode) -> None:
    """The episode's scores on a verifiers trace."""
    trace.record_reward("return", episode.total_return, 1.0)
    success = episode.success()
    if success is not None:
        trace.record_metric("success", float(success))
    trace.info["turn_rewards"] = list(episode.rewards)
    trace.info["agent_return"] = episode.agent_return
    trace.info["finished"] = episode.done


class LmrlEnv(vf.Env[LmrlEnvConfig]):
    async def run(self, task: Any, agents: Any) -> None:
        async with agents.player.interaction(task) as interaction:
            episode = await play(task.data.info, interaction)
        record(interaction.trace, episode)


def load_environment(
    task: str,
    *,
    side: str = "agent",
    partner: str | None = None,
    partner_reward: str = "none",
    seeds: Sequence[int] | None = None,
    num_examples: int = 100,
    first_seed: int = 0,
    options: dict[str, Any] | None = None,
    player: dict[str, Any] | None = None,
) -> LmrlEnv:
    """The verifiers environment of ``task`` played from ``side`` (see the module docstring);
    ``player`` overrides the model side's ``AgentConfig`` fields (``max_turns``, ``runtime``)."""
    resolve_side(spec(task, **(options or {})), side)  # a bad task, option or side fails here
    seat_reward(partner_reward, [])
    taskset = LmrlTasksetConfig(
        id=PLUGIN_ID,
        game=task,
        side=side,
        partner=partner,
        partner_reward=partner_reward,
        seeds=list(seeds) if seeds is not None else None,
        num_examples=num_examples,
        first_seed=first_seed,
        options=dict(options or {}),
    )
    agent = vf.AgentConfig(**{"harness": {"id": "null"}, **(player or {})})
    return LmrlEnv(LmrlEnvConfig(taskset=taskset, player=agent))
