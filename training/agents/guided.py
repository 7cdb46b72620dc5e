"""A language model guided by a goal-conditioned value function: the ``guided:`` agent kind.

Each turn:

1. the language model (``hf:MODEL`` or ``http:MODEL@URL``) proposes up to ``n`` distinct candidate
   actions (its greedy line first, then samples);
2. the value checkpoint (``lmrl train mc --goals``, :mod:`training.datasets.goals`) predicts, for every
   candidate and every goal of the task, the probability that the episode ends with that goal
   reached (``Q(history, goal, candidate)``), and the change against the candidates' mean;
3. those predictions go back to the language model as a short critique after the history
   ("1. Is it alive? -> the secret is found: 41 % (+6) ..."), and it answers with the number of
   its final choice; when its answer names no candidate, the candidate with the best predicted
   outcome (positive goals up, negative goals down) is played.

An utterance-level MC or ILQL checkpoint (``--model utterance``) can be the value model instead
(:mod:`training.agents.guided_utterance`): its Q of each candidate, in the task's return units, is
the critique.

The candidates, their predictions, the critique and who chose are the step's notes
(:meth:`GuidedAgent.step_notes`, stored in the step's ``info["guided"]``) and the watch overlay's
explanation (:meth:`GuidedAgent.explain`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from envs.core import Text, history_to_str
from envs.players.explanation import Candidate, Explanation
from training.datasets.goals import Goal, goal_prompt, goals_for
from training.errors import TrainingError

CHOICE_RE = re.compile(r"\d+")
NOT_GOALS = (
    "the value checkpoint of a guided agent must be trained with lmrl train mc --goals, or be "
    "an utterance-level one (lmrl train mc or ilql --model utterance)"
)


@dataclass
class Judgement:
    """What a value model makes of one turn's candidates."""

    text: str
    """The critique shown to the language model."""
    best: int
    """The value model's choice: played when the language model's answer names none."""
    q: list[float]
    """Per candidate, the overlay's Q (goal values: positive goals − negative goals)."""
    notes: dict[str, Any]
    """The step notes' value-model part (predictions, …)."""
    prior: list[float] | None = None
    """Per candidate, π_β's probability among them, where the value model has a policy."""


class GuidedAgent:
    """``proposer`` (an Agent; ``propose(history, n)`` when it has one) guided by ``values`` (a
    :class:`training.agents.checkpoint_agent.CheckpointAgent` trained with ``--goals``)."""

    kind = "guided"

    def __init__(
        self,
        proposer: Any,
        values: Any,
        *,
        n: int = 4,
        name: str | None = None,
        support: float | None = None,
    ) -> None:
        cfg = getattr(getattr(values, "decoder", None), "cfg", None)
        if not getattr(cfg, "goals", False):
            raise TrainingError(NOT_GOALS)
        assert cfg is not None
        self._common(proposer, values, n, name, cfg.task)
        self.goals: tuple[Goal, ...] = goals_for(cfg.task)
        self.support = (
            -math.log(max(2, len(values.decoder.tok))) if support is None else float(support)
        )
        """A candidate is in the value model's data when its mean log-probability per token under
        the data's behaviour (the checkpoint's π_β, after the goal line) is at least this; the
        default is a uniform guess's, −ln(vocabulary size). The values never pick a candidate
        outside it, and the critique says it is not trusted: their predictions there are guesses
        (measured: Twenty Questions' values chose non-questions they never saw)."""

    def _common(self, proposer: Any, values: Any, n: int, name: str | None, task: str) -> None:
        """What every guided agent keeps, whatever its value model."""
        self.proposer = proposer
        self.values = values
        self.n = max(1, int(n))
        self.task_id = task
        self.name = name or f"{getattr(proposer, 'name', 'llm')}+{values.name}"
        self.meta = {**getattr(values, "meta", {}), "guided": True}
        self._notes: dict[str, Any] | None = None
        self._last: tuple[str, Explanation] | None = None

    # -- Agent ---------------------------------------------------------------------------------
    def reset(self, task: Any = None, seed: int | None = None) -> None:
        spec = getattr(task, "spec", None)
        if spec is not None and spec.id != self.task_id:
            raise TrainingError(
                f"this guided agent's values were trained on {self.task_id}, not {spec.id}"
            )
        self.proposer.reset(task, seed)
        self.values.reset(task, seed)
        self._notes, self._last = None, None

    def act(self, history: Sequence[Text]) -> str:
        cands = self.propose(history)
        j = self._weigh(history, cands)
        answer = self._ask(history, j.text, len(cands))
        pick, chosen_by = (answer, "model") if answer is not None else (j.best, "values")
        self._notes = {
            "candidates": cands,
            **j.notes,
            "critique": j.text,
            "choice": pick,
            "chosen_by": chosen_by,
            "value_choice": j.best,
        }
        self._last = (history_to_str(history), self._explanation(cands, j, pick))
        return cands[pick]

    def step_notes(self) -> dict[str, Any] | None:
        """What the last act weighed (stored in the step's ``info["guided"]``), once."""
        notes, self._notes = self._notes, None
        return {"guided": notes} if notes else None

    # -- the three parts -----------------------------------------------------------------------
    def propose(self, history: Sequence[Text]) -> list[str]:
        """Up to ``n`` distinct candidate lines, the proposer's own (greedy) one first."""
        if hasattr(self.proposer, "propose"):
            raw = list(self.proposer.propose(history, self.n))
        else:
            raw = [self.proposer.act(history) for _ in range(self.n)]
        out: list[str] = []
        for line in raw:
            text = line.split("\n", 1)[0].strip()
            if text and text + "\n" not in out:
                out.append(text + "\n")
        return out[: self.n] or ["\n"]

    def predict(self, history: Sequence[Text], candidates: Sequence[str]) -> dict[str, list[float]]:
        """Per goal name: each candidate's predicted probability that the episode reaches it."""
        return self.assess(history, candidates)[0]

    def assess(
        self, history: Sequence[Text], candidates: Sequence[str]
    ) -> tuple[dict[str, list[float]], list[float]]:
        """(:meth:`predict`, each candidate's mean log-probability per token under the data's
        behaviour, averaged over the goals' prompts: how like the value model's data it is)."""
        from training.agents.explain import token_terms

        h = history_to_str(history)
        out: dict[str, list[float]] = {}
        logp = [0.0] * len(candidates)
        for g in self.goals:
            terms = token_terms(self.values.decoder, goal_prompt(h, g), candidates)
            out[g.name] = [min(1.0, max(0.0, float(t["q"][-1]))) for t in terms]
            for i, t in enumerate(terms):
                logp[i] += float(t["logp_beta"].mean()) / len(self.goals)
        return out, logp

    def _judge(self, history: Sequence[Text], candidates: Sequence[str]):
        """(:meth:`assess`'s predictions and log-probabilities, which candidates are in the data)."""
        preds, logp = self.assess(history, candidates)
        return preds, logp, [lp >= self.support for lp in logp]

    def _weigh(self, history: Sequence[Text], candidates: Sequence[str]) -> Judgement:
        """The value model's view of ``candidates``: the critique, its choice, the overlay's Q."""
        preds, logp, ok = self._judge(history, candidates)
        return Judgement(
            critique(candidates, preds, self.goals, ok),
            best_candidate(preds, self.goals, ok),
            outcome_scores(preds, self.goals),
            {
                "critic": "goals",
                "predictions": {g: [round(p, 4) for p in ps] for g, ps in preds.items()},
                "logp_beta": [round(lp, 3) for lp in logp],
                "supported": ok,
            },
        )

    def _ask(self, history: Sequence[Text], text: str, n: int) -> int | None:
        """The proposer's final choice after the critique (0-based), or None if it names none."""
        prompt = (
            *history,
            Text(text + f"Answer with the number of the best reply (1-{n}): ", False),
        )
        try:
            reply = self.proposer.act(prompt)
        except Exception:  # noqa: BLE001 - a failing final answer falls back to the values
            return None
        m = CHOICE_RE.search(reply)
        k = int(m.group()) if m else 0
        return k - 1 if 1 <= k <= n else None

    # -- the overlay -----------------------------------------------------------------------------
    def explain(
        self, history: Sequence[Text], legal: Sequence[str] | None = None, top: int = 5
    ) -> Explanation:
        """The last turn's candidates and predictions when ``history`` is the state it acted in;
        else a fresh proposal and prediction (no final question)."""
        h = history_to_str(history)
        if self._last is not None and self._last[0] == h:
            return self._last[1]
        cands = self.propose(history)
        return self._explanation(cands, self._weigh(history, cands), None)

    def _explanation(self, cands: list[str], j: Judgement, pick: int | None) -> Explanation:
        score = j.q
        mean = sum(score) / len(score)
        prior = j.prior or [1.0 / len(cands)] * len(cands)
        rows = [
            Candidate(a, score[i], mean, score[i] - mean, 1.0 if i == pick else 0.0, prior[i])
            for i, a in enumerate(cands)
        ]
        order = sorted(range(len(rows)), key=lambda i: -score[i])
        return Explanation(
            "guided",
            "value",
            [rows[i] for i in order],
            cands[pick] if pick is not None else None,
            cands[j.best],
            mean,
            "samples",
            len(cands),
            j.text.strip().splitlines(),
        )


def outcome_scores(preds: dict[str, list[float]], goals: Sequence[Goal]) -> list[float]:
    """Per candidate: the mean predicted probability of the positive goals minus that of the
    negative ones (what the value function says is best)."""
    n = len(next(iter(preds.values())))
    pos = [g.name for g in goals if g.positive]
    neg = [g.name for g in goals if not g.positive]
    out = []
    for i in range(n):
        p = sum(preds[g][i] for g in pos) / len(pos) if pos else 0.0
        q = sum(preds[g][i] for g in neg) / len(neg) if neg else 0.0
        out.append(p - q)
    return out


def best_candidate(
    preds: dict[str, list[float]], goals: Sequence[Goal], supported: Sequence[bool] | None = None
) -> int:
    """The candidate with the best predicted outcome among those in the value model's data; the
    proposer's own line (0) when none is."""
    score = outcome_scores(preds, goals)
    pool = [i for i in range(len(score)) if supported is None or supported[i]]
    return max(pool, key=lambda i: score[i]) if pool else 0


def critique(
    cands: Sequence[str],
    preds: dict[str, list[float]],
    goals: Sequence[Goal],
    supported: Sequence[bool] | None = None,
) -> str:
    """The predictions as a few lines of text: each candidate with each goal's probability and its
    change against the candidates' mean (the value function's view of how the task unfolds)."""
    lines = ["\nA value model predicts how the conversation ends after each possible reply:"]
    means = {g.name: sum(preds[g.name]) / len(cands) for g in goals}
    for i, a in enumerate(cands):
        parts = []
        for g in goals:
            p = preds[g.name][i]
            parts.append(f"{g.text}: {p:.0%} ({(p - means[g.name]) * 100:+.0f})")
        odd = "" if supported is None or supported[i] else " (unlike anything in its data: a guess)"
        lines.append(f"{i + 1}. {a.strip()} -> " + "; ".join(parts) + odd)
    return "\n".join(lines) + "\n"
