"""Moved to :mod:`envs.core.agents` (the agent factory lives under the UI now).

Kept only so that ``from lmrl_tui.agents import AgentChoiceError`` in ``lmrl_tui/cli.py``'s
``_user_errors`` keeps working while that file is rewritten on another branch; import from
``envs.core.agents`` instead. Remove this module once nothing imports it.
"""

from envs.core.agents import (
    HUMAN,
    MODEL_HELP,
    AgentChoiceError,
    agent_choices,
    make_agent,
    make_model_agent,
)

__all__ = ["HUMAN", "MODEL_HELP", "AgentChoiceError", "agent_choices", "make_agent", "make_model_agent"]
