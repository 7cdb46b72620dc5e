"""The task core: the Task and Agent interfaces, the registry, task options and the episode runner.

Everything here is plain Python; the task families build on it (and declare themselves to it:
each family's ``family.py``, :mod:`envs.discovery`); it names none of them.
"""

from envs.core.api import (
    EMPTY_INFO,
    Agent,
    InvalidInput,
    NormConstants,
    RandomAgent,
    Step,
    Task,
    TaskBase,
    TaskSpec,
    Text,
    TextHistory,
    clean_text,
    history_to_str,
    normalised_score,
)
from envs.core.episode import (
    Episode,
    Transition,
    episode_success,
    episode_text_history,
    replay,
    run_episode,
)
from envs.core.options import parse_option
from envs.core.registry import (
    POLICY_ALIASES,
    UnknownPolicy,
    UnknownTask,
    builtin_ids,
    ids,
    make,
    make_policy,
    policies,
    register,
    registered_ids,
    spec,
)

__all__ = [
    "EMPTY_INFO",
    "POLICY_ALIASES",
    "Agent",
    "Episode",
    "InvalidInput",
    "NormConstants",
    "RandomAgent",
    "Step",
    "Task",
    "TaskBase",
    "TaskSpec",
    "Text",
    "TextHistory",
    "clean_text",
    "Transition",
    "UnknownPolicy",
    "UnknownTask",
    "builtin_ids",
    "episode_success",
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
