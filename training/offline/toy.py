"""Small deterministic helpers shared by the tests and the benchmark (docs/algorithms.md §11):

* the toy two-turn MDP (say A or B, the env answers "x", say A or B; reward 1 iff "B" then "A"),
  tokenised with a character vocabulary;
* :class:`TabularModel`, a "tabular LM" test double with the same interface the algorithms use:
  logits, Q and V are tables indexed by the prefix, so unique optima are reached to 1e-3;
* :func:`maze_store`, a store of behaviour episodes of maze-fo generated in-process.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from training.datasets.windows import PackedDataset, Window, episode_windows
from training.model.policy_value import Outputs, packed_inputs

VOCAB = {"<pad>": 0, "s": 1, "A": 2, "B": 3, "x": 4, "\n": 5}


def char_encode(text: str) -> list[int]:
    return [VOCAB[c] for c in text]


def toy_windows() -> list[Window]:
    """The four toy episodes (uniform data), one whole-episode window each."""
    out = []
    for i, (a1, a2) in enumerate([("A", "A"), ("A", "B"), ("B", "A"), ("B", "B")]):
        r = 1.0 if (a1, a2) == ("B", "A") else 0.0
        out.extend(
            episode_windows(
                "s\n", [(a1 + "\n", "x\n", 0.0), (a2 + "\n", "", r)], True, "episode", i
            )
        )
    return out


def toy_dataset(gamma: float = 1.0, discount_mode: str = "turn") -> PackedDataset:
    return PackedDataset(
        toy_windows(), char_encode, VOCAB["<pad>"], gamma=gamma, discount_mode=discount_mode
    )


class TabularModel(nn.Module):
    """Logits, Q1, Q2, V (and their targets) as tables over the distinct prefixes seen so far."""

    def __init__(
        self, algo: str, vocab: int = len(VOCAB), max_prefixes: int = 64, beta: bool = False
    ) -> None:
        """``beta``: a π_β table as well (``beta_head``), trained by the BC term of ``bc_weight``."""
        super().__init__()
        self.algo = algo
        self.vocab = vocab
        self.prefixes: dict[tuple[int, ...], int] = {}
        self.max_prefixes = max_prefixes
        self.logits = nn.Parameter(torch.zeros(max_prefixes, vocab))
        self.q = nn.Parameter(torch.zeros(2, max_prefixes, vocab))
        self.v = nn.Parameter(torch.zeros(max_prefixes))
        self.register_buffer("target_q", torch.zeros(2, max_prefixes, vocab))
        self.register_buffer("target_logits", torch.zeros(max_prefixes, vocab))
        self.target_lm = None
        self.pi_beta_lm = None
        self.beta_head = None
        if beta:
            self.beta_logits = nn.Parameter(torch.zeros(max_prefixes, vocab))
            self.beta_head = self._beta
        self.target_lm_head = self._target_logits if algo == "qsft" else None

    def prefix_index(self, ids: Sequence[int]) -> int:
        key = tuple(int(i) for i in ids)
        if key not in self.prefixes:
            if len(self.prefixes) >= self.max_prefixes:
                raise RuntimeError("too many prefixes for the table")
            self.prefixes[key] = len(self.prefixes)
        return self.prefixes[key]

    def hidden_ids(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor, packed=None
    ) -> torch.Tensor:
        """The prefix index of each position (``packed``: position ids restart each window's
        prefix)."""
        rows = []
        for b in range(input_ids.shape[0]):
            ids = input_ids[b].tolist()
            pos = packed[0][b].tolist() if packed is not None else list(range(len(ids)))
            rows.append([self.prefix_index(ids[t - pos[t] : t + 1]) for t in range(len(ids))])
        return torch.tensor(rows, dtype=torch.long)

    def forward_lm(
        self, input_ids, attention_mask, hidden: bool = True, lm=None, packed=None
    ) -> Outputs:
        h = self.hidden_ids(input_ids, attention_mask, packed)
        return Outputs(self.logits[h], h)

    def forward_batch(self, batch, hidden: bool = True, lm=None) -> Outputs:
        return self.forward_lm(
            batch["input_ids"], batch["attention_mask"], hidden, lm, packed_inputs(batch)
        )

    def hidden_only(self, input_ids, attention_mask, lm=None, packed=None) -> torch.Tensor:
        return self.hidden_ids(input_ids, attention_mask, packed)

    def hidden_batch(self, batch, lm=None) -> torch.Tensor:
        return self.hidden_ids(batch["input_ids"], batch["attention_mask"], packed_inputs(batch))

    def _target_logits(self, h: torch.Tensor) -> torch.Tensor:
        return self.target_logits[h]

    def _beta(self, h: torch.Tensor) -> torch.Tensor:
        return self.beta_logits[h]

    def q_values(self, h: torch.Tensor, target: bool = False) -> list[torch.Tensor]:
        table = self.target_q if target else self.q
        n = 1 if self.algo == "mc" else 2
        return [table[i][h] for i in range(n)]

    def q_gathered(
        self, h: torch.Tensor, idx: torch.Tensor, target: bool = False
    ) -> list[torch.Tensor]:
        return [q.gather(-1, idx.unsqueeze(-1)).squeeze(-1) for q in self.q_values(h, target)]

    def value(self, h: torch.Tensor) -> torch.Tensor:
        return self.v[h]

    @torch.no_grad()
    def update_targets(self, alpha: float) -> None:
        self.target_q.mul_(1 - alpha).add_(self.q.detach(), alpha=alpha)
        self.target_logits.mul_(1 - alpha).add_(self.logits.detach(), alpha=alpha)

    def loss(self, batch, cfg):
        """(loss, stats) of ``cfg``'s algorithm, as :meth:`training.model.policy_value.PolicyValueModel.loss`."""
        from training.offline import loss_fn

        return loss_fn(self.algo)(self, batch, cfg)


def maze_store(path, episodes: int = 40, seed: int = 0, task_id: str = "maze-fo"):
    """A store holding ``episodes`` behaviour episodes of maze (generated in-process)."""
    import envs
    from data import Store, Who
    from data.records import episode_record

    store = Store(path)
    task = envs.make(task_id)
    pol = envs.make_policy(task_id, "behaviour")
    recs = []
    for i in range(episodes):
        ep = envs.run_episode(task, pol, seed=seed + i)
        recs.append(
            episode_record(
                task_id,
                task.spec.version,
                ep.seed,
                ep.first_observation,
                ep.transitions,
                Who("scripted", "behaviour"),
                partner=None,
                source="scripted",
                success=bool(ep.transitions and ep.transitions[-1].terminated),
            )
        )
    store.write_episodes(recs)
    return store
