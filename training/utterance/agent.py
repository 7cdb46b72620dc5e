"""An utterance-level checkpoint as an envs Agent: each turn it scores its candidates — the task's
legal actions where it lists them, else the training data's utterances — and says the best.

BC samples its policy over the candidates; MC and ILQL say the candidate of highest
``log π(a|h) + β·Q(h, a)`` (LMRL's value-guided choice, π the policy head trained beside the values,
Q in units of the data's largest return; ILQL's Q the minimum of its two heads; a ``--hindsight``
checkpoint's finishing lines valued by its reader, :meth:`UtteranceAgent.finishing_values`); Q-SFT
the candidate its Q-SFT head makes likeliest. A checkpoint whose data never repeated a line within
an episode never repeats one either (the embedded partners answer a repeated question the same
way).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from envs.core import Text
from training.utterance.features import candidate_features, dialogue_turns, turn_features


def history_turns(history: Sequence[Text]) -> list[tuple[str, str]]:
    """The turns of a text history: the opening (every segment before the first action), then each
    action with the segments that followed it."""
    opening: list[str] = []
    pairs: list[tuple[str, list[str]]] = []
    for seg in history:
        if seg.is_action:
            pairs.append((seg.text, []))
        elif pairs:
            pairs[-1][1].append(seg.text)
        else:
            opening.append(seg.text)
    return dialogue_turns("".join(opening), [(a, "".join(o)) for a, o in pairs])


@dataclass(frozen=True)
class Finishing:
    """What a ``--hindsight`` run learnt about its data's finishing lines (the guesses): which lines
    they are, the reward the winning one got, what a turn cost in a won episode, and γ."""

    lines: frozenset[str]
    reward: float
    cost: float
    gamma: float


class UtteranceAgent:
    """Plays a task with an utterance-level checkpoint (see the module's docstring)."""

    kind = "checkpoint"

    def __init__(
        self,
        model,
        candidates: Sequence[str],
        algo: str,
        name: str,
        meta: dict[str, Any],
        *,
        no_repeat: bool = True,
        beta: float = 8.0,
        scale: float = 1.0,
        finishing: Finishing | None = None,
    ) -> None:
        self.model = model.eval()
        self.finishing = finishing
        """The hindsight reader's facts (a checkpoint trained with ``--hindsight``): MC and ILQL
        then value a finishing line by the reader (:meth:`finishing_values`)."""
        self.candidates = list(candidates)
        self.algo = algo
        self.name = name
        self.meta = meta
        self.no_repeat = no_repeat
        self.beta = beta
        self.scale = scale
        """Q heads learn returns divided by this; :meth:`top` shows them in the task's units."""
        self._task: Any = None
        self._gen = torch.Generator().manual_seed(0)
        self._vectors: dict[str, torch.Tensor] = {}
        with torch.no_grad():
            if self.candidates:
                vecs = model.candidates([candidate_features(c) for c in self.candidates])
                self._vectors = dict(zip(self.candidates, vecs, strict=True))

    def reset(self, task: Any, seed: int | None = None) -> None:
        self._task = task
        self._gen = torch.Generator().manual_seed(0 if seed is None else int(seed) * 7919 + 13)

    def _vector(self, cand: str) -> torch.Tensor:
        v = self._vectors.get(cand)
        if v is None:
            with torch.no_grad():
                v = self._vectors[cand] = self.model.candidates([candidate_features(cand)])[0]
        return v

    def choices(self, history: Sequence[Text]) -> list[str]:
        """What it chooses among now: the task's legal actions, else the data's lines (less the
        ones already said, unless the data repeated itself)."""
        legal = list(self._task.legal_actions() or []) if self._task is not None else []
        if legal:
            return legal
        if not self.no_repeat:
            return self.candidates
        said = {seg.text for seg in history if seg.is_action}
        return [c for c in self.candidates if c not in said] or self.candidates

    @torch.no_grad()
    def scores(self, history: Sequence[Text], cands: Sequence[str]) -> dict[str, torch.Tensor]:
        """Each candidate's policy log-probability (among ``cands``), Q, the acting score and the
        hindsight reader's logit."""
        turns = [turn_features(u, r) for u, r in history_turns(history)]
        hist = self.model.histories(turns, [len(turns)])[-1:]
        said_now = {seg.text for seg in history if seg.is_action}
        said = torch.tensor([[float(c in said_now) for c in cands]])
        vectors = torch.stack([self._vector(c) for c in cands])
        out = self.model.scores(hist, vectors, said)
        logp = torch.log_softmax(out["logits"][0], dim=-1)
        if self.algo == "qsft":
            q = torch.log_softmax(out["q1"][0], dim=-1)
        else:
            q = (
                torch.minimum(out["q1"][0], out["q2"][0])
                if self.algo == "ilql"
                else (out["q1"][0] + out["q2"][0]) / 2
            )
        # the hindsight reader's (``--hindsight``) logit of each candidate being the winning line
        aim = self.model.aim(hist, vectors)[0]
        if self.finishing is not None and self.algo in ("mc", "ilql"):
            q = self.finishing_values(cands, q, logp, aim)
        score = (
            logp
            if self.algo in ("bc", "pbc")
            else q
            if self.algo == "qsft"
            else logp + self.beta * q
        )
        return {"logp": logp, "q": q, "v": out["v"][0].expand_as(q), "score": score, "aim": aim}

    def finishing_values(
        self, cands: Sequence[str], q: torch.Tensor, logp: torch.Tensor, aim: torch.Tensor
    ) -> torch.Tensor:
        """``q`` with each finishing line's value read from the hindsight reader: with p its
        probability of winning now (the ``aim`` head, softmax over the finishing lines on offer),
        ``p·R + (1 − p)·(c + γ·C)``: the win's reward R, else the turn's cost c and then carrying
        on, C the policy-weighted mean Q of the other lines (all in Q's units). The Q heads learn
        the same mixture (``--hindsight``), but a guess's share of it is small beside the noise;
        the reader's softmax separates the secrets."""
        fin = self.finishing
        assert fin is not None
        mine = [i for i, c in enumerate(cands) if c in fin.lines]
        rest = [i for i in range(len(cands)) if cands[i] not in fin.lines]
        if not mine:
            return q
        if rest:
            carry = torch.softmax(logp[rest], dim=-1) @ q[rest]
        else:
            carry = q.mean()
        p = torch.softmax(aim[mine], dim=-1)
        out = q.clone()
        out[mine] = p * (fin.reward / self.scale) + (1 - p) * (
            fin.cost / self.scale + fin.gamma * carry
        )
        return out

    def act(self, history: Sequence[Text]) -> str:
        """BC samples its policy (as the behaviour it learnt from did); the value learners take the
        best score."""
        cands = self.choices(history)
        sc = self.scores(history, cands)
        if self.algo in ("bc", "pbc"):
            return cands[int(torch.multinomial(sc["logp"].exp(), 1, generator=self._gen))]
        return cands[int(torch.argmax(sc["score"]))]

    def explain(self, history: Sequence[Text], legal: Sequence[str] | None = None, top: int = 5):
        """The watch overlay's view of the state: the ``top`` candidates by the score it acts by,
        each with its Q (in the task's return units; Q-SFT: its head's probability), the state's
        V (ILQL's V head; MC: the policy-weighted mean Q), the advantage and both probabilities."""
        from envs.players.explanation import Candidate, Explanation

        cands = list(legal) if legal else self.choices(history)
        sc = self.scores(history, cands)
        probs = sc["logp"].exp()
        kind = "policy" if self.algo in ("bc", "pbc") else "value"
        if self.algo == "qsft":
            q = sc["q"].exp()
            v = float(q.max())
        else:
            q = sc["q"] * self.scale
            v = float(sc["v"][0]) * self.scale if self.algo == "ilql" else float((probs * q).sum())
        order = torch.argsort(sc["score"], descending=True).tolist()
        bc_i = int(torch.argmax(probs))
        rl, bc = cands[order[0]], cands[bc_i]
        shown = order[:top] + ([bc_i] if bc_i not in order[:top] else [])  # both choices shown
        rows = [
            Candidate(
                cands[i],
                None if kind == "policy" else float(q[i]),
                None if kind == "policy" else v,
                None if kind == "policy" else float(q[i]) - v,
                float(probs[i]),
                float(probs[i]),
            )
            for i in shown
        ]
        source = (
            "legal actions"
            if legal or (self._task is not None and self._task.legal_actions())
            else "the data's lines"
        )
        return Explanation(
            self.algo, kind, rows, rl, bc, None if kind == "policy" else v, source, len(cands)
        )

    def top(self, history: Sequence[Text], k: int = 5) -> list[tuple[str, float, float]]:
        """The ``k`` best candidates now with their Q and policy probability (the value overlay)."""
        cands = self.choices(history)
        sc = self.scores(history, cands)
        order = torch.argsort(sc["score"], descending=True)[:k].tolist()
        q = sc["q"] if self.algo == "qsft" else sc["q"] * self.scale
        return [(cands[i], float(q[i]), float(sc["logp"][i].exp())) for i in order]
