"""Our tasks for TRL's GRPO trainer (1.16), two ways.

**One turn per sample** (:func:`turn_rows`, :class:`TurnReward`; what ``examples/trl_grpo.py``
trains on CPU): a row is a point in an episode, the conversation so far as the ``prompt``
(:mod:`envs.adapters.chat`), reached by a scripted policy from the row's seed; the model writes the
next turn; the reward is the **return from that turn on**: the task's reward for the model's turn
plus the rewards of the rest of the episode, which the same scripted policy plays out. GRPO then
compares the samples of one prompt by how the episode goes on after them. Each scored episode is
kept (:attr:`TurnReward.episodes`) for the store: rollouts are data too.

**Multi-turn** (:class:`TaskToolEnv`, for ``GRPOTrainer(environment_factory=...)``): TRL's
environment protocol, in which the model plays the whole episode by calling the tool ``act`` with
each move; ``get_reward`` is the episode's return. It needs a model that calls tools (a chat model
with a tool-calling template) and is the GPU recipe of ``docs/trainers.md``.

Pure Python: TRL is imported by the caller, never here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from envs.adapters.chat import Message, action_text, episode_messages, system_prompt
from envs.adapters.episode import ChatEpisode
from envs.core import Agent, Task, Transition, clean_text, make, make_policy, spec


def _scripted(task_id: str, policy: str) -> Agent:
    return make_policy(task_id, policy)


def turn_rows(
    task_id: str,
    seeds: Sequence[int],
    *,
    policy: str = "behaviour",
    turns: int = 3,
    options: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Up to ``turns`` rows per seed: the prompt before each of the first turns of the scripted
    ``policy``'s episode (``prompt``: chat messages; ``task``, ``seed``, ``turn``, ``policy`` and
    the ``options`` say how to get back there)."""
    opts = dict(options or {})
    rows: list[dict[str, Any]] = []
    for seed in seeds:
        task = make(task_id, **opts)
        agent = _scripted(task_id, policy)
        first = task.reset(seed)
        agent.reset(task, seed)
        system = system_prompt(task, spec(task_id, **opts).roles[0])
        done: list[tuple[str, str]] = []
        for k in range(turns):
            prompt = episode_messages(system, first, done)
            rows.append(
                {"prompt": prompt, "task": task_id, "seed": seed, "turn": k, "policy": policy}
            )
            action = clean_text(agent.act(task.history()))
            st = task.step(action)
            done.append((action, st.observation))
            if st.terminated or st.truncated:
                break
        task.close()
    return rows


@dataclass
class ScoredEpisode:
    """An episode a reward call played: the scripted turns, the model's, the scripted rest."""

    task_id: str
    seed: int
    options: dict[str, Any]
    first_observation: str
    transitions: list[Transition]
    model_turn: int
    policy: str
    reward: float
    """The return from the model's turn on (what GRPO was given)."""

    @property
    def total_return(self) -> float:
        return math.fsum(t.reward for t in self.transitions)


def _completion_text(completion: Any) -> str:
    if isinstance(completion, str):
        return completion
    said = [m.get("content", "") for m in completion if m.get("role") == "assistant"]
    return said[-1] if said else ""


@dataclass
class TurnReward:
    """GRPO's reward function for :func:`turn_rows` (TRL passes the row's columns by name)."""

    options: dict[str, Any] = field(default_factory=dict)
    keep: bool = True
    """Keep each scored episode in :attr:`episodes` (for the store)."""
    episodes: list[ScoredEpisode] = field(default_factory=list)
    __name__ = "episode_return_from_turn"  # TRL logs a reward function by its name

    def __call__(
        self,
        prompts: Sequence[Any],
        completions: Sequence[Any],
        task: Sequence[str],
        seed: Sequence[int],
        turn: Sequence[int],
        policy: Sequence[str],
        **_: Any,
    ) -> list[float]:
        return [
            self.score(t, int(s), int(k), p, _completion_text(c))
            for c, t, s, k, p in zip(completions, task, seed, turn, policy, strict=True)
        ]

    def score(self, task_id: str, seed: int, turn: int, policy: str, reply: str) -> float:
        """The return from turn ``turn`` on, the model having said ``reply`` there."""
        task: Task = make(task_id, **self.options)
        try:
            agent = _scripted(task_id, policy)
            first = task.reset(seed)
            agent.reset(task, seed)
            played: list[Transition] = []
            for k in range(10 * task.spec.max_turns + 10):
                scripted = clean_text(agent.act(task.history()))
                action = action_text(clean_text(reply)) if k == turn else scripted
                st = task.step(action)
                by = "model" if k == turn else f"scripted:{policy}"
                played.append(Transition(action, *st[:4], {**st.info, "by": by}))
                if st.terminated or st.truncated:
                    break
        finally:
            task.close()
        reward = math.fsum(t.reward for t in played[turn:])
        if self.keep:
            self.episodes.append(
                ScoredEpisode(
                    task_id, seed, dict(self.options), first, played, turn, policy, reward
                )
            )
        return reward


class TaskToolEnv:
    """TRL's ``environment_factory`` protocol for one task (see the module docstring):
    ``reset(**row)`` starts the row's episode (its ``task`` and ``seed`` columns) and returns the
    first observation; the tool :meth:`act` plays a move; :meth:`get_reward` is the return."""

    def __init__(self, task: str | None = None, side: str = "agent", **options: Any) -> None:
        self._task_id, self._side, self._options = task, side, options
        self._episode: ChatEpisode | None = None

    def reset(self, **row: Any) -> str:
        task_id = row.get("task") or self._task_id
        if task_id is None:
            raise ValueError("TaskToolEnv needs a task: give task= or a task column")
        if self._episode is not None:
            self._episode.close()
        self._episode = ChatEpisode(str(task_id), self._side, options=self._options)
        return self._episode.reset(int(row.get("seed", 0)))

    def act(self, move: str) -> str:
        """Play your next move in the game.

        Args:
            move: Your move, written as the game asks for it (one line).

        Returns:
            What the game says next, or that the game is over and its result.
        """
        episode = self._episode
        if episode is None:
            raise ValueError("reset() the environment first")
        if episode.done:
            raise ValueError("The game is over.")
        said, _, done = episode.step(move)
        if done:
            return f"{said}\nThe game is over. Your return: {episode.total_return:g}.".lstrip()
        return said

    def get_reward(self) -> float:
        return self._episode.total_return if self._episode is not None else 0.0

    def _messages(self) -> list[Message]:
        return self._episode.conversation.copy() if self._episode is not None else []
