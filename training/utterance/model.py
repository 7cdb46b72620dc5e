"""The utterance-level model: a history tower over turns, a candidate tower over utterances, and
heads that score every candidate in one product (a two-tower DRRN, He et al. 2016; the critic
reads turns as ArCHer's does, Zhou et al. 2024).

* **History**: each turn's hashed features summed into a vector (an ``EmbeddingBag``); the
  history is [the sum over its turns (layer-normed), its last turn, its turn count], through an MLP.
  The sum reads the answers so far as a bag of facts; the last turn keeps a Markov task's state.
* **Candidates**: each utterance's hashed features summed, through an MLP.
* **Heads**: the policy's logit, two Q heads and V. A head scores candidate ``c`` in history ``h``
  as ``base(h) + ⟨W h, c⟩ + ⟨w, c⟩ + ρ·said(h, c)``: every score is a function of the candidate's
  features, so a line the data never said (a language model's sample, a legal move) is scored too.
* **Said before**: ``said(h, c)`` is 1 where the agent already said ``c`` in this dialogue (the
  DRRN's hand feature): without it the history vector has to spell out every line said so far for
  the heads to rule repeats in or out. Measured once (Guess My City, BC, 5,000 episodes, one seed):
  the true city ranked 22nd of 126 after 17 answers with it, 29th without; no better after 10.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from training.utterance.features import BUCKETS

MAX_TURNS = 64
"""Turn counts at or above this share one embedding."""


def bags(feature_lists: Sequence[Sequence[int]]) -> tuple[torch.Tensor, torch.Tensor]:
    """Flat indices and offsets of an ``EmbeddingBag`` call."""
    offsets, flat, at = [], [], 0
    for fs in feature_lists:
        offsets.append(at)
        flat.extend(fs)
        at += len(fs)
    return torch.tensor(flat, dtype=torch.long), torch.tensor(offsets, dtype=torch.long)


class PairHead(nn.Module):
    """``base(h) + ⟨W h, c⟩ + ⟨w, c⟩`` for every (history, candidate) pair."""

    def __init__(self, dim: int, hist_dim: int | None = None) -> None:
        super().__init__()
        hist_dim = hist_dim or dim
        self.base = nn.Linear(hist_dim, 1)
        self.proj = nn.Linear(hist_dim, dim, bias=False)
        self.cand_bias = nn.Linear(dim, 1, bias=False)

        self.said = nn.Parameter(torch.zeros(()))

    def forward(
        self, hist: torch.Tensor, cands: torch.Tensor, said: torch.Tensor | None = None
    ) -> torch.Tensor:
        """(S, d) histories, (N, d) candidates, (S, N) said-before indicators -> (S, N) scores."""
        out = self.base(hist) + self.proj(hist) @ cands.T + self.cand_bias(cands).T
        return out if said is None else out + self.said * said


class UtteranceModel(nn.Module):
    """History and candidate towers with policy, Q1, Q2, V and hindsight (``aim``) heads."""

    def __init__(self, dim: int = 128, buckets: int = BUCKETS, evidence: bool = False) -> None:
        super().__init__()
        self.dim = dim
        self.buckets = buckets
        self.evidence = evidence
        """The history vector also carries the turn vectors' raw sum (see :meth:`histories`)."""
        hist_dim = 2 * dim if evidence else dim
        # sparse: a step touches a few thousand of the tables' rows, and only those are updated
        self.turn_bag = nn.EmbeddingBag(buckets, dim, mode="sum", sparse=True)
        self.cand_bag = nn.EmbeddingBag(buckets, dim, mode="sum", sparse=True)
        self.count = nn.Embedding(MAX_TURNS, dim)
        self.norm = nn.LayerNorm(dim)
        self.hist_mlp = nn.Sequential(
            nn.Linear(3 * dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim), nn.GELU()
        )
        self.cand_mlp = nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, dim))
        self.pi = PairHead(dim, hist_dim)
        self.q1 = PairHead(dim, hist_dim)
        self.q2 = PairHead(dim, hist_dim)
        self.v = nn.Sequential(nn.Linear(hist_dim, dim), nn.GELU(), nn.Linear(dim, 1))
        self.aim = PairHead(dim, hist_dim)
        """The hindsight reader's head: which finishing line (a guess) wins from here."""
        for bag in (self.turn_bag, self.cand_bag):
            nn.init.normal_(bag.weight, std=0.02)

    def sparse_parameters(self) -> list[nn.Parameter]:
        """The hashed tables (sparse gradients: :class:`torch.optim.SparseAdam`)."""
        return [self.turn_bag.weight, self.cand_bag.weight]

    def target_copy(self) -> UtteranceModel:
        """A copy for the Bellman targets that shares the hashed tables (as ``--target heads_only``
        shares the trunk): only the dense layers are polyak-averaged (:meth:`polyak_from`)."""
        import copy

        tables = (self.turn_bag, self.cand_bag)
        self.turn_bag = self.cand_bag = None  # type: ignore[assignment]
        try:
            target = copy.deepcopy(self).requires_grad_(False)
        finally:
            self.turn_bag, self.cand_bag = tables
        target.turn_bag, target.cand_bag = tables
        return target

    @torch.no_grad()
    def polyak_from(self, online: UtteranceModel, alpha: float) -> None:
        for p, tp in zip(online.dense_parameters(), self.dense_parameters(), strict=True):
            tp.lerp_(p, alpha)

    def dense_parameters(self) -> list[nn.Parameter]:
        sparse = {id(p) for p in self.sparse_parameters()}
        return [p for p in self.parameters() if id(p) not in sparse]

    def histories(
        self, turn_feats: Sequence[Sequence[int]], lengths: Sequence[int]
    ) -> torch.Tensor:
        """Every prefix of every dialogue: ``lengths[i]`` turns of dialogue ``i`` (its turns listed
        in order in ``turn_feats``) give ``lengths[i]`` histories, the k-th holding turns 0..k.
        Returns (sum(lengths), d), or with ``evidence`` (sum(lengths), 2d): the MLP's output and
        the turn vectors' raw sum, so that a head's score of a candidate adds up each turn's
        evidence for it (a naive-Bayes reader: an answer that rules a city out lowers its score
        however many turns came before; through the layer norm and the MLP it had to be learnt
        as a function of the whole bag)."""
        flat, offsets = bags(turn_feats)
        dev = self.count.weight.device
        turns = self.turn_bag((flat % self.buckets).to(dev), offsets.to(dev))
        sums, counts, at = [], [], 0
        for n in lengths:
            sums.append(torch.cumsum(turns[at : at + n], dim=0))
            counts.extend(range(n))
            at += n
        summed = torch.cat(sums) if sums else turns[:0]
        count = self.count(torch.tensor(counts, device=dev).clamp(max=MAX_TURNS - 1))
        out = self.hist_mlp(torch.cat([self.norm(summed), turns, count], dim=-1))
        return torch.cat([out, summed], dim=-1) if self.evidence else out

    def candidates(self, cand_feats: Sequence[Sequence[int]]) -> torch.Tensor:
        """(N, d) candidate vectors."""
        flat, offsets = bags(cand_feats)
        dev = self.count.weight.device
        return self.cand_mlp(self.cand_bag((flat % self.buckets).to(dev), offsets.to(dev)))

    def scores(
        self, hist: torch.Tensor, cands: torch.Tensor, said: torch.Tensor | None = None
    ) -> dict[str, torch.Tensor]:
        """The heads' (S, N) scores and V's (S,); ``said``: (S, N), 1.0 where the history's agent
        already said the candidate."""
        return {
            "logits": self.pi(hist, cands, said),
            "q1": self.q1(hist, cands, said),
            "q2": self.q2(hist, cands, said),
            "v": self.v(hist).squeeze(-1),
        }
