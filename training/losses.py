"""Every loss as a pure function of tensors (docs/algorithms.md §1–4, §8). Shapes: ``[B, T-1]`` for
per-position values, ``[B, T-1, V]`` for per-token vectors; ``mask`` is the action mask and every
loss is a masked sum divided by the number of action tokens N (LMRL-Gym)."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def _n(mask: torch.Tensor) -> torch.Tensor:
    return mask.float().sum().clamp(min=1.0)


def token_ce(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """CE(z, a) = logsumexp(z) - z_a per position, in fp32."""
    z = logits.float()
    return torch.logsumexp(z, dim=-1) - z.gather(-1, targets.unsqueeze(-1)).squeeze(-1)


def bc_loss(
    logits: torch.Tensor,
    input_ids: torch.Tensor,
    mask: torch.Tensor,
    non_action_weight: float = 0.0,
    attention_mask: torch.Tensor | None = None,
) -> torch.Tensor:
    """L_BC = (1/N) sum m_t CE(l_t, x_{t+1}); ``logits`` may be [B,T,V] (the last is dropped)."""
    if logits.shape[1] == input_ids.shape[1]:
        logits = logits[:, :-1]
    ce = token_ce(logits, input_ids[:, 1:])
    w = mask.float()
    if non_action_weight:
        valid = attention_mask[:, 1:].float() if attention_mask is not None else torch.ones_like(w)
        w = w + non_action_weight * valid * (1.0 - w)
    return (ce * w).sum() / w.sum().clamp(min=1.0)


def returns_to_go(
    rewards: torch.Tensor, discount: torch.Tensor, mask: torch.Tensor
) -> torch.Tensor:
    """Reward-to-go over the action positions of each row: G_k = r_k + d_k G_{k+1} (observation
    positions are skipped; 0 where the mask is 0)."""
    out = torch.zeros_like(rewards, dtype=torch.float32)
    g = torch.zeros(rewards.shape[0], dtype=torch.float32)
    for t in range(rewards.shape[1] - 1, -1, -1):
        m = mask[:, t]
        g = torch.where(m, rewards[:, t] + discount[:, t] * g, g)
        out[:, t] = torch.where(m, g, torch.zeros_like(g))
    return out


def mc_loss(
    q_all: torch.Tensor | None,
    actions: torch.Tensor,
    returns: torch.Tensor,
    mask: torch.Tensor,
    cql_weight: float = 0.0,
    q: torch.Tensor | None = None,
) -> tuple[torch.Tensor, dict[str, float]]:
    """L_MC = (1/N) sum m ½(q - sg(G))² + α_cql (1/N) sum m CE(Q, a) (docs/algorithms.md §3); pass ``q`` (the data
    token's Q) instead of ``q_all`` when the CQL weight is 0."""
    m = mask.float()
    n = _n(mask)
    if q is None:
        assert q_all is not None
        q = q_all.float().gather(-1, actions.unsqueeze(-1)).squeeze(-1)
    lq = (m * 0.5 * (q - returns.detach()) ** 2).sum() / n
    loss = lq
    lc = torch.zeros(())
    if cql_weight and q_all is not None:
        lc = (m * token_ce(q_all, actions)).sum() / n
        loss = loss + cql_weight * lc
    return loss, {
        "q_loss": float(lq.detach()),
        "cql_loss": float(lc.detach()),
        "q_mean": float((q.detach() * m).sum() / n),
    }


def expectile_weights(diff: torch.Tensor, tau: float) -> torch.Tensor:
    """w = τ where target >= prediction (``diff = target - pred >= 0``), else 1 - τ."""
    return torch.where(diff >= 0, torch.full_like(diff, tau), torch.full_like(diff, 1.0 - tau))


def cql_term(q_all: torch.Tensor, actions: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """(1/N) sum m [logsumexp_a Q(s, a) - Q(s, a_data)]."""
    return (mask.float() * token_ce(q_all, actions)).sum() / _n(mask)


def ilql_loss(
    q1: torch.Tensor,
    q2: torch.Tensor,
    v: torch.Tensor,
    target_q: torch.Tensor,
    v_next: torch.Tensor,
    rewards: torch.Tensor,
    discount: torch.Tensor,
    mask: torch.Tensor,
    *,
    tau: float,
    cql_weight: float = 0.0,
    q1_all: torch.Tensor | None = None,
    q2_all: torch.Tensor | None = None,
    actions: torch.Tensor | None = None,
) -> tuple[torch.Tensor, dict[str, float]]:
    """LMRL-Gym ``ilql_loss`` (docs/algorithms.md §4.3): double-Q TD to r + d·sg(v'), expectile V to sg(min Q̄), CQL.

    ``target_q`` is already min(Q̄1, Q̄2); ``v_next`` already includes (1 - done) and stop-grad is
    applied here; ``discount`` is γ per action position (1 inside an utterance in ``turn`` mode).
    """
    m = mask.float()
    n = _n(mask)
    y = (rewards + discount * v_next).detach()
    lq = ((m * 0.5 * (q1 - y) ** 2).sum() + (m * 0.5 * (q2 - y) ** 2).sum()) / n
    tq = target_q.detach()
    w = expectile_weights(tq - v, tau)
    lv = (m * w * 0.5 * (v - tq) ** 2).sum() / n
    loss = lq + lv
    lc = torch.zeros(())
    if cql_weight and q1_all is not None and q2_all is not None and actions is not None:
        lc = cql_term(q1_all, actions, mask) + cql_term(q2_all, actions, mask)
        loss = loss + cql_weight * lc
    stats = {
        "q_loss": float(lq.detach()),
        "v_loss": float(lv.detach()),
        "cql_loss": float(lc.detach()),
        "q_mean": float((q1.detach() * m).sum() / n),
        "v_mean": float((v.detach() * m).sum() / n),
    }
    return loss, stats


@torch.no_grad()
def polyak_(target: torch.nn.Module, online: torch.nn.Module, alpha: float) -> None:
    """θ̄ <- α θ + (1 - α) θ̄ (``optax.incremental_update``)."""
    for pt, po in zip(target.parameters(), online.parameters(), strict=True):
        pt.mul_(1.0 - alpha).add_(po.detach(), alpha=alpha)


def perturb_logits(
    logits: torch.Tensor,
    q: torch.Tensor | None,
    beta: float,
    v: torch.Tensor | None = None,
    normalise: bool = False,
) -> torch.Tensor:
    """Value-guided logits ℓ + β·Q (or log_softmax(ℓ) + β(Q - V)); both give the same softmax."""
    base = F.log_softmax(logits.float(), dim=-1) if normalise else logits.float()
    if q is None or beta == 0:
        return base
    adv = q.float() - (v.float() if v is not None else 0.0)
    return base + beta * adv


def qsft_weights(
    rewards: torch.Tensor,
    discount: torch.Tensor,
    next_max_prob: torch.Tensor,
    next_mult: torch.Tensor,
) -> torch.Tensor:
    """Q-SFT Bellman weights w = r + d · max_a' p̄(a'|s') (0 after a terminal step), clipped to [0, 1]."""
    return (rewards + discount * next_mult * next_max_prob).clamp(0.0, 1.0).detach()


def qsft_loss(
    logits: torch.Tensor, actions: torch.Tensor, weights: torch.Tensor, mask: torch.Tensor
) -> torch.Tensor:
    """-(1/N) sum m [w log p(a|s) + (1 - w) mean_{a'≠a} log p(a'|s)] (docs/algorithms.md §8.1; w ≡ 1 is SFT)."""
    logp = F.log_softmax(logits.float(), dim=-1)
    lp_a = logp.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
    vocab = logp.shape[-1]
    lp_rest = (logp.sum(-1) - lp_a) / max(vocab - 1, 1)
    per = weights * lp_a + (1.0 - weights) * lp_rest
    m = mask.float()
    return -(m * per).sum() / _n(mask)


def bisim_distance(a: torch.Tensor, b: torch.Tensor, eps: float = 1e-8) -> torch.Tensor:
    """The representation distance of the bisimulation loss: Euclidean, divided by √d (so that its
    scale does not grow with the width), smoothed at 0 (its gradient is finite for equal rows)."""
    d = a.shape[-1]
    return torch.sqrt(((a.float() - b.float()) ** 2).sum(-1) / d + eps)


def bisim_loss(
    z: torch.Tensor,
    z_next: torch.Tensor,
    rewards: torch.Tensor,
    discount: torch.Tensor,
    terminal: torch.Tensor,
    partner: torch.Tensor,
) -> tuple[torch.Tensor, dict[str, float]]:
    """Bisimulation loss on history representations (Hong, Dragan & Levine 2023, "Offline RL with
    observation histories"; the metric of Ferns et al. under the data's policy, as in DBC):

        (1/N) Σ_i ( ‖z_i − z_j‖ − |r_i − r_j| − γ_ij · ‖z̄'_i − z̄'_j‖ )²,   j = partner[i]

    over N transitions (history i, its turn's reward r_i, the next history i'), each paired with
    ``partner[i]``. ``z``: [N, d] the histories' representations (trained); ``z_next``: [N, d] the
    next histories' (stop-gradient here: a target); ``discount``: [N] the turn's discount, γ_ij
    their mean; ``terminal``: [N] bool, a pair of terminal transitions shares the absorbing
    state (no next term). Returns (loss, stats with the mean distance and target)."""
    if z.shape[0] < 2:
        zero = z.sum() * 0.0
        return zero, {"bisim_loss": 0.0, "bisim_dist": 0.0, "bisim_target": 0.0}
    j = partner
    d = bisim_distance(z, z[j])
    zn, r, g = z_next.detach(), rewards.float(), discount.float()
    nxt = torch.where(terminal & terminal[j], torch.zeros_like(d), bisim_distance(zn, zn[j]))
    target = ((r - r[j]).abs() + 0.5 * (g + g[j]) * nxt).detach()
    loss = ((d - target) ** 2).mean()
    return loss, {
        "bisim_loss": float(loss.detach()),
        "bisim_dist": float(d.detach().mean()),
        "bisim_target": float(target.mean()),
    }


def half_turn_partners(n: int) -> torch.Tensor:
    """Partner of each of ``n`` transitions for :func:`bisim_loss`: the one n//2 places on (a
    rotation, so every transition is paired and never with itself when n >= 2; no random state is
    drawn, so adding the loss leaves a run's other randomness as it was)."""
    return (torch.arange(n) + max(n // 2, 1)) % max(n, 1)
