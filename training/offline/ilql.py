"""ILQL (docs/algorithms.md §4): double Q heads trained by TD to r + d·V(s'), an expectile V head trained to the
target min Q̄, optional CQL, polyak targets (``target: heads_only|full``); with
``pi_beta="shared"`` a BC term keeps the LM head as π_β on the same trunk."""

from __future__ import annotations

import torch

from training.losses import bc_loss, ilql_loss
from training.offline.common import bisim_term, gather_next, last_hidden


def compute_loss(
    model, batch: dict[str, torch.Tensor], cfg
) -> tuple[torch.Tensor, dict[str, float]]:
    out = model.forward_lm(batch["input_ids"], batch["attention_mask"], hidden=True)
    h_all = out.hidden
    h = h_all[:, :-1]
    actions = batch["input_ids"][:, 1:]
    if cfg.cql_weight:  # the CQL term needs every token's Q
        q1_all, q2_all = model.q_values(h)
        q1 = q1_all.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
        q2 = q2_all.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
    else:
        q1_all = q2_all = None
        q1, q2 = model.q_gathered(h, actions)
    v_all = model.value(h_all)
    v = v_all[:, :-1]
    with torch.no_grad():
        if model.target_lm is not None:
            ht_all = model.hidden_only(
                batch["input_ids"], batch["attention_mask"], lm=model.target_lm
            )
        else:
            ht_all = h_all.detach()
        ht = ht_all[:, :-1]
        t1, t2 = model.q_gathered(ht, actions, target=True)
        target_q = torch.minimum(t1, t2)
        hn = last_hidden(model, batch)
        v_next_window = model.value(hn) if hn is not None else None
        v_next = gather_next(v_all.detach(), v_next_window, batch)
    loss, stats = ilql_loss(
        q1,
        q2,
        v,
        target_q,
        v_next,
        batch["rewards"],
        batch["discount"],
        batch["action_mask"],
        tau=cfg.tau,
        cql_weight=cfg.cql_weight,
        q1_all=q1_all,
        q2_all=q2_all,
        actions=actions,
    )
    if (
        cfg.bisim_weight
    ):  # the history representation as a bisimulation metric (docs: --bisim-weight)
        if model.target_lm is not None:  # the next histories through the same (target) trunk
            with torch.no_grad():
                hn_t = last_hidden(model, batch, lm=model.target_lm)
        else:
            hn_t = hn
        lbis, bstats = bisim_term(h_all, ht_all, hn_t, batch)
        loss = loss + cfg.bisim_weight * lbis
        stats.update(bstats)
    if model.pi_beta_lm is None and cfg.bc_weight:
        lb = bc_loss(out.logits, batch["input_ids"], batch["action_mask"])
        loss = loss + cfg.bc_weight * lb
        stats["bc_loss"] = float(lb.detach())
    return loss, stats
