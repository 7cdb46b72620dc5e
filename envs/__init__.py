"""lmrl-tui tasks: pure-Python, seeded simulators with LMRL-Gym's model-facing texts.

``envs.make(id)``, ``envs.ids()``, ``envs.make_policy(id, name)``; see :mod:`envs.base`.
This package never imports textual or torch.
"""

from envs.base import (
    Agent,
    Episode,
    InvalidInput,
    NormConstants,
    RandomAgent,
    Step,
    Task,
    TaskSpec,
    Text,
    TextHistory,
    Transition,
    UnknownPolicy,
    UnknownTask,
    episode_text_history,
    history_to_str,
    ids,
    make,
    make_policy,
    normalised_score,
    policies,
    register,
    replay,
    run_episode,
    spec,
)

__all__ = [
    "Agent",
    "Episode",
    "InvalidInput",
    "NormConstants",
    "RandomAgent",
    "Step",
    "Task",
    "TaskSpec",
    "Text",
    "TextHistory",
    "Transition",
    "UnknownPolicy",
    "UnknownTask",
    "episode_text_history",
    "history_to_str",
    "ids",
    "make",
    "make_policy",
    "normalised_score",
    "policies",
    "register",
    "replay",
    "run_episode",
    "spec",
]
