"""lmrl-tui tasks: pure-Python, seeded simulators with LMRL-Gym's model-facing texts.

``envs.make(id)``, ``envs.ids()``, ``envs.make_policy(id, name)``; see :mod:`envs.core`. One
subpackage per task family: ``maze``, ``textnav``, ``wordle``, ``chess``, ``questions`` (Twenty
Questions, Guess My City) and ``car_dealer``, each with the same file names for the same roles
(``task.py``, ``policies.py``, ``partner.py``, ``text.py``, ``data.py``, ``engine.py``).
This package never imports textual or torch.
"""

from envs.core import (
    POLICY_ALIASES,
    Agent,
    Episode,
    InvalidInput,
    NormConstants,
    RandomAgent,
    Step,
    Task,
    TaskBase,
    TaskSpec,
    Text,
    TextHistory,
    Transition,
    UnknownPolicy,
    UnknownTask,
    episode_success,
    episode_text_history,
    history_to_str,
    ids,
    make,
    make_policy,
    normalised_score,
    parse_option,
    policies,
    register,
    registered_ids,
    replay,
    run_episode,
    spec,
)

__all__ = [
    "POLICY_ALIASES",
    "Agent",
    "Episode",
    "episode_success",
    "InvalidInput",
    "NormConstants",
    "RandomAgent",
    "Step",
    "Task",
    "TaskBase",
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
    "parse_option",
    "policies",
    "register",
    "registered_ids",
    "replay",
    "run_episode",
    "spec",
]
