"""PPO pieces as pure tensor functions (docs/algorithms.md §5): action compression, GAE over action
tokens (observation tokens skipped), KL-shaped rewards, masked whitening with (optionally
all-reduced) moments, the clipped policy and value losses, and the KL controllers.

Shapes: ``[B, T]`` per-position tensors with a boolean ``mask`` of action positions. Every loss is a
masked sum divided by ``denom`` (default: the number of action tokens N, LMRL-Gym), so distributed
callers can pass the global count divided by the world size and match one process exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


def compress_actions(x: torch.Tensor, mask: torch.Tensor) -> list[torch.Tensor]:
    """Per row, the values at action positions in order (observation positions dropped)."""
    return [x[b][mask[b]] for b in range(x.shape[0])]


def gae(
    rewards: torch.Tensor,
    values: torch.Tensor,
    gamma: float,
    lam: float,
    last_value: float | torch.Tensor = 0.0,
    done: bool = True,
) -> tuple[torch.Tensor, torch.Tensor]:
    """(advantages, returns) of one compressed action sequence (1-D tensors of length K).

    δ_k = r_k + γ V_{k+1} − V_k with V_{K+1} = (1 − done)·last_value; A_k = Σ_l (γλ)^l δ_{k+l};
    R_k = A_k + V_k (cleanrl's ``nextnonterminal`` recursion).
    """
    k = rewards.shape[0]
    adv = torch.zeros(k, dtype=torch.float32)
    nxt_v = torch.as_tensor(0.0 if done else last_value, dtype=torch.float32)
    run = torch.zeros((), dtype=torch.float32)
    for i in range(k - 1, -1, -1):
        delta = rewards[i].float() + gamma * nxt_v - values[i].float()
        run = delta + gamma * lam * run
        adv[i] = run
        nxt_v = values[i].float()
    return adv, adv + values.float()


def masked_gae(
    rewards: torch.Tensor,
    values: torch.Tensor,
    mask: torch.Tensor,
    gamma: float,
    lam: float,
    done: torch.Tensor | None = None,
    last_value: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """GAE per row over the action positions of ``[B, T]`` tensors (0 elsewhere); observation
    positions are skipped entirely, so inserting them changes nothing."""
    b, t = rewards.shape
    done = torch.ones(b, dtype=torch.bool) if done is None else done.bool()
    last = torch.zeros(b) if last_value is None else last_value.float()
    nxt_v = torch.where(done, torch.zeros(b), last)
    run = torch.zeros(b)
    adv = torch.zeros(b, t)
    for i in range(t - 1, -1, -1):
        m = mask[:, i]
        delta = rewards[:, i].float() + gamma * nxt_v - values[:, i].float()
        new = delta + gamma * lam * run
        run = torch.where(m, new, run)
        nxt_v = torch.where(m, values[:, i].float(), nxt_v)
        adv[:, i] = torch.where(m, new, torch.zeros_like(new))
    ret = torch.where(mask, adv + values.float(), torch.zeros_like(adv))
    return adv, ret


def kl_shaped_rewards(
    rewards: torch.Tensor,
    logp: torch.Tensor,
    ref_logp: torch.Tensor,
    mask: torch.Tensor,
    beta: float,
) -> torch.Tensor:
    """r̃ = r − β (log π − log π_ref) on action positions (the k1 estimator); r elsewhere."""
    kl = (logp.float() - ref_logp.float()) * mask.float()
    return rewards.float() - beta * kl


def masked_moments(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """[Σx, Σx², n] over the mask (all-reduce this across ranks for global whitening)."""
    m = mask.float()
    xf = x.float() * m
    return torch.stack([xf.sum(), (xf * x.float()).sum(), m.sum()])


def whiten(
    x: torch.Tensor,
    mask: torch.Tensor,
    moments: torch.Tensor | None = None,
    shift_mean: bool = True,
    eps: float = 1e-8,
) -> torch.Tensor:
    """(x − μ)/σ over the masked entries (μ kept if not ``shift_mean``); ``moments`` from
    :func:`masked_moments` (summed over ranks) make it global. Unbiased variance like trl."""
    s, s2, n = (moments if moments is not None else masked_moments(x, mask)).tolist()
    n = max(n, 1.0)
    mean = s / n
    var = max(s2 / n - mean * mean, 0.0) * (n / max(n - 1.0, 1.0))
    out = (x.float() - mean) / (var + eps) ** 0.5
    if not shift_mean:
        out = out + mean
    return torch.where(mask, out, torch.zeros_like(out))


def _denom(mask: torch.Tensor, denom: float | torch.Tensor | None) -> torch.Tensor:
    if denom is None:
        return mask.float().sum().clamp(min=1.0)
    return torch.as_tensor(denom, dtype=torch.float32).clamp(min=1e-8)


def policy_loss(
    logp: torch.Tensor,
    old_logp: torch.Tensor,
    adv: torch.Tensor,
    mask: torch.Tensor,
    clip: float = 0.2,
    denom: float | torch.Tensor | None = None,
) -> tuple[torch.Tensor, dict[str, float]]:
    """L_pg = Σ m max(−A ρ, −A clip(ρ, 1 ± ε)) / N with ρ = exp(log π − log π_old)."""
    m = mask.float()
    d = _denom(mask, denom)
    log_ratio = (logp.float() - old_logp.float()) * m
    ratio = torch.exp(log_ratio)
    a = adv.float().detach()
    pg = torch.maximum(-a * ratio, -a * ratio.clamp(1.0 - clip, 1.0 + clip))
    loss = (pg * m).sum() / d
    n = m.sum().clamp(min=1.0)
    with torch.no_grad():
        clipped = ((-a * ratio.clamp(1.0 - clip, 1.0 + clip)) > (-a * ratio)).float()
        stats = {
            "pg_loss": float(loss.detach()),
            "pg_clipfrac": float((clipped * m).sum() / n),
            "approx_kl": float((((ratio - 1.0) - log_ratio) * m).sum() / n),
        }
    return loss, stats


def value_loss(
    v: torch.Tensor,
    old_v: torch.Tensor,
    returns: torch.Tensor,
    mask: torch.Tensor,
    clip: float = 0.2,
    denom: float | torch.Tensor | None = None,
) -> tuple[torch.Tensor, dict[str, float]]:
    """L_v = Σ m ½ max((V − R)², (clip(V, V_old ± ε_v) − R)²) / N."""
    m = mask.float()
    d = _denom(mask, denom)
    r = returns.float().detach()
    vc = old_v.float() + (v.float() - old_v.float()).clamp(-clip, clip)
    l1, l2 = (v.float() - r) ** 2, (vc - r) ** 2
    loss = (0.5 * torch.maximum(l1, l2) * m).sum() / d
    n = m.sum().clamp(min=1.0)
    with torch.no_grad():
        stats = {
            "v_loss": float(loss.detach()),
            "v_clipfrac": float(((l2 > l1).float() * m).sum() / n),
            "v_mean": float((v.detach().float() * m).sum() / n),
        }
    return loss, stats


@dataclass
class FixedKL:
    """β_KL stays at its initial value (LMRL-Gym's default)."""

    value: float

    def update(self, kl: float, n_steps: int) -> float:
        return self.value


@dataclass
class AdaptiveKL:
    """β ← β·(1 + clip(KL/target − 1, ±0.2)·n/horizon) (Ziegler et al., trlx/LMRL)."""

    value: float
    target: float
    horizon: float

    def update(self, kl: float, n_steps: int) -> float:
        err = max(-0.2, min(0.2, kl / self.target - 1.0))
        self.value *= 1.0 + err * n_steps / self.horizon
        return self.value


def kl_controller(init: float, target: float | None = None, horizon: float | None = None):
    """Adaptive when both ``target`` and ``horizon`` are set, fixed otherwise."""
    if target and horizon:
        return AdaptiveKL(init, float(target), float(horizon))
    return FixedKL(init)


def k3_kl(logp: torch.Tensor, ref_logp: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """[Σ (e^δ − 1 − δ), n] with δ = log π_ref − log π over the mask (summable across ranks)."""
    d = (ref_logp.float() - logp.float()) * mask.float()
    return torch.stack([((torch.exp(d) - 1.0 - d) * mask.float()).sum(), mask.float().sum()])
