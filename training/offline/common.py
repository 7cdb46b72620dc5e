"""Shared pieces of the value-based algorithms: next-state bootstrap gathering."""

from __future__ import annotations

import torch


def gather_next(values_all: torch.Tensor, next_window: torch.Tensor | None, batch) -> torch.Tensor:
    """v' per action position: the value at ``next_pos`` inside the window, the next window's
    value where ``next_pos == -1``, times ``next_mult`` (0 after a terminal step).

    ``values_all`` is [B, T] (or [B, T, ...]); ``next_window`` is [B] (or [B, ...]) or None.
    """
    pos = batch["next_pos"]
    inside = values_all.gather(1, pos.clamp(min=0).view(*pos.shape, *([1] * (values_all.dim() - 2)))
                               .expand(*pos.shape, *values_all.shape[2:]))
    if next_window is not None:
        nw = next_window.unsqueeze(1).expand_as(inside)
        inside = torch.where((pos < 0).view(*pos.shape, *([1] * (values_all.dim() - 2))), nw, inside)
    mult = batch["next_mult"].view(*pos.shape, *([1] * (values_all.dim() - 2)))
    return inside * mult


def last_hidden(model, batch, lm=None) -> torch.Tensor | None:
    """Hidden state at the last token of each next-window prompt ([B, d]) or None."""
    if "next_input_ids" not in batch:
        return None
    h = model.hidden_only(batch["next_input_ids"], batch["next_attention_mask"], lm=lm)
    idx = batch["next_last"].view(-1, 1, 1).expand(-1, 1, h.shape[-1])
    return h.gather(1, idx).squeeze(1)
