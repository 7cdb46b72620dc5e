"""The ``guided`` agent kind's loader (registered by :mod:`training`): a language model and a value
checkpoint, goal-conditioned (:class:`training.agents.guided.GuidedAgent`) or utterance-level
(:class:`training.agents.guided_utterance.UtteranceGuidedAgent`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from training.agents.guided import NOT_GOALS, GuidedAgent
from training.agents.guided_utterance import UtteranceGuidedAgent, require_critic
from training.errors import TrainingError


def load_guided(
    llm: str, checkpoint: str, *, task: str | None = None, role: str = "agent", n: int = 4, **_: Any
) -> GuidedAgent:
    """The ``guided`` agent kind's loader: ``llm`` is ``hf:MODEL`` or ``http:MODEL@URL`` (the
    choice was checked by :func:`envs.players.agents.split_guided`); ``checkpoint`` a goal value
    checkpoint or an utterance-level MC/ILQL one (checked before the language model loads)."""
    from envs.players.agents import make_model_agent
    from training.agents.checkpoint_agent import load_agent
    from training.utterance.agent import UtteranceAgent

    values = load_agent(str(Path(checkpoint).expanduser()))  # a missing one: load_agent's own error
    utterance = isinstance(values, UtteranceAgent)
    trained_on = values.meta.get("task") if utterance else values.decoder.cfg.task
    if task is not None and trained_on != task:
        raise TrainingError(
            f"the value checkpoint {checkpoint} was trained on {trained_on}, not {task}"
        )
    if utterance:
        require_critic(values)
    elif not getattr(values.decoder.cfg, "goals", False):
        raise TrainingError(NOT_GOALS)
    proposer = make_model_agent(llm, role)
    if hasattr(proposer, "do_sample"):
        proposer.do_sample = False  # its own line is greedy; propose() samples the rest
    if utterance:
        return UtteranceGuidedAgent(proposer, values, n=n)
    return GuidedAgent(proposer, values, n=n)
