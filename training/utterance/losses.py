"""The utterance-level losses: one transition per agent turn, every candidate scored at once.

Read top to bottom: the batch (histories, the action taken, its reward, the return that followed,
the next history), then BC (cross-entropy over the candidates), MC Returns (the Q heads regress the
discounted return, a CQL term keeps unseen lines low), ILQL (Q toward r + γ V(s'), V the τ-expectile
of the target heads' minimum) and Q-SFT (the weighted cross-entropy of Hong et al. 2024 over the
candidates: the taken line gets weight w = r̃ + γ max p̄(·|s'), the others share 1 − w).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from training.utterance.data import Dialogue, returns_to_go


@dataclass
class Batch:
    turn_feats: list[tuple[int, ...]]
    lengths: list[int]
    state: torch.Tensor
    """Row of each transition's history among the batch's histories."""
    next_state: torch.Tensor
    action: torch.Tensor
    reward: torch.Tensor
    done: torch.Tensor
    """1.0 where the transition ended its episode (no bootstrap)."""
    returns: torch.Tensor
    """The discounted return from each transition on."""
    episode_return: torch.Tensor
    """The undiscounted return of each transition's episode (Q-SFT's weight)."""
    said: tuple[list[int], list[int]]
    """(transition, action) pairs: the actions said before each transition, in its episode."""
    said_next: tuple[list[int], list[int]]
    """The same for each transition's next history (its own action included)."""

    def said_before(self, n_cands: int, *, later: bool = False) -> torch.Tensor:
        """(transitions, n_cands): 1.0 where the transition's (next, if ``later``) history has
        already said the candidate."""
        rows, cols = self.said_next if later else self.said
        out = torch.zeros(len(self.action), n_cands)
        out[rows, cols] = 1.0
        return out


def make_batch(dialogues: Sequence[Dialogue], gamma: float) -> Batch:
    feats: list[tuple[int, ...]] = []
    lengths, state, action, reward, done, rets, totals = [], [], [], [], [], [], []
    said: tuple[list[int], list[int]] = ([], [])
    said_next: tuple[list[int], list[int]] = ([], [])
    for d in dialogues:
        base = len(feats)
        first = len(action)
        for j, a in enumerate(d.actions):
            for k in range(j + 1, len(d.actions)):  # said before transition k
                said[0].append(first + k)
                said[1].append(a)
            for k in range(j, len(d.actions)):  # said before transition k's next history
                said_next[0].append(first + k)
                said_next[1].append(a)
        feats.extend(d.turns)
        lengths.append(len(d.turns))
        n = len(d.actions)
        state.extend(range(base, base + n))
        action.extend(d.actions)
        reward.extend(d.rewards)
        done.extend([0.0] * (n - 1) + [1.0 if d.ended else 0.0])
        rets.extend(returns_to_go(d.rewards, gamma))
        totals.extend([sum(d.rewards)] * n)
    st = torch.tensor(state)

    def f(x: list) -> torch.Tensor:
        return torch.tensor(x, dtype=torch.float32)

    return Batch(
        feats,
        lengths,
        st,
        st + 1,
        torch.tensor(action),
        f(reward),
        f(done),
        f(rets),
        f(totals),
        said,
        said_next,
    )


def _taken(scores: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
    return scores.gather(1, action[:, None]).squeeze(1)


def _cql(q: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
    return (torch.logsumexp(q, dim=1) - _taken(q, action)).mean()


def losses(
    algo: str,
    model,
    target,
    batch: Batch,
    cands: torch.Tensor,
    cand_target: torch.Tensor | None,
    *,
    gamma: float,
    scale: float,
    tau: float,
    cql_weight: float,
    bc_weight: float,
    return_range: tuple[float, float],
) -> tuple[torch.Tensor, dict[str, float]]:
    """The loss of ``algo`` on ``batch`` (``cands``: the candidate vectors; ``target``: the
    polyak copy, for ILQL and Q-SFT) and its parts, for the metrics."""
    hist = model.histories(batch.turn_feats, batch.lengths)
    said = batch.said_before(len(cands)).to(cands.device)
    now = model.scores(hist[batch.state], cands, said)
    bc = F.cross_entropy(now["logits"], batch.action)
    stats = {"bc_loss": float(bc.detach())}
    if algo in ("bc", "pbc"):
        return bc, stats
    if algo == "mc":
        goal = batch.returns / scale
        q_loss = sum(F.mse_loss(_taken(now[k], batch.action), goal) for k in ("q1", "q2"))
        cql = sum(_cql(now[k], batch.action) for k in ("q1", "q2"))
        stats.update(q_loss=float(q_loss.detach()), cql=float(cql.detach()))
        return bc_weight * bc + q_loss + cql_weight * cql, stats
    with torch.no_grad():
        t_hist = target.histories(batch.turn_feats, batch.lengths)
        said_next = batch.said_before(len(cands), later=True).to(cands.device)
        later = target.scores(t_hist[batch.next_state], cand_target, said_next)
        t_now = target.scores(t_hist[batch.state], cand_target, said)
    if algo == "ilql":
        v_next = model.v(hist[batch.next_state]).squeeze(-1).detach()
        goal = batch.reward / scale + gamma * (1.0 - batch.done) * v_next
        q_loss = sum(F.mse_loss(_taken(now[k], batch.action), goal) for k in ("q1", "q2"))
        q_min = torch.minimum(_taken(t_now["q1"], batch.action), _taken(t_now["q2"], batch.action))
        diff = q_min - now["v"]
        v_loss = (torch.abs(tau - (diff < 0).float()) * diff**2).mean()
        cql = sum(_cql(now[k], batch.action) for k in ("q1", "q2"))
        stats.update(
            q_loss=float(q_loss.detach()), v_loss=float(v_loss.detach()), cql=float(cql.detach())
        )
        return bc_weight * bc + q_loss + v_loss + cql_weight * cql, stats
    if algo == "qsft":
        lo, hi = return_range
        # the episode's normalised return on its last action, γ · max p̄(·|s') before it: w ∈ [0, 1]
        r_tilde = (batch.episode_return - lo) / max(hi - lo, 1e-9)
        p_next = torch.softmax(later["q1"], dim=1).max(dim=1).values
        w = (batch.done * r_tilde + (1.0 - batch.done) * gamma * p_next).clamp(0.0, 1.0)
        logp = torch.log_softmax(now["q1"], dim=1)
        taken = _taken(logp, batch.action)
        others = (logp.sum(dim=1) - taken) / max(logp.shape[1] - 1, 1)
        q_loss = -(w * taken + (1.0 - w) * others).mean()
        stats.update(q_loss=float(q_loss.detach()), weight=float(w.mean().detach()))
        return bc_weight * bc + q_loss, stats
    raise ValueError(f"no utterance-level {algo!r}: bc, pbc, mc, ilql or qsft")
