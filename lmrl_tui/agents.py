"""Who can play a side: a human, a scripted policy, or a trained checkpoint (loaded lazily)."""

from __future__ import annotations

from pathlib import Path

import envs
from envs.base import Agent

HUMAN = "human"


class AgentChoiceError(ValueError):
    pass


def agent_choices(task_id: str) -> list[tuple[str, str]]:
    """(label, value) pairs for the new-episode dialog: human first, then the scripted policies."""
    out = [("Me (human)", HUMAN)]
    labels = {
        "strong": "Scripted strong (optimal)",
        "behaviour": "Scripted behaviour (data policy)",
        "random": "Random",
    }
    for name in envs.policies(task_id):
        out.append((labels.get(name, f"Scripted {name}"), name))
    return out


def make_agent(task_id: str, choice: str) -> Agent | None:
    """None for a human; a scripted policy by name; or a checkpoint folder (imports torch)."""
    if choice == HUMAN:
        return None
    if choice in envs.policies(task_id) or choice in envs.base.POLICY_ALIASES:
        return envs.make_policy(task_id, choice)
    path = Path(choice).expanduser()
    if path.exists():
        try:
            from training.agent import load_agent
        except ImportError as e:  # the train extra is not installed
            raise AgentChoiceError(
                f"loading a checkpoint needs the training extra: pip install 'lmrl-tui[train]' ({e})"
            ) from None
        return load_agent(str(path), task=task_id)
    names = ", ".join(envs.policies(task_id))
    raise AgentChoiceError(
        f"unknown policy {choice!r} for {task_id}: use one of {names}, or a checkpoint folder"
    )
