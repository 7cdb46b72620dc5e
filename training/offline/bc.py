"""BC and %BC (docs/algorithms.md §1, §2): masked cross-entropy on action tokens; %BC filters the dataset first
(``data.DatasetQuery.top_percent`` with ties, or :func:`training.datasets.windows.select_top`)."""

from __future__ import annotations

import torch

from training.losses import bc_loss


def compute_loss(
    model, batch: dict[str, torch.Tensor], cfg
) -> tuple[torch.Tensor, dict[str, float]]:
    out = model.forward_batch(batch, hidden=False)
    loss = bc_loss(out.logits, batch["input_ids"], batch["action_mask"])
    return loss, {"bc_loss": float(loss.detach())}
