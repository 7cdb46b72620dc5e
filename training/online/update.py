"""The update half of the online algorithms: rollout episodes -> token data -> PPO (docs/algorithms.md §5) or
filtered-BC (§6) steps. Used by :mod:`training.online.round`.

Rollouts are tokenised exactly like offline data (:class:`training.datasets.windows.PackedDataset`, one
window per step for maze/chess, per episode otherwise), so a token's reward sits on the last token
of its utterance. Per-token quantities (old log-probs, reference log-probs, values, advantages,
returns) are kept as flat arrays aligned with the packed tokens and gathered per minibatch.
"""

from __future__ import annotations

import torch
from torch import nn

from training.datasets.windows import PackedDataset, episode_windows
from training.losses import bc_loss
from training.model.policy_value import hidden_size
from training.model.tokenization import encode
from training.online import ppo


class PolicyWithValue(nn.Module):
    """The policy (a :class:`training.model.policy_value.PolicyValueModel`) plus PPO's linear value head
    (W = 0, b = ``value_bias``) on the policy's own last hidden state (docs/algorithms.md §5.1)."""

    def __init__(self, policy, value_bias: float = 0.0) -> None:
        super().__init__()
        self.policy = policy
        self.v_head = nn.Linear(hidden_size(policy.lm), 1)
        nn.init.zeros_(self.v_head.weight)
        nn.init.constant_(self.v_head.bias, value_bias)

    def forward(
        self, input_ids, attention_mask, with_value: bool = True, detach_value: bool = False
    ):
        """(per-position token log-probs of the next token [B, T-1], values [B, T-1] or None).

        ``detach_value``: the value loss reaches only the head, not the shared trunk."""
        out = self.policy.lm(
            input_ids=input_ids,
            attention_mask=attention_mask,
            output_hidden_states=with_value,
            use_cache=False,
        )
        logp = token_logp(out.logits, input_ids)
        v = None
        if with_value:
            h = out.hidden_states[-1][:, :-1]
            v = self.v_head(h.detach() if detach_value else h).squeeze(-1).float()
        return logp, v


def token_logp(logits: torch.Tensor, input_ids: torch.Tensor) -> torch.Tensor:
    """log π(x_{t+1} | x_≤t) per position, in fp32."""
    lp = torch.log_softmax(logits[:, :-1].float(), dim=-1)
    return lp.gather(-1, input_ids[:, 1:].unsqueeze(-1)).squeeze(-1)


def episodes_dataset(
    episodes, tok, windows: str, max_length: int, reward_scale: float, sampled_only: bool = False
) -> PackedDataset:
    """Pack rollout episodes (window ``episode`` ids = their index in ``episodes``).

    ``sampled_only``: the ``"\n"`` appended to a generation cut at ``max_new_tokens`` is not an
    action token (its reward moves to the token before): PPO's ratios must be of sampled tokens,
    else a negative advantage pushes the newline down and guesses grow ever longer.
    """
    wins = []
    for i, ep in enumerate(episodes):
        wins.extend(episode_windows(ep.first_observation, ep.pairs(), ep.ended, windows, i))
    ds = PackedDataset(
        wins,
        lambda t: encode(tok, t),
        tok.pad_token_id,
        gamma=1.0,
        discount_mode="turn",
        max_length=max_length,
        reward_scale=reward_scale,
    )
    if sampled_only:
        _unmark_appended_newlines(ds, episodes)
    return ds


def _unmark_appended_newlines(ds: PackedDataset, episodes) -> None:
    for i, utts in utterances(ds).items():
        cut = getattr(episodes[i], "cut", None) or []
        if len(cut) != len(utts):  # a window cut on the left: turns cannot be matched up
            continue
        for u, was_cut in zip(utts, cut, strict=True):
            if was_cut and len(u) > 1:
                ds.rew[u[-2]] += ds.rew[u[-1]]
                ds.rew[u[-1]] = 0.0
                ds.act[u[-1]] = False


def _flat(ds: PackedDataset, batch_ix: list[int], rows: torch.Tensor, out: torch.Tensor) -> None:
    """Scatter per-position rows [B, T-1] (position t predicts token t+1) into a flat token array."""
    for b, i in enumerate(batch_ix):
        s, e = int(ds.offsets[i]), int(ds.offsets[i + 1])
        out[s + 1 : e] = rows[b, : e - s - 1].detach().float().cpu()


def gather_flat(ds: PackedDataset, ix: list[int], flat: torch.Tensor) -> torch.Tensor:
    """Flat token array -> per-position [B, T-1] rows aligned with ``ds.collate(ix)``."""
    t = torch.as_tensor(ix, dtype=torch.long)
    start = ds.offsets[t]
    rows, _ = PackedDataset._gather(flat, start, ds.offsets[t + 1] - start, 0.0)
    return rows[:, 1:]


@torch.no_grad()
def score_tokens(model: PolicyWithValue, ref_lm, ds: PackedDataset, device, batch_size: int = 32):
    """Flat (old log-probs, reference log-probs, old values) of every token of ``ds``."""
    n = ds.n_tokens
    old_lp, ref_lp, old_v = torch.zeros(n), torch.zeros(n), torch.zeros(n)
    was = model.training
    model.eval()
    try:
        for s in range(0, len(ds), batch_size):
            ix = list(range(s, min(len(ds), s + batch_size)))
            b = ds.collate(ix)
            ids, attn = b["input_ids"].to(device), b["attention_mask"].to(device)
            lp, v = model(ids, attn)
            rl = token_logp(ref_lm(input_ids=ids, attention_mask=attn, use_cache=False).logits, ids)
            _flat(ds, ix, lp, old_lp)
            _flat(ds, ix, rl, ref_lp)
            _flat(ds, ix, v, old_v)
    finally:
        model.train(was)
    return old_lp, ref_lp, old_v


def utterances(ds: PackedDataset) -> dict[int, list[list[int]]]:
    """Episode -> its utterances in order, each the list of its flat action-token positions."""
    act = ds.act.tolist()
    token_ep = torch.repeat_interleave(ds.episodes, ds.offsets[1:] - ds.offsets[:-1]).tolist()
    out: dict[int, list[list[int]]] = {}
    prev = -2
    for p, a in enumerate(act):
        if not a:
            continue
        utts = out.setdefault(token_ep[p], [])
        if p == prev + 1 and utts:
            utts[-1].append(p)
        else:
            utts.append([p])
        prev = p
    return out


def advantages(
    ds: PackedDataset,
    old_lp,
    ref_lp,
    old_v,
    *,
    beta: float,
    gamma: float,
    lam: float,
    credit: str = "token",
):
    """Flat (advantages, returns, value mask, per-token KL) per docs/algorithms.md §5.2 step 3 (before whitening).

    ``token``: every action token is a step (KL-shaped reward per token, γ per token).
    ``utterance``: one step per turn with the value at the token before the utterance, the turn's
    summed KL, and the turn advantage broadcast to its tokens.
    """
    n = ds.n_tokens
    adv, ret, vmask = torch.zeros(n), torch.zeros(n), torch.zeros(n, dtype=torch.bool)
    kl = (old_lp - ref_lp) * ds.act.float()
    for utts in utterances(ds).values():
        if credit == "token":
            pos = torch.tensor([p for u in utts for p in u])
            r = ds.rew[pos] - beta * kl[pos]
            a, g = ppo.gae(r, old_v[pos], gamma, lam)
            adv[pos], ret[pos], vmask[pos] = a, g, True
        else:
            first = torch.tensor([u[0] for u in utts])
            r = torch.stack([ds.rew[u].sum() - beta * kl[u].sum() for u in utts])
            a, g = ppo.gae(r, old_v[first], gamma, lam)
            for k, u in enumerate(utts):
                adv[u] = a[k]
            ret[first], vmask[first] = g, True
    return adv, ret, vmask, kl


def ppo_minibatch_loss(
    model,
    batch,
    flats: dict[str, torch.Tensor],
    ds,
    ix,
    cfg,
    denom,
    vdenom,
    bc_batch=None,
    device=None,
    value_only: bool = False,
):
    """L = L_pg + c_v L_v (+ w_bc L_BC) on one minibatch; returns (loss, stats).

    ``value_only`` (value warm-up): L = c_v L_v on the head alone; the policy terms are multiplied
    by 0 so that every parameter still gets a (zero) gradient, as DDP needs."""
    ids, attn = batch["input_ids"].to(device), batch["attention_mask"].to(device)
    mask = batch["action_mask"].to(device)
    g = {k: gather_flat(ds, ix, v).to(device) for k, v in flats.items()}
    lp, v = model(ids, attn, detach_value=value_only)
    lpg, s1 = ppo.policy_loss(lp, g["old_lp"], g["adv"], mask, cfg.clip, denom)
    vm = g["vmask"].bool() & mask if cfg.credit == "token" else g["vmask"].bool()
    lv, s2 = ppo.value_loss(v, g["old_v"], g["ret"], vm, cfg.value_clip, vdenom)
    if value_only:
        return cfg.vf_coef * lv + 0.0 * lpg, {**s1, **s2}
    loss = lpg + cfg.vf_coef * lv
    stats = {**s1, **s2}
    if bc_batch is not None and cfg.bc_weight:
        inner = model.module if hasattr(model, "module") else model
        out = inner.policy.lm(
            input_ids=bc_batch["input_ids"].to(device),
            attention_mask=bc_batch["attention_mask"].to(device),
            use_cache=False,
        )
        lbc = bc_loss(
            out.logits, bc_batch["input_ids"].to(device), bc_batch["action_mask"].to(device)
        )
        loss = loss + cfg.bc_weight * lbc
        stats["bc_loss"] = float(lbc.detach())
    return loss, stats


def bc_minibatch_loss(model, batch, device) -> torch.Tensor:
    """The BC loss (docs/algorithms.md §1) through the (possibly DDP-wrapped) policy-with-value module."""
    lp, _ = model(
        batch["input_ids"].to(device), batch["attention_mask"].to(device), with_value=False
    )
    m = batch["action_mask"].to(device).float()
    return -(lp * m).sum() / m.sum().clamp(min=1.0)
