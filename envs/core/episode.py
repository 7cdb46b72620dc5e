"""Running episodes without the app (generation, tests, evaluation), and the success rule."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from envs.core.api import Agent, Task, TaskSpec, Text, TextHistory, clean_text, step_notes


def episode_success(
    spec: TaskSpec, last_info: Mapping[str, Any] | None, total_return: float
) -> bool | None:
    """Whether an episode succeeded: the last step's ``info["success"]`` when the task says so,
    else ``total_return >= spec.success_return``, else None (the task does not define success)."""
    if last_info is not None and last_info.get("success") is not None:
        return bool(last_info["success"])
    if spec.success_return is not None:
        return total_return >= spec.success_return
    return None


# --------------------------------------------------------------------------------------------
# Running episodes without the app (generation, tests, evaluation)


@dataclass
class Transition:
    action: str
    observation: str
    reward: float
    terminated: bool
    truncated: bool
    info: Mapping[str, Any]


@dataclass
class Episode:
    """A finished (or cut) episode in memory: the first observation plus its transitions."""

    task_id: str
    seed: int | None
    first_observation: str
    transitions: list[Transition] = field(default_factory=list)

    @property
    def total_return(self) -> float:
        return math.fsum(t.reward for t in self.transitions)

    @property
    def done(self) -> bool:
        return bool(self.transitions) and (
            self.transitions[-1].terminated or self.transitions[-1].truncated
        )

    def text_history(self) -> TextHistory:
        """The whole episode as LMRL segments (observation, action, observation, ...)."""
        return episode_text_history(
            self.first_observation, [(t.action, t.observation) for t in self.transitions]
        )


def episode_text_history(first_observation: str, pairs: Sequence[tuple[str, str]]) -> TextHistory:
    out = [Text(first_observation, False)]
    for action, observation in pairs:
        out.append(Text(action, True))
        if observation:
            out.append(Text(observation, False))
    return tuple(out)


def run_episode(
    task: Task,
    agent: Agent,
    seed: int | None = None,
    options: Mapping[str, Any] | None = None,
    max_steps: int | None = None,
) -> Episode:
    """Play one episode of ``agent`` in ``task`` from ``seed``."""
    first = task.reset(seed, options)
    agent.reset(task, seed)
    ep = Episode(task.spec.id, seed, first)
    limit = max_steps if max_steps is not None else 10 * task.spec.max_turns + 10
    for _ in range(limit):
        action = clean_text(agent.act(task.history()))
        notes = step_notes(agent)
        st = task.step(action)
        ep.transitions.append(
            Transition(action, *st)
            if notes is None
            else Transition(action, *st[:4], {**st.info, **notes})
        )
        if st.terminated or st.truncated:
            break
    return ep


def replay(task: Task, seed: int | None, actions: Sequence[str], options=None) -> Episode:
    """Re-run recorded actions from the recorded seed (the episode must reproduce exactly)."""
    first = task.reset(seed, options)
    ep = Episode(task.spec.id, seed, first)
    for action in actions:
        st = task.step(action)
        ep.transitions.append(Transition(action, *st))
        if st.terminated or st.truncated:
            break
    return ep
