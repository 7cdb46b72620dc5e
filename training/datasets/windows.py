"""Stored episodes -> LMRL windows -> packed token arrays -> shifted training batches (docs/algorithms.md §0, §10).

* A *window* is a list of segments ``(text, is_action, reward)``: the whole episode
  (``windows="episode"``), one ``(observation, action)`` pair per step (``"step"``, LMRL's chain
  for fully observed maze and chess, where the next window's prompt gives the bootstrap value), or
  one ``(history so far, action)`` pair per step (``"history"``, LMRL's per-step BC examples
  ``"".join(text_history[:i+1])`` for the text tasks: the prompt is exactly what the agent reads
  when it acts, chained like ``"step"``).
* A window longer than ``max_length`` loses its end (``"episode"``: the cut window no longer ends
  the episode) or, when it ends with its one action (``"step"``, ``"history"``), its beginning:
  the model then trains on the most recent context, as an agent reads a long history at play.
* Tokens inherit their segment's ``is_action``; a segment's reward sits on its last token.
* :class:`PackedDataset` keeps every example in flat tensors (cheap for 10^5 windows) and
  :meth:`PackedDataset.collate` builds the shifted batch: ``action_mask``, ``rewards``,
  ``discount``, ``returns`` (MC reward-to-go across the whole chain), ``next_pos`` (the next action
  position, ``-1`` = the next window, gathered instead of LMRL's O((BT)^2) indicator matrices) and
  ``next_mult`` (0 after a terminal step).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from training.errors import TrainingError

Segment = tuple[str, bool, float]


@dataclass
class Window:
    segments: list[Segment]
    done: bool
    """The episode ends with this window's last action (no bootstrap after it)."""
    next_prompt: str | None = None
    """Step windows: the observation the next window starts with (None at the end)."""
    episode: int = 0
    keep_end: bool = False
    """Cut a long window from the left (its action is at the end), not from the right."""


WINDOW_MODES = ("step", "episode", "history")

_CACHED_CHARS = 512
"""Texts up to this long keep their tokens for the whole build (see ``PackedDataset``)."""


def _tensor(flat: array, dtype: torch.dtype) -> torch.Tensor:
    """A tensor copy of a flat ``array`` of the same item type."""
    return torch.frombuffer(flat, dtype=dtype).clone() if len(flat) else torch.empty(0, dtype=dtype)


def episode_windows(
    first_observation: str,
    pairs: Sequence[tuple[str, str, float]],
    ended: bool,
    mode: str = "episode",
    episode: int = 0,
) -> list[Window]:
    """Windows of one episode; ``pairs`` are (action, observation, reward) per step."""
    if mode not in WINDOW_MODES:
        raise ValueError(f"windows must be one of {', '.join(WINDOW_MODES)}, not {mode!r}")
    if mode == "episode":
        segs: list[Segment] = [(first_observation, False, 0.0)]
        for action, obs, reward in pairs:
            segs.append((action, True, float(reward)))
            if obs:
                segs.append((obs, False, 0.0))
        return [Window(segs, ended, None, episode)] if pairs else []
    out = []
    prev = first_observation
    history = mode == "history"
    for i, (action, obs, reward) in enumerate(pairs):
        last = i == len(pairs) - 1
        after = prev + action + obs if history else obs
        nxt = None if (last and ended) or not obs else after  # not ended: bootstrap from obs
        out.append(
            Window(
                [(prev, False, 0.0), (action, True, float(reward))],
                last and ended,
                nxt,
                episode,
                keep_end=True,
            )
        )
        prev = after
    return out


def select_top(returns: Sequence[float], mode: str = "percent", value: float = 10.0) -> list[int]:
    """%BC selection (docs/algorithms.md §2): indices kept. ``percent`` keeps ties (numpy percentile, >=), ``count``
    keeps exactly ``int(value)`` by a stable descending sort, ``threshold`` keeps returns >= value."""
    from data.datasets import percentile

    idx = list(range(len(returns)))
    if not idx:
        return []
    if mode == "percent":
        thr = percentile(list(returns), 100.0 - float(value))
        return [i for i in idx if returns[i] >= thr]
    if mode == "count":
        order = sorted(idx, key=lambda i: -returns[i])
        return sorted(order[: int(value)])
    if mode == "threshold":
        return [i for i in idx if returns[i] >= value]
    raise ValueError("mode must be percent, count or threshold")


class PackedDataset(torch.utils.data.Dataset):
    """Tokenised windows packed into flat tensors; ``collate(indices)`` builds a batch."""

    def __init__(
        self,
        windows: Sequence[Window],
        encode: Callable[[str], list[int]],
        pad_id: int,
        *,
        gamma: float = 0.99,
        discount_mode: str = "turn",
        max_length: int = 256,
        reward_scale: float = 1.0,
    ) -> None:
        if not windows:
            raise TrainingError("the dataset is empty: no episodes with steps matched the query")
        cache: dict[str, list[int]] = {}
        last: list = [None, None]  # the last long text and its tokens

        def enc(text: str) -> list[int]:
            """Tokens of ``text``; short texts (observations, actions) are kept for their repeats,
            a long one (a history) only until the next call: a history window's next prompt is
            the next window's history, and keeping every history would hold them all twice."""
            ids = cache.get(text)
            if ids is not None:
                return ids
            if text == last[0]:
                return last[1]
            ids = encode(text)
            if len(text) <= _CACHED_CHARS:
                cache[text] = ids
            else:
                last[0], last[1] = text, ids
            return ids

        # flat arrays of machine numbers, not lists of Python objects: history windows reach 10^7
        # tokens (maze-po: 141k windows of up to 512), where lists took ~10 GB to build
        ids = array("q")
        act = array("B")
        rew = array("f")
        disc = array("f")
        offsets = [0]
        nxt = array("q")
        nxt_off = [0]
        has_next: list[bool] = []
        done: list[bool] = []
        episodes: list[int] = []
        self.n_built = len(windows)
        self.n_cut = 0
        """Windows longer than ``max_length`` (cut as the module docstring says)."""
        self.longest = 0
        """Tokens of the longest window before any cut."""
        for w in windows:
            n0 = len(ids)
            for text, is_action, reward in w.segments:
                toks = enc(text)
                if not toks:
                    continue
                k = len(toks)
                ids.extend(toks)
                act.extend([int(is_action)] * k)
                rew.extend([0.0] * (k - 1) + [float(reward) * reward_scale if is_action else 0.0])
                if discount_mode == "token":
                    disc.extend([gamma] * k)
                else:
                    disc.extend([1.0] * (k - 1) + [gamma])
            excess = len(ids) - n0 - max_length
            self.longest = max(self.longest, len(ids) - n0)
            self.n_cut += excess > 0
            truncated = excess > 0 and not w.keep_end
            if excess > 0 and w.keep_end:  # left truncation: the window keeps its action
                del ids[n0 : n0 + excess], act[n0 : n0 + excess]
                del rew[n0 : n0 + excess], disc[n0 : n0 + excess]
            elif truncated:  # right truncation: the cut window no longer ends the episode
                del ids[n0 + max_length :], act[n0 + max_length :]
                del rew[n0 + max_length :], disc[n0 + max_length :]
            offsets.append(len(ids))
            done.append(w.done and not truncated)
            if w.next_prompt is not None and not truncated:
                nxt.extend(enc(w.next_prompt)[-max_length:])
                has_next.append(True)
            else:
                has_next.append(False)
            nxt_off.append(len(nxt))
            episodes.append(w.episode)
        self.ids = _tensor(ids, torch.long)
        self.act = _tensor(act, torch.uint8).bool()
        self.rew = _tensor(rew, torch.float32)
        self.disc = _tensor(disc, torch.float32)
        del ids, act, rew, disc
        self.offsets = torch.tensor(offsets, dtype=torch.long)
        self.next_ids = _tensor(nxt, torch.long)
        self.next_offsets = torch.tensor(nxt_off, dtype=torch.long)
        self.has_next = torch.tensor(has_next, dtype=torch.bool)
        self.done = torch.tensor(done, dtype=torch.bool)
        self.episodes = torch.tensor(episodes, dtype=torch.long)
        self.pad_id = int(pad_id)
        self.ret = self._returns_to_go()
        if not bool(self.act.any()):
            raise TrainingError("the dataset has no action tokens to train on")

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def cut_note(self, max_length: int, mode: str) -> str | None:
        """A line for the user when windows were cut (None: none were)."""
        if not self.n_cut:
            return None
        n = self.n_built
        lost = (
            "their beginning (the action and the most recent context stay)"
            if mode != "episode"
            else "their end: the actions, rewards and episode ends after the cut are not trained on; "
            "--windows history cuts from the left instead"
        )
        return (
            f"note: {self.n_cut:,} of {n:,} training windows are longer than --max-length {max_length} "
            f"(longest {self.longest:,} tokens) and lose {lost}"
        )

    def __getitem__(self, i: int) -> int:
        return i

    @property
    def n_tokens(self) -> int:
        return int(self.ids.numel())

    def _returns_to_go(self) -> torch.Tensor:
        """G_k = r_k + d_k G_{k+1} over the action tokens of each episode's whole chain (docs/algorithms.md §3)."""
        ret = torch.zeros_like(self.rew)
        at = torch.nonzero(self.act).squeeze(1)  # only action tokens carry a return
        window = torch.searchsorted(self.offsets, at, right=True) - 1
        eps = self.episodes[window].tolist()
        rew, disc = self.rew[at].tolist(), self.disc[at].tolist()
        out = [0.0] * len(eps)
        g = 0.0
        last_ep = None
        for j in range(len(eps) - 1, -1, -1):
            if eps[j] != last_ep:
                g = 0.0
                last_ep = eps[j]
            g = rew[j] + disc[j] * g
            out[j] = g
        ret[at] = torch.tensor(out, dtype=torch.float32)
        return ret

    def deduplicate(self) -> int:
        """Keep one copy of each distinct window (same tokens, rewards, next prompt and done),
        with the mean return-to-go of its copies (the MSE optimum is unchanged); returns the
        number of windows kept. Sound for deterministic tasks (maze): it rebalances the data
        towards rare transitions without moving the value-learning fixed points."""
        groups: dict[tuple, list[int]] = {}
        off, noff = self.offsets.tolist(), self.next_offsets.tolist()
        ids, rew, nids = self.ids.tolist(), self.rew.tolist(), self.next_ids.tolist()
        done = self.done.tolist()
        for i in range(len(self)):
            key = (
                tuple(ids[off[i] : off[i + 1]]),
                tuple(rew[off[i] : off[i + 1]]),
                tuple(nids[noff[i] : noff[i + 1]]),
                done[i],
                bool(self.has_next[i]),
            )
            groups.setdefault(key, []).append(i)
        keep = [g[0] for g in groups.values()]
        ret = [
            torch.stack([self.ret[off[j] : off[j + 1]] for j in g]).mean(0) for g in groups.values()
        ]
        sl = [slice(off[i], off[i + 1]) for i in keep]
        nsl = [slice(noff[i], noff[i + 1]) for i in keep]
        for name in ("ids", "act", "rew", "disc"):
            flat = getattr(self, name)
            setattr(self, name, torch.cat([flat[x] for x in sl]))
        self.ret = torch.cat(ret)
        self.next_ids = torch.cat([self.next_ids[x] for x in nsl]) if nsl else self.next_ids[:0]
        lens = torch.tensor([x.stop - x.start for x in sl])
        nlens = torch.tensor([x.stop - x.start for x in nsl])
        self.offsets = torch.cat([torch.zeros(1, dtype=torch.long), lens.cumsum(0)])
        self.next_offsets = torch.cat([torch.zeros(1, dtype=torch.long), nlens.cumsum(0)])
        k = torch.tensor(keep)
        self.has_next, self.done, self.episodes = self.has_next[k], self.done[k], self.episodes[k]
        return len(keep)

    def set_rewards(self, rew: torch.Tensor) -> None:
        """Replace token rewards (e.g. Q-SFT's normalised returns) and recompute returns-to-go."""
        self.rew = rew.to(torch.float32)
        self.ret = self._returns_to_go()

    def window_slices(self) -> list[tuple[int, int]]:
        off = self.offsets.tolist()
        return list(zip(off[:-1], off[1:], strict=True))

    @staticmethod
    def _gather(
        flat: torch.Tensor, start: torch.Tensor, lengths: torch.Tensor, pad
    ) -> tuple[torch.Tensor, torch.Tensor]:
        width = int(lengths.max()) if len(lengths) else 0
        j = torch.arange(width).unsqueeze(0)
        mask = j < lengths.unsqueeze(1)
        idx = (start.unsqueeze(1) + j).clamp(max=max(flat.numel() - 1, 0))
        out = flat[idx] if flat.numel() else torch.zeros(idx.shape, dtype=flat.dtype)
        return out.masked_fill(~mask, pad), mask

    def collate(self, indices: Sequence[int]) -> dict[str, torch.Tensor]:
        """The shifted batch for ``indices`` (right padding)."""
        ix = torch.as_tensor(list(indices), dtype=torch.long)
        start = self.offsets[ix]
        lengths = self.offsets[ix + 1] - start
        ids, attn = self._gather(self.ids, start, lengths, self.pad_id)
        act, _ = self._gather(self.act, start, lengths, False)
        rew, _ = self._gather(self.rew, start, lengths, 0.0)
        disc, _ = self._gather(self.disc, start, lengths, 0.0)
        ret, _ = self._gather(self.ret, start, lengths, 0.0)
        m = act[:, 1:] & attn[:, 1:]
        width = ids.shape[1]
        t = torch.arange(width - 1).expand_as(m)
        big = width + 1
        pos = torch.where(m, t, torch.full_like(t, big))
        suffix = torch.flip(torch.cummin(torch.flip(pos, [1]), dim=1).values, [1])
        nxt = torch.cat([suffix[:, 1:], torch.full_like(suffix[:, :1], big)], dim=1)
        has_next = self.has_next[ix]
        done = self.done[ix]
        last = (lengths - 1).unsqueeze(1).expand_as(nxt)
        inside = nxt < big
        final = torch.where(has_next.unsqueeze(1), torch.full_like(nxt, -1), last)
        next_pos = torch.where(inside, nxt, final)
        next_mult = torch.where(inside | ~done.unsqueeze(1), 1.0, 0.0)
        batch = {
            "input_ids": ids,
            "attention_mask": attn.long(),
            "action_mask": m,
            "rewards": rew[:, 1:],
            "discount": disc[:, 1:],
            "returns": ret[:, 1:],
            "next_pos": next_pos,
            "next_mult": next_mult,
            "done": done,
        }
        if bool(has_next.any()):
            ns = self.next_offsets[ix]
            nl = self.next_offsets[ix + 1] - ns
            nids, nattn = self._gather(self.next_ids, ns, nl.clamp(min=1), self.pad_id)
            batch["next_input_ids"] = nids
            batch["next_attention_mask"] = (nattn & (nl > 0).unsqueeze(1)).long()
            batch["next_last"] = (nl - 1).clamp(min=0)
        return batch
