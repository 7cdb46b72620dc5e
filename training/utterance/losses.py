"""The utterance-level losses: one transition per agent turn, every candidate scored at once.

Read top to bottom: the batch (histories, the action taken, its reward, the return that followed,
the next history), then BC (cross-entropy over the candidates), MC Returns (the Q heads regress the
discounted return, a CQL term keeps unseen lines low), ILQL (Q toward r + γ V(s'), V the τ-expectile
of the target heads' minimum) and Q-SFT (the weighted cross-entropy of Hong et al. 2024 over the
candidates: the taken line gets weight w = r̃ + γ max p̄(·|s'), the others share 1 − w). With
``--hindsight``, :func:`hindsight_terms` adds the hindsight reader's terms.
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
    won_rows: torch.Tensor
    """The transitions of the batch's won episodes (the hindsight reader's rows)."""
    won_action: torch.Tensor
    """For each of those rows, the line that won its episode in the end."""
    won_reward: torch.Tensor
    """And the reward that line got."""
    won_cost: torch.Tensor
    """And what a line that did not win cost in that episode (its other turns' mean reward)."""

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
    won_rows, won_action, won_reward, won_cost = [], [], [], []
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
        if d.won:
            won_rows.extend(range(first, first + n))
            won_action.extend([d.actions[-1]] * n)
            won_reward.extend([d.rewards[-1]] * n)
            others = d.rewards[:-1] or (0.0,)
            won_cost.extend([sum(others) / len(others)] * n)
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
        torch.tensor(won_rows, dtype=torch.long),
        torch.tensor(won_action, dtype=torch.long),
        f(won_reward),
        f(won_cost),
    )


def _taken(scores: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
    return scores.gather(1, action[:, None]).squeeze(1)


def _cql(q: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
    return (torch.logsumexp(q, dim=1) - _taken(q, action)).mean()


def hindsight_terms(
    algo: str,
    model,
    hist: torch.Tensor,
    batch: Batch,
    cands: torch.Tensor,
    finishers: torch.Tensor,
    now: dict[str, torch.Tensor],
    scale: float,
    gamma: float,
) -> tuple[torch.Tensor, dict[str, float]]:
    """The hindsight reader, for tasks whose secret stays fixed (the question tasks): in a won
    episode the line that won at the end (the right guess) would have won at every earlier turn,
    and any other finishing line (a wrong guess) would have cost a turn.

    1. The ``aim`` head learns, from every history of a won episode, which finishing line wins
       (cross-entropy over the data's finishing lines): the history tower learns to read the
       answers at every turn, not only where the data guessed.
    2. The value learners' Q heads learn every finishing line's value at those histories: the
       winning one its reward (the episode ends), each other one the turn's cost and then the
       episode as it went on from there (MC: ``r + γ G_t``; ILQL: ``r + γ V(h_t)``). Every
       (history, line) pair gets one target, so Q(h, guess X) learns P(X | h)'s mixture of the two
       (relabelled transitions, exact for the win; the wrong guess's continuation is the episode's
       own, one turn later)."""
    rows = batch.won_rows.to(batch.state.device)
    if len(rows) == 0 or len(finishers) == 0:
        return cands.sum() * 0.0, {"hindsight_loss": 0.0}
    place = torch.full((len(cands),), -1, dtype=torch.long, device=cands.device)
    place[finishers] = torch.arange(len(finishers), device=cands.device)
    states = batch.state[rows]
    aim = model.aim(hist[states], cands[finishers])
    loss = F.cross_entropy(aim, place[batch.won_action])
    stats = {"hindsight_loss": float(loss.detach())}
    if algo in ("mc", "ilql"):
        cost = batch.won_cost / scale
        later = (
            batch.returns[rows] / scale
            if algo == "mc"
            else model.v(hist[states]).squeeze(-1).detach()
        )
        goal = (cost + gamma * later)[:, None].expand(len(rows), len(finishers)).clone()
        won = place[batch.won_action]
        goal[torch.arange(len(rows)), won] = batch.won_reward / scale
        q = sum(F.mse_loss(now[k][rows][:, finishers], goal) for k in ("q1", "q2"))
        stats["hindsight_q"] = float(q.detach())
        loss = loss + q
    return loss, stats


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
    hindsight: float = 0.0,
    finishers: torch.Tensor | None = None,
) -> tuple[torch.Tensor, dict[str, float]]:
    """The loss of ``algo`` on ``batch`` (``cands``: the candidate vectors; ``target``: the
    polyak copy, for ILQL and Q-SFT) and its parts, for the metrics; with ``hindsight`` > 0 plus
    that weight times :func:`hindsight_terms` (``finishers``: the finishing lines' indices)."""
    hist = model.histories(batch.turn_feats, batch.lengths)
    said = batch.said_before(len(cands)).to(cands.device)
    now = model.scores(hist[batch.state], cands, said)
    loss, stats = _losses(
        algo, model, target, batch, cands, cand_target, hist, now, said, gamma=gamma,
        scale=scale, tau=tau, cql_weight=cql_weight, bc_weight=bc_weight,
        return_range=return_range,
    )  # fmt: skip
    if hindsight > 0 and finishers is not None:
        extra, more = hindsight_terms(algo, model, hist, batch, cands, finishers, now, scale, gamma)
        loss = loss + hindsight * extra
        stats.update(more)
    return loss, stats


def _losses(
    algo: str,
    model,
    target,
    batch: Batch,
    cands: torch.Tensor,
    cand_target: torch.Tensor | None,
    hist: torch.Tensor,
    now: dict[str, torch.Tensor],
    said: torch.Tensor,
    *,
    gamma: float,
    scale: float,
    tau: float,
    cql_weight: float,
    bc_weight: float,
    return_range: tuple[float, float],
) -> tuple[torch.Tensor, dict[str, float]]:
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
