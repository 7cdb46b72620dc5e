"""Shared pieces of the value-based algorithms: next-state bootstrap gathering."""

from __future__ import annotations

import torch


def gather_next(values_all: torch.Tensor, next_window: torch.Tensor | None, batch) -> torch.Tensor:
    """v' per action position: the value at ``next_pos`` inside the window, the next window's
    value where ``next_pos == -1``, times ``next_mult`` (0 after a terminal step).

    ``values_all`` is [B, T] (or [B, T, ...]); ``next_window`` is [B] (or [B, ...]) or None.
    """
    pos = batch["next_pos"]
    inside = values_all.gather(
        1,
        pos.clamp(min=0)
        .view(*pos.shape, *([1] * (values_all.dim() - 2)))
        .expand(*pos.shape, *values_all.shape[2:]),
    )
    if next_window is not None:
        nw = (
            next_window[batch["example"]]  # packed: the next window of each position's window
            if "example" in batch
            else next_window.unsqueeze(1).expand_as(inside)
        )
        inside = torch.where(
            (pos < 0).view(*pos.shape, *([1] * (values_all.dim() - 2))), nw, inside
        )
    mult = batch["next_mult"].view(*pos.shape, *([1] * (values_all.dim() - 2)))
    return inside * mult


def last_hidden(model, batch, lm=None) -> torch.Tensor | None:
    """Hidden state at the last token of each next-window prompt ([B, d]) or None."""
    if "next_input_ids" not in batch:
        return None
    from training.model.policy_value import packed_inputs

    h = model.hidden_only(
        batch["next_input_ids"],
        batch["next_attention_mask"],
        lm=lm,
        packed=packed_inputs(batch, "next_"),
    )
    if "next_row" in batch:  # packed: window i's prompt ends at (next_row[i], next_last[i])
        return h[batch["next_row"], batch["next_last"]]
    idx = batch["next_last"].view(-1, 1, 1).expand(-1, 1, h.shape[-1])
    return h.gather(1, idx).squeeze(1)


def turn_transitions(batch) -> dict[str, torch.Tensor]:
    """The turn-level transitions of a packed batch, for losses on history representations.

    A turn is a run of action positions; its history is the position before its first action
    token (``first``: the hidden state there reads the whole history up to the action), its
    reward the sum over the run, its discount the product, and its next history ``next_pos`` at
    its last action position (``-1``: the next window's prompt; the window's last token at the
    end of a window). Returns rows, example (the turn's window: its row unless the batch is
    packed), first, last, reward, discount, next_pos, terminal ([N] each), in the unpacked order."""
    m = batch["action_mask"]
    prev = torch.cat([torch.zeros_like(m[:, :1]), m[:, :-1]], dim=1)
    after = torch.cat([m[:, 1:], torch.zeros_like(m[:, :1])], dim=1)
    rows, first = torch.nonzero(m & ~prev, as_tuple=True)
    rows_l, last = torch.nonzero(m & ~after, as_tuple=True)
    assert torch.equal(rows, rows_l), "a run of action positions without an end"
    example = rows
    if "example" in batch:  # packed: each turn's window, the turns in the unpacked order
        example = batch["example"][rows, first]
        order = torch.argsort(example * m.shape[1] + first, stable=True)
        rows, first, last, example = rows[order], first[order], last[order], example[order]
    mf = m.float()
    cum_r = torch.cumsum(batch["rewards"].float() * mf, dim=1)
    log_d = torch.log(batch["discount"].float().clamp(min=1e-12)) * mf
    cum_d = torch.cumsum(log_d, dim=1)

    def run_sum(cum: torch.Tensor) -> torch.Tensor:
        before = torch.where(
            first > 0, cum[rows, (first - 1).clamp(min=0)], torch.zeros_like(first, dtype=cum.dtype)
        )
        return cum[rows, last] - before

    return {
        "rows": rows,
        "example": example,
        "first": first,
        "last": last,
        "reward": run_sum(cum_r),
        "discount": torch.exp(run_sum(cum_d)),
        "next_pos": batch["next_pos"][rows, last],
        "terminal": batch["next_mult"][rows, last] == 0,
    }


def bisim_term(
    h_all: torch.Tensor,
    h_next_all: torch.Tensor,
    next_window: torch.Tensor | None,
    batch,
    tr: dict[str, torch.Tensor] | None = None,
) -> tuple[torch.Tensor, dict[str, float]]:
    """The bisimulation loss (:func:`training.losses.bisim_loss`) of a batch's turns: ``h_all``
    [B, T, d] the trunk's hidden states (trained), ``h_next_all`` the same from the target (or
    detached), ``next_window`` [B, d] the next windows' last hidden states (or None); ``tr``: the
    batch's :func:`turn_transitions`, when the caller has them already."""
    from training.losses import bisim_loss, half_turn_partners

    tr = turn_transitions(batch) if tr is None else tr
    rows, pos = tr["rows"], tr["next_pos"]
    z = h_all[rows, tr["first"]]
    z_next = h_next_all[rows, pos.clamp(min=0)]
    if next_window is not None:
        z_next = torch.where((pos < 0).unsqueeze(-1), next_window[tr["example"]], z_next)
    else:  # no next windows in this batch: -1 cannot occur
        assert not bool((pos < 0).any()), "a transition to a next window without its prompt"
    return bisim_loss(
        z,
        z_next.detach(),
        tr["reward"],
        tr["discount"],
        tr["terminal"],
        half_turn_partners(len(rows)).to(rows.device),
    )


END_WINDOWS = 256
"""Windows read by the end-of-run measures (bisimulation loss, live head units)."""


def end_windows(model, device) -> int:
    """How many windows the end-of-run measures read: :data:`END_WINDOWS`, except for a large model
    on a CPU, where it is scaled down to the forward cost of a 2M-parameter model's 256 (at least
    16): SmolLM2-135M's two measures on 256 windows took over 5 minutes after a training run on
    this 2-core CPU."""
    if torch.device(device).type != "cpu":
        return END_WINDOWS
    params = sum(p.numel() for p in model.parameters())
    return max(16, min(END_WINDOWS, END_WINDOWS * 2_000_000 // max(params, 1)))


def _first_batches(model, ds, batch_size: int, device, max_windows: int):
    """(batch, last hidden states) of the first ``max_windows`` windows of ``ds``, the model in eval
    mode meanwhile: the same windows every time, no random state (end-of-run measures)."""
    was_training = model.training
    model.eval()
    try:
        idx = list(range(min(len(ds), max_windows)))
        for k in range(0, len(idx), batch_size):
            batch = {name: v.to(device) for name, v in ds.collate(idx[k : k + batch_size]).items()}
            yield batch, model.hidden_only(batch["input_ids"], batch["attention_mask"])
    finally:
        model.train(was_training)


@torch.no_grad()
def end_measures(
    model, ds, batch_size: int, device, max_windows: int = END_WINDOWS
) -> dict[str, float]:
    """Two measures of every MC and ILQL run, from one pass over the first ``max_windows`` windows
    of ``ds``:

    * ``bisim_loss``: the bisimulation loss of the history representation, averaged over the
      windows' turns, with or without the loss in training (Hong et al.: where it is already low,
      standard offline RL does fine);
    * ``q_head_live_units``: the share of the first Q head's hidden units that are positive at some
      action token; 0 is a dead ReLU head (it gives one value to every input and gets no gradient
      any more: Guess My City's goal values, docs/notes/guided-values.md)."""
    total, n = 0.0, 0
    fc1 = model.q_heads[0].fc1
    alive = torch.zeros(fc1.out_features, dtype=torch.bool, device=device)
    for batch, h in _first_batches(model, ds, batch_size, device, max_windows):
        tr = turn_transitions(batch)
        loss, _ = bisim_term(h, h, last_hidden(model, batch), batch, tr)
        turns = int(tr["rows"].numel())
        total += float(loss) * turns
        n += turns
        alive |= (fc1(h[:, :-1][batch["action_mask"].bool()]) > 0).any(0)
    return {"bisim_loss": total / n if n else 0.0, "q_head_live_units": float(alive.float().mean())}


def constant_q_loss(ds) -> float:
    """MC's Q loss (½ squared error) of the best constant: ½ the variance of the returns-to-go at
    the action tokens. A Q head that ends near it has learnt nothing but the data's mean."""
    ret = ds.ret[ds.act].double()
    return 0.5 * float(ret.var(unbiased=False)) if ret.numel() else 0.0


def flat_values_note(q_losses: list[float], constant: float, margin: float = 0.97) -> str | None:
    """A note when the Q loss over the last logged steps stayed above ``margin`` × the constant
    predictor's: the values rank no action above another (measured: Guess My City's goal values
    after 3,000 steps predicted 0.509 for every action, won or lost)."""
    if not q_losses or constant <= 0:
        return None
    end = sum(q_losses) / len(q_losses)
    if end < margin * constant:
        return None
    return (
        f"note: the Q head's loss ({end:.4f}) is still about that of predicting the data's mean "
        f"return for every action ({constant:.4f}): its values tell actions apart hardly at all. "
        "Train longer (--max-steps) or change the recipe, and watch q_loss in metrics.jsonl fall "
        "before using them."
    )
