"""Who can play a side: a human, a scripted policy, or a trained checkpoint (loaded lazily)."""

from __future__ import annotations

from pathlib import Path

import envs
from envs.core import Agent

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


MODEL_HELP = (
    "a policy name, a checkpoint folder, hf:MODEL (a local Hugging Face causal LM: path or hub id) "
    "or http:MODEL@BASE_URL (an OpenAI-compatible endpoint; key from $OPENAI_API_KEY)"
)


def make_model_agent(choice: str, role: str = "agent") -> Agent | None:
    """``hf:MODEL`` or ``http:MODEL@BASE_URL`` as an agent or partner; None if ``choice`` is neither."""
    if choice.startswith("hf:"):
        model = choice[3:].strip()
        if not model:
            raise AgentChoiceError("hf: needs a model path or hub id, e.g. hf:./my-model")
        try:
            from training.hf_agent import HFAgent
        except ImportError as e:
            raise AgentChoiceError(f"a Hugging Face model needs the training extra: pip install 'lmrl-tui[train]' ({e})") from None
        return HFAgent(model)
    if choice.startswith("http:") and "@" in choice:
        model, _, base_url = choice[5:].partition("@")
        if not model.strip() or not base_url.strip():
            raise AgentChoiceError("write an endpoint as http:MODEL@BASE_URL, e.g. http:llama3@http://127.0.0.1:8000/v1")
        from envs.core.remote import ChatEndpointAgent

        return ChatEndpointAgent(base_url.strip(), model.strip(), role=role)
    return None


def make_agent(task_id: str, choice: str, role: str = "agent") -> Agent | None:
    """None for a human; a scripted policy by name; a model (hf:, http:); or a checkpoint folder."""
    if choice == HUMAN:
        return None
    if choice in envs.policies(task_id) or choice in envs.POLICY_ALIASES:
        return envs.make_policy(task_id, choice)
    model = make_model_agent(choice, role)
    if model is not None:
        return model
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
        f"unknown policy {choice!r} for {task_id}: use one of {names}, a checkpoint folder, "
        "hf:MODEL or http:MODEL@BASE_URL"
    )
