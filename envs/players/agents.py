"""Who can play a side: a human, a scripted policy by name, a model (``hf:``, ``http:``) or a
trained checkpoint folder; and how an episode's source follows from its sides.

The task core names no package above it: the package that provides a model kind registers its
loader (:func:`provide_agent_kind`, the training package does so when imported), as a
``"module:attribute"`` string imported with importlib only when that kind is chosen, so
``import envs`` never imports torch. :func:`register_agent_loader` replaces an entry (a test's
fake) with a callable or another such string.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from envs.core.api import Agent
from envs.core.registry import POLICY_ALIASES, ids, make_policy, policies, spec
from envs.players.checkpoint_choice import (
    CheckpointSettingsError,
    checkpoint_folder,
    split_checkpoint_choice,
)

HUMAN = "human"
MODEL_KINDS = frozenset({"checkpoint", "hf", "http", "guided"})
"""Agent kinds that are models (trained or served), not scripted policies."""


def install_hint(extra: str) -> str:
    """How to install the ``extra`` of this install: from a clone (a source checkout, installed
    editable) ``pip install -e '.[extra]'``, else ``pip install 'lmrl-tui[extra]'``."""
    root = Path(__file__).resolve().parents[2]
    if (root / "pyproject.toml").is_file() and (root / "lmrl_tui").is_dir():
        return f"pip install -e '.[{extra}]' (in the clone's folder)"
    return f"pip install 'lmrl-tui[{extra}]'"


TRAIN_EXTRA = install_hint("train")


class AgentChoiceError(ValueError):
    """A choice of agent that cannot be used, explained in one line."""


def episode_source(agent_kind: str | None, partner_kind: str | None = None) -> str:
    """The ``source`` an episode is recorded under: ``human`` when a person plays either side
    (``agent_kind`` None or ``"human"``), ``agent`` for a model, else ``scripted``."""
    if agent_kind in (None, HUMAN) or partner_kind == HUMAN:
        return "human"
    return "agent" if agent_kind in MODEL_KINDS else "scripted"


# -- loaders by kind --------------------------------------------------------------------------
AgentLoader = Callable[..., Agent]

_DEFAULT_LOADERS: dict[str, AgentLoader | str] = {
    "http": "envs.players.remote:ChatEndpointAgent",  # (base_url, model, role=role)
}
"""The loader of each kind as its provider registered it. The training package adds
``checkpoint`` (path, task=task_id), ``hf`` (model) and ``guided`` (llm, checkpoint,
task=task_id, role=role)."""
_LOADERS: dict[str, AgentLoader | str] = dict(_DEFAULT_LOADERS)
_IMPORTED: dict[str, AgentLoader] = {}
"""The loaders named by strings, imported (once)."""
_NEEDS = {
    "checkpoint": "loading a checkpoint needs the training extra",
    "hf": "a Hugging Face model needs the training extra",
    "guided": "a guided agent needs the training extra",
}
"""What a kind needs, for the one-line error when its module cannot be imported."""


def provide_agent_kind(kind: str, loader: AgentLoader | str) -> None:
    """The package that provides ``kind`` registers its loader (a callable, or
    ``"module:attribute"`` imported on first use); a loader a test registered stays in use."""
    _DEFAULT_LOADERS[kind] = loader
    _LOADERS.setdefault(kind, loader)


def register_agent_loader(kind: str, loader: AgentLoader | str) -> None:
    """Use ``loader`` (a callable, or ``"module:attribute"`` imported on first use) for ``kind``."""
    _LOADERS[kind] = loader


def agent_loader(kind: str) -> AgentLoader:
    """The loader of ``kind``, importing its module now if it is named by a string."""
    try:
        entry = _LOADERS[kind]
    except KeyError:
        if kind in _NEEDS:  # a model kind whose provider is not installed, or not imported
            raise AgentChoiceError(
                f"{_NEEDS[kind]} (installed and imported): {TRAIN_EXTRA}"
            ) from None
        known = ", ".join(sorted(_LOADERS))
        raise AgentChoiceError(f"no agent loader for {kind!r}: use one of {known}") from None
    if callable(entry):
        return entry
    if entry not in _IMPORTED:
        module, _, attr = entry.partition(":")
        try:
            _IMPORTED[entry] = getattr(importlib.import_module(module), attr)
        except ImportError as e:  # the train extra is not installed
            needs = _NEEDS.get(kind, f"agents of kind {kind!r} need more packages")
            raise AgentChoiceError(f"{needs}: {TRAIN_EXTRA} ({e})") from None
    return _IMPORTED[entry]


def uses_default_loader(kind: str) -> bool:
    """Whether ``kind`` is still loaded by its built-in loader (not one registered since)."""
    return kind in _DEFAULT_LOADERS and _LOADERS.get(kind) == _DEFAULT_LOADERS[kind]


def model_kind(task_id: str, choice: str) -> str | None:
    """The model kind ``choice`` names (``checkpoint`` for an existing folder, ``hf``, ``http``),
    or None for a person, a scripted policy or a choice that names nothing."""
    if choice == HUMAN or choice in policies(task_id) or choice in POLICY_ALIASES:
        return None
    if choice.startswith("hf:"):
        return "hf" if choice[3:].strip() else None
    if choice.startswith("guided:"):
        return "guided"
    if choice.startswith("http:") and "@" in choice:
        return "http"
    return "checkpoint" if Path(checkpoint_folder(choice)).expanduser().exists() else None


# -- choices ----------------------------------------------------------------------------------
def agent_choices(task_id: str) -> list[tuple[str, str]]:
    """(label, value) pairs for the new-episode dialog: human first, then the scripted policies."""
    out = [("Me (human)", HUMAN)]
    labels = {
        "strong": "Scripted strong (optimal)",
        "behaviour": "Scripted behaviour (data policy)",
        "random": "Random",
        "consistent": "Scripted consistent (any answer the feedback allows)",
    }
    for name in policies(task_id):
        out.append((labels.get(name, f"Scripted {name}"), name))
    return out


MODEL_HELP = (
    "a policy name, a checkpoint folder (optionally with lmrl eval's decoding flags after it, e.g. "
    "runs/mc --decoding rerank --no-repeat), hf:MODEL (a local Hugging Face causal LM: path or hub id), "
    "http:MODEL@BASE_URL (an OpenAI-compatible endpoint; key from $OPENAI_API_KEY) or "
    "guided:LLM+CHECKPOINT (that hf: or http: model guided by a value checkpoint: goal-conditioned, "
    "lmrl train mc --goals, or utterance-level, lmrl train mc|ilql --model utterance)"
)


def split_guided(choice: str) -> tuple[str, str]:
    """``guided:LLM+CHECKPOINT`` -> (LLM, CHECKPOINT); raises AgentChoiceError when malformed.
    CHECKPOINT is a goal value checkpoint or an utterance-level one (checked when it loads)."""
    llm, sep, ckpt = choice.removeprefix("guided:").rpartition("+")
    llm, ckpt = llm.strip(), ckpt.strip()
    if not sep or not llm or not ckpt:
        raise AgentChoiceError(
            "write a guided agent as guided:LLM+CHECKPOINT, e.g. guided:hf:smollm2-135m+runs/goals"
        )
    if not (llm.startswith("hf:") or (llm.startswith("http:") and "@" in llm)):
        raise AgentChoiceError(
            f"a guided agent's language model is hf:MODEL or http:MODEL@BASE_URL, not {llm!r}"
        )
    if not Path(ckpt).expanduser().exists():
        raise AgentChoiceError(f"no value checkpoint at {ckpt}")
    return llm, ckpt


def make_model_agent(choice: str, role: str = "agent") -> Agent | None:
    """``hf:MODEL`` or ``http:MODEL@BASE_URL`` as an agent or partner; None if ``choice`` is neither."""
    if choice.startswith("hf:"):
        model = choice[3:].strip()
        if not model:
            raise AgentChoiceError("hf: needs a model path or hub id, e.g. hf:./my-model")
        return agent_loader("hf")(model, role=role)
    if choice.startswith("http:") and "@" in choice:
        model, _, base_url = choice[5:].partition("@")
        if not model.strip() or not base_url.strip():
            raise AgentChoiceError(
                "write an endpoint as http:MODEL@BASE_URL, e.g. http:llama3@http://127.0.0.1:8000/v1"
            )
        return agent_loader("http")(base_url.strip(), model.strip(), role=role)
    return None


def make_agent(task_id: str, choice: str, role: str = "agent") -> Agent | None:
    """None for a human; a scripted policy by name; a model (hf:, http:); or a checkpoint folder."""
    if choice == HUMAN:
        return None
    if choice in policies(task_id) or choice in POLICY_ALIASES:
        return make_policy(task_id, choice)
    if choice.startswith("guided:"):
        llm, ckpt = split_guided(choice)
        return agent_loader("guided")(llm, ckpt, task=task_id, role=role)
    model = make_model_agent(choice, role)
    if model is not None:
        return model
    try:
        folder, settings = split_checkpoint_choice(choice)
    except CheckpointSettingsError as e:
        raise AgentChoiceError(str(e)) from None
    path = Path(folder).expanduser()
    if path.exists():
        return _on_its_side(
            agent_loader("checkpoint")(str(path), task=task_id, **settings), task_id, role
        )
    if settings or folder != choice:
        raise AgentChoiceError(
            f"no checkpoint folder at {folder!r} (looked for {path.resolve()}): the settings "
            "after it apply to a checkpoint only"
        )
    names = ", ".join(policies(task_id))
    models = "hf:MODEL, http:MODEL@BASE_URL or guided:LLM+CHECKPOINT"
    if "/" in choice or "\\" in choice or choice.startswith((".", "~")):  # meant as a folder
        raise AgentChoiceError(
            f"no checkpoint folder at {choice!r} (looked for {path.resolve()}): give a run's folder or its "
            f"checkpoint/, or one of {names}, {models}"
        )
    raise AgentChoiceError(
        f"unknown policy {choice!r} for {task_id}: use one of {names}, a checkpoint folder, {models}"
    )


def _on_its_side(agent: Agent, task_id: str, role: str) -> Agent:
    """A checkpoint agent, unless it learnt the other side of the dialogue than ``role`` (its
    ``meta["side"]``: ``agent`` or ``partner``, ``lmrl train --side``)."""
    meta = getattr(agent, "meta", None)
    side = meta.get("side") if isinstance(meta, dict) else None
    roles = spec(task_id).roles if task_id in ids() else ()
    plays_partner = len(roles) > 1 and role == roles[1]
    if side == "partner" and not plays_partner:
        raise AgentChoiceError(
            f"this checkpoint learnt the {roles[1] if len(roles) > 1 else 'partner'}'s side "
            "(lmrl train --side partner): choose it as the partner"
        )
    if side == "agent" and plays_partner:
        raise AgentChoiceError(
            f"this checkpoint learnt the {roles[0]}'s side: choose it as the {roles[0]}, or "
            f"train a {roles[1]} with lmrl train bc --side partner"
        )
    return agent


def learnt_task_options(agent: Agent | None, task_id: str) -> dict[str, Any] | None:
    """The task options a checkpoint agent was trained with on ``task_id`` (it plays the game it
    learnt), or None when the agent says nothing about them."""
    meta = getattr(agent, "meta", None)
    if isinstance(meta, dict) and meta.get("task") == task_id and meta.get("task_options"):
        return dict(meta["task_options"])
    return None
