"""Token rows as one batch for every batched forward: padded on the left, so a row's real tokens
end at the right edge, with position ids that count only real tokens, so a prompt gets the same
positions (and, masked, the same logits) alone or in any batch."""

from __future__ import annotations

from collections.abc import Sequence

import torch


def left_pad(rows: Sequence[Sequence[int]], pad: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(input ids, attention mask) of token rows, padded on the left to the longest."""
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad, dtype=torch.long)
    attn = torch.zeros_like(ids)
    for i, r in enumerate(rows):
        if r:
            ids[i, width - len(r) :] = torch.tensor(list(r), dtype=torch.long)
            attn[i, width - len(r) :] = 1
    return ids, attn


def position_ids(attn: torch.Tensor) -> torch.Tensor:
    """Positions counting only attended tokens (0 for the padding before them)."""
    return (attn.long().cumsum(-1) - 1).clamp(min=0)
