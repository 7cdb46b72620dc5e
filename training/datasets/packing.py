"""Packed sequences (``--pack``): the windows of one batch laid side by side in rows of the context
length instead of one window per row, so that a step computes on tokens, not on padding.

:func:`pack_batch` turns a batch of :meth:`training.datasets.windows.PackedDataset.collate` into
its packed form. Each window keeps its own tokens and targets: its per-position values (the action
mask, rewards, discounts, returns, next positions) move with it, its next positions shift by its
offset in the row, and the position between two windows (whose target would be the next window's
first token) is masked out. The model reads ``position_ids`` (restarting at 0 in each window) and
``segments`` (1 + the window's index in the batch, 0 at padding) and attends only inside a
window (:func:`training.model.policy_value.block_causal_mask`), so every loss is the one of the
unpacked batch up to float rounding (``tests/training/test_packing.py``).

The next-window prompts (ILQL's and Q-SFT's bootstrap, the bisimulation term) are packed the
same way: ``next_row`` and ``next_last`` say where each window's next prompt ends (row 0, column 0
for a window without one: its value is never read), and ``example`` [R, W-1] says which window
each position belongs to, so a value of the next window is looked up per window, not per row.

Windows are placed first-fit decreasing, in rows of the context length or of the longest window
of the batch, whichever computes fewer slots (:func:`row_width`); the turns of a packed batch are
put back in the unpacked order where their order matters (the bisimulation pairs,
:func:`training.offline.common.turn_transitions`).
"""

from __future__ import annotations

import torch

PACKED_KEY = "segments"
"""A batch holding this key is packed."""


def first_fit(lengths: list[int], width: int) -> tuple[list[int], list[int], int]:
    """(row, offset) of each length placed first-fit decreasing (longest first, each in the first
    row with room for it) in rows of ``width``, and the number of rows. A length above ``width``
    gets a row of its own (the caller widens the rows)."""
    free: list[int] = []
    rows, offsets = [0] * len(lengths), [0] * len(lengths)
    for i in sorted(range(len(lengths)), key=lambda i: -lengths[i]):
        n = lengths[i]
        r = next((k for k, f in enumerate(free) if f >= n), None)
        if r is None:
            free.append(width)
            r = len(free) - 1
        rows[i], offsets[i] = r, width - free[r]
        free[r] -= n
    return rows, offsets, len(free)


def row_width(lengths: list[int], width: int) -> int:
    """The row width that computes the fewest slots: ``width`` (the context length) or the longest
    window's (when the windows are of a length, two seldom share a row of ``width``: rows as wide
    as the longest then waste less)."""
    longest = max(lengths, default=1)
    if longest >= width:
        return longest
    return min((longest, width), key=lambda w: (first_fit(lengths, w)[2] * w, w))


def _layout(lengths: torch.Tensor, width: int):
    """Where each of ``lengths`` goes: (row, offset, rows, width)."""
    lens = [int(n) for n in lengths.tolist()]
    width = row_width(lens, width)
    rows, offsets, n_rows = first_fit(lens, width)
    return torch.tensor(rows), torch.tensor(offsets), max(n_rows, 1), width


def _tokens(lengths, rows, offsets, n_rows: int, width: int):
    """Index maps of a packing: (src_b, src_t, dst_r, dst_t) of every real token, position ids and
    segments [n_rows, width]."""
    src_b = torch.repeat_interleave(torch.arange(len(lengths)), lengths)
    starts = torch.cumsum(lengths, 0) - lengths
    src_t = torch.arange(int(lengths.sum())) - torch.repeat_interleave(starts, lengths)
    dst_r = rows[src_b]
    dst_t = offsets[src_b] + src_t
    pos = torch.zeros(n_rows, width, dtype=torch.long)
    seg = torch.zeros(n_rows, width, dtype=torch.long)
    pos[dst_r, dst_t] = src_t
    seg[dst_r, dst_t] = src_b + 1
    return src_b, src_t, dst_r, dst_t, pos, seg


def _move(x: torch.Tensor, idx, shape, fill) -> torch.Tensor:
    src_b, src_t, dst_r, dst_t = idx
    out = torch.full((*shape, *x.shape[2:]), fill, dtype=x.dtype)
    out[dst_r, dst_t] = x[src_b, src_t]
    return out


def pack_batch(batch: dict[str, torch.Tensor], width: int, pad_id: int) -> dict[str, torch.Tensor]:
    """The packed form of an unpacked (right-padded) batch, in rows of ``width`` tokens (wider when
    a window is longer)."""
    lengths = batch["attention_mask"].sum(1)
    rows, offsets, n_rows, width = _layout(lengths, width)
    src_b, src_t, dst_r, dst_t, pos, seg = _tokens(lengths, rows, offsets, n_rows, width)
    tok = (src_b, src_t, dst_r, dst_t)
    out = {
        "input_ids": _move(batch["input_ids"], tok, (n_rows, width), pad_id),
        "attention_mask": (seg > 0).long(),
        "position_ids": pos,
        PACKED_KEY: seg,
        "done": batch["done"],
    }
    # shifted [B, T-1] values: a window's positions 0 .. len-2 (its last token has no target here)
    keep = src_t < (lengths[src_b] - 1)
    sh = (src_b[keep], src_t[keep], dst_r[keep], dst_t[keep])
    shape = (n_rows, width - 1)
    for name, fill in (
        ("action_mask", False),
        ("rewards", 0.0),
        ("discount", 0.0),
        ("returns", 0.0),
        ("next_mult", 0.0),
    ):
        out[name] = _move(batch[name], sh, shape, fill)
    nxt = batch["next_pos"]
    shifted = torch.where(nxt >= 0, nxt + offsets.unsqueeze(1), nxt)
    out["next_pos"] = _move(shifted, sh, shape, 0)
    out["example"] = _move(
        torch.arange(len(lengths)).unsqueeze(1).expand_as(nxt).contiguous(), sh, shape, 0
    )
    if "next_input_ids" in batch:
        out.update(_pack_next(batch, width, pad_id))
    return out


def _pack_next(batch, width: int, pad_id: int) -> dict[str, torch.Tensor]:
    """The next-window prompts packed; ``next_row``/``next_last`` per window (0, 0 without one)."""
    nl = batch["next_attention_mask"].sum(1)
    has = nl > 0
    rows, offsets, n_rows, width = _layout(nl[has], width)
    src_b, src_t, dst_r, dst_t, pos, seg = _tokens(nl[has], rows, offsets, n_rows, width)
    which = torch.nonzero(has).squeeze(1)
    ids = _move(batch["next_input_ids"][has], (src_b, src_t, dst_r, dst_t), (n_rows, width), pad_id)
    next_row = torch.zeros(len(nl), dtype=torch.long)
    next_last = torch.zeros(len(nl), dtype=torch.long)
    next_row[which] = rows
    next_last[which] = offsets + nl[has] - 1
    return {
        "next_input_ids": ids,
        "next_attention_mask": (seg > 0).long(),
        "next_position_ids": pos,
        "next_" + PACKED_KEY: seg,
        "next_row": next_row,
        "next_last": next_last,
    }


def padding_fraction(lengths: list[int], batch_size: int, width: int) -> tuple[float, float]:
    """(unpacked, packed) share of padding over batches of ``batch_size`` consecutive ``lengths``:
    unpacked, each batch is as wide as its longest window; packed, as :func:`pack_batch` lays it
    out (rows of ``width`` or of the longest window)."""
    real = pad_u = pad_p = 0
    for k in range(0, len(lengths), batch_size):
        chunk = lengths[k : k + batch_size]
        real += sum(chunk)
        pad_u += len(chunk) * max(chunk) - sum(chunk)
        w = row_width(chunk, width)
        pad_p += first_fit(chunk, w)[2] * w - sum(chunk)
    return pad_u / max(real + pad_u, 1), pad_p / max(real + pad_p, 1)
