"""MC Returns (docs/algorithms.md §3): a Q head regressed on the reward-to-go of the whole chain, plus an optional CQL
term; with ``pi_beta="shared"`` the LM head keeps a BC term so one trunk serves π_β and Q."""

from __future__ import annotations

import torch

from training.losses import bc_loss, mc_loss
from training.offline.common import bisim_term, last_hidden


def compute_loss(
    model, batch: dict[str, torch.Tensor], cfg
) -> tuple[torch.Tensor, dict[str, float]]:
    out = model.forward_batch(batch, hidden=True)
    hidden = out.hidden[:, :-1]
    actions = batch["input_ids"][:, 1:]
    if cfg.cql_weight:
        (q_all,) = model.q_values(hidden)
    else:  # only the data token's Q is needed: skip the vocabulary-wide row
        (q,) = model.q_gathered(hidden, actions)
        q_all = None
    loss, stats = mc_loss(
        q_all,
        actions,
        batch["returns"],
        batch["action_mask"],
        cfg.cql_weight,
        q=None if q_all is not None else q,
    )
    if (
        cfg.bisim_weight
    ):  # the history representation as a bisimulation metric (docs: --bisim-weight)
        with torch.no_grad():
            next_hidden = last_hidden(model, batch)
        bisim_loss, bisim_stats = bisim_term(out.hidden, out.hidden.detach(), next_hidden, batch)
        loss = loss + cfg.bisim_weight * bisim_loss
        stats.update(bisim_stats)
    if model.pi_beta_lm is None and cfg.bc_weight:
        bc_term = bc_loss(out.logits, batch["input_ids"], batch["action_mask"])
        loss = loss + cfg.bc_weight * bc_term
        stats["bc_loss"] = float(bc_term.detach())
    return loss, stats
