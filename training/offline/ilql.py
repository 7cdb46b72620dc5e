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
    out = model.forward_batch(batch, hidden=True)
    hidden_all = out.hidden
    hidden = hidden_all[:, :-1]
    actions = batch["input_ids"][:, 1:]
    if cfg.cql_weight:  # the CQL term needs every token's Q
        q1_all, q2_all = model.q_values(hidden)
        q1 = q1_all.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
        q2 = q2_all.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
    else:
        q1_all = q2_all = None
        q1, q2 = model.q_gathered(hidden, actions)
    v_all = model.value(hidden_all)
    v = v_all[:, :-1]
    with torch.no_grad():
        if model.target_lm is not None:
            target_hidden_all = model.hidden_batch(batch, lm=model.target_lm)
        else:
            target_hidden_all = hidden_all.detach()
        target_hidden = target_hidden_all[:, :-1]
        target_q1, target_q2 = model.q_gathered(target_hidden, actions, target=True)
        target_q = torch.minimum(target_q1, target_q2)
        next_hidden = last_hidden(model, batch)
        v_next_window = model.value(next_hidden) if next_hidden is not None else None
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
                next_hidden_target = last_hidden(model, batch, lm=model.target_lm)
        else:
            next_hidden_target = next_hidden
        bisim_loss, bisim_stats = bisim_term(
            hidden_all, target_hidden_all, next_hidden_target, batch
        )
        loss = loss + cfg.bisim_weight * bisim_loss
        stats.update(bisim_stats)
    if model.pi_beta_lm is None and cfg.bc_weight:
        bc_term = bc_loss(out.logits, batch["input_ids"], batch["action_mask"])
        loss = loss + cfg.bc_weight * bc_term
        stats["bc_loss"] = float(bc_term.detach())
    return loss, stats
