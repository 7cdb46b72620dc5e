"""A language model guided by an utterance-level critic: the ``guided:`` agent with an
``lmrl train mc|ilql --model utterance`` checkpoint as its value model.

The utterance-level model scores any line from its hashed words, so it can judge a language
model's own candidates: each turn, every candidate's Q (the expected return after saying it, in
the task's return units) and its change against the candidates' mean go back to the language model
as the critique ("1. Is your city Paris? -> expected return -3.2 (+1.5)"); when the model's answer
names no candidate, the one the utterance agent would say among them (the highest score it acts by:
``log π + β·Q``) is played. Everything else (proposing, asking, the step notes, the overlay) is
:class:`training.agents.guided.GuidedAgent`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from envs.core import Text
from training.agents.guided import GuidedAgent, Judgement
from training.errors import TrainingError

CRITIC_ALGOS = ("mc", "ilql")
"""Utterance-level algorithms whose Q heads learn the return (BC has none; Q-SFT's is a
probability)."""


def require_critic(values: Any) -> None:
    """Raise a one-line TrainingError unless ``values`` is an utterance-level MC or ILQL agent."""
    from training.utterance.agent import UtteranceAgent

    if not isinstance(values, UtteranceAgent):
        raise TrainingError(
            "an utterance critic is an utterance-level checkpoint (--model utterance)"
        )
    if values.algo not in CRITIC_ALGOS:
        raise TrainingError(
            f"the utterance-level value model of a guided agent must be trained with lmrl train mc "
            f"or ilql --model utterance, not {values.algo} (its Q is not a return)"
        )


class UtteranceGuidedAgent(GuidedAgent):
    """``proposer`` guided by ``values``: a :class:`training.utterance.agent.UtteranceAgent`
    trained with MC or ILQL."""

    def __init__(self, proposer: Any, values: Any, *, n: int = 4, name: str | None = None) -> None:
        require_critic(values)
        self._common(proposer, values, n, name, str(values.meta.get("task")))
        self.goals = ()

    def predict(self, history: Sequence[Text], candidates: Sequence[str]) -> dict[str, list[float]]:
        """``{"return": each candidate's Q in the task's return units}``."""
        return {"return": self._scores(history, candidates)[0]}

    def _scores(
        self, history: Sequence[Text], candidates: Sequence[str]
    ) -> tuple[list[float], list[float], list[float]]:
        """Per candidate: Q in the task's units, the acting score, the policy's log-probability."""
        sc = self.values.scores(history, list(candidates))
        q = [float(x) * self.values.scale for x in sc["q"]]
        return q, [float(x) for x in sc["score"]], [float(x) for x in sc["logp"]]

    def _weigh(self, history: Sequence[Text], candidates: Sequence[str]) -> Judgement:
        q, score, logp = self._scores(history, candidates)
        best = max(range(len(score)), key=lambda i: score[i])
        mean = sum(q) / len(q)
        return Judgement(
            critique(candidates, q),
            best,
            q,
            {
                "critic": "utterance",
                "predictions": {"return": [round(x, 4) for x in q]},
                "advantages": [round(x - mean, 4) for x in q],
                "scores": [round(x, 4) for x in score],
                "logp_policy": [round(x, 4) for x in logp],
            },
            _softmax(logp),
        )


def critique(cands: Sequence[str], q: Sequence[float]) -> str:
    """Each candidate with its expected return and the change against the candidates' mean."""
    mean = sum(q) / len(q)
    lines = ["\nA value model predicts the expected return after each possible reply:"]
    for i, a in enumerate(cands):
        change = round(q[i] - mean, 1) + 0.0  # + 0.0: never "-0.0"
        lines.append(f"{i + 1}. {a.strip()} -> expected return {q[i]:.1f} ({change:+.1f})")
    return "\n".join(lines) + "\n"


def _softmax(logp: Sequence[float]) -> list[float]:
    import math

    top = max(logp)
    w = [math.exp(x - top) for x in logp]
    return [x / sum(w) for x in w]
