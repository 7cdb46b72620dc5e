"""Q-SFT (docs/algorithms.md §8): the LM's own token probabilities are trained as conservative Q-values with a
weighted cross-entropy; weights w = r̃ + d·max_a' p̄(a'|s') from a polyak target of the LM head
(or the whole LM with ``target: full``). π_β is a second head on the trunk trained by SFT
(``pi_beta="shared"``) or a frozen copy of the initial LM.

``qsft_target="ratio"``: w = r̃ + d·max_a' p̄(a'|s')/π_β(a'|s'), the max over the tokens π_β gives at
least ``qsft_support``. The weighted cross-entropy's optimum is p_θ ≈ π_β·w, so with this target
p_θ/π_β satisfies the Bellman optimality equation (p_θ ≈ π_β·Q, the bound the paper's Theorem 4.1
states); with the default ``prob`` target each turn's value is multiplied by π_β's probability of the
best next token, so values shrink geometrically with the turns left."""

from __future__ import annotations

import torch

from training.losses import bc_loss, qsft_loss, qsft_weights
from training.offline.common import gather_next, last_hidden


def compute_loss(
    model, batch: dict[str, torch.Tensor], cfg
) -> tuple[torch.Tensor, dict[str, float]]:
    out = model.forward_batch(batch, hidden=True)
    actions = batch["input_ids"][:, 1:]
    mask = batch["action_mask"]
    ratio = cfg.qsft_target == "ratio"
    # the shared π_β head's logits, once: the ratio target reads them, the BC term trains them
    beta_all = (
        model.beta_head(out.hidden)
        if model.beta_head is not None and (ratio or cfg.bc_weight)
        else None
    )
    with torch.no_grad():
        h_next = last_hidden(model, batch) if (model.target_lm is None or ratio) else None
        if model.target_lm is not None:
            tl = model.forward_batch(batch, hidden=False, lm=model.target_lm).logits
            next_hidden = last_hidden(model, batch, lm=model.target_lm)
            nl = (
                model.target_lm.get_output_embeddings()(next_hidden)
                if next_hidden is not None
                else None
            )
        else:
            tl = model.target_lm_head(out.hidden.detach())
            nl = model.target_lm_head(h_next) if h_next is not None else None
        if ratio:
            bl, bn = _beta_logits(model, batch, beta_all, h_next)
            pmax = _max_ratio(tl, bl, cfg.qsft_support)  # [B, T]
            nmax = _max_ratio(nl, bn, cfg.qsft_support) if nl is not None else None
        else:
            pmax = torch.softmax(tl.float(), dim=-1).amax(-1)  # [B, T]
            nmax = torch.softmax(nl.float(), dim=-1).amax(-1) if nl is not None else None
        p_next = gather_next(pmax, nmax, batch)
        w = qsft_weights(batch["rewards"], batch["discount"], p_next, torch.ones_like(p_next))
    loss = qsft_loss(out.logits[:, :-1], actions, w, mask)
    stats = {
        "qsft_loss": float(loss.detach()),
        "w_mean": float((w * mask).sum() / mask.sum().clamp(min=1)),
    }
    if beta_all is not None and cfg.bc_weight:
        bc_term = bc_loss(beta_all, batch["input_ids"], mask)
        loss = loss + cfg.bc_weight * bc_term
        stats["bc_loss"] = float(bc_term.detach())
    return loss, stats


def _max_ratio(
    target_logits: torch.Tensor, beta_logits: torch.Tensor, support: float
) -> torch.Tensor:
    """max over the tokens with π_β ≥ ``support`` of p̄/π_β (0 where no token has that much)."""
    p = torch.softmax(target_logits.float(), dim=-1)
    b = torch.softmax(beta_logits.float(), dim=-1)
    ratio = torch.where(b >= support, p / b.clamp(min=support), torch.zeros_like(p))
    return ratio.amax(-1)


def _beta_logits(model, batch, beta_all: torch.Tensor | None, h_next: torch.Tensor | None):
    """π_β's logits at every position of the window and at the next window's last prompt token (or
    None): the shared head's (``beta_all``, on the trunk's hidden states), else the frozen copy of the
    initial LM's."""
    if model.beta_head is not None:
        return beta_all.detach(), (model.beta_head(h_next) if h_next is not None else None)
    lm = model.pi_beta_lm
    bl = model.forward_batch(batch, hidden=False, lm=lm).logits
    hb = last_hidden(model, batch, lm=lm)
    return bl, (lm.get_output_embeddings()(hb) if hb is not None else None)


def prepare_rewards(ds, cfg) -> None:
    """``qsft_reward="return"``: put each episode's normalised return (R - min)/(max - min) on its
    last action token and 0 elsewhere (docs/algorithms.md §8.2), so every weight stays in [0, 1]."""
    if cfg.qsft_reward != "return":
        return
    tok_ep = torch.repeat_interleave(ds.episodes, ds.offsets[1:] - ds.offsets[:-1])
    n_ep = int(tok_ep.max()) + 1 if tok_ep.numel() else 0
    ret = torch.zeros(n_ep).index_add_(0, tok_ep, ds.rew)
    present = torch.zeros(n_ep, dtype=torch.bool)
    present[tok_ep] = True
    lo, hi = float(ret[present].min()), float(ret[present].max())
    span = hi - lo if hi > lo else 1.0
    act_pos = torch.nonzero(ds.act).squeeze(1)
    last = torch.full((n_ep,), -1, dtype=torch.long).scatter_reduce(
        0, tok_ep[act_pos], act_pos, reduce="amax"
    )
    rew = torch.zeros_like(ds.rew)
    ok = last >= 0
    rew[last[ok]] = ((ret[ok] - lo) / span).float() if hi > lo else 1.0
    ds.set_rewards(rew)
