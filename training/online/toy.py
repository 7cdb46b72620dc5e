"""Small deterministic pieces for the online tests and benchmarks (docs/algorithms.md §11, T10/T11):

* ``bandit-toy``: a one-turn task; the prompt is ``"s\\n"``, the agent says one of A, B, C, D and
  gets reward 1 for ``"A\\n"`` and 0 otherwise (anything else is invalid: reward 0);
* :func:`tiny_checkpoint`: a tiny GPT-2 checkpoint with a byte tokenizer, optionally behaviour-
  cloned for a few steps on given (prompt, action) pairs, written without touching a store;
* :func:`action_probs`: exact probabilities of whole utterances under a checkpoint's policy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import torch

import envs
from envs.core import Step, TaskBase, TaskSpec, Text

BANDIT = "bandit-toy"
BANDIT_ACTIONS = ["A\n", "B\n", "C\n", "D\n"]


class BanditTask(TaskBase):
    """One turn: say A (reward 1), B, C or D (reward 0)."""

    spec = TaskSpec(
        BANDIT,
        1,
        "Bandit (toy)",
        "Say A.",
        max_turns=1,
        reward_range=(0.0, 1.0),
        success_return=1.0,
    )

    def __init__(self, **options: Any) -> None:
        self._history: list[Text] = []

    def reset(self, seed: int | None = None, options: Mapping[str, Any] | None = None) -> str:
        self._history = [Text("s\n", False)]
        return "s\n"

    def step(self, action: str) -> Step:
        self._history.append(Text(action, True))
        r = 1.0 if action == "A\n" else 0.0
        return Step("", r, True, False, {"success": r > 0})

    def state(self) -> dict[str, Any]:
        return {"turns": len(self._history) // 2}

    def history(self):
        return tuple(self._history)

    def parse_input(self, typed: str) -> str:
        return typed.strip().upper() + "\n"

    def legal_actions(self) -> list[str]:
        return list(BANDIT_ACTIONS)


def register_bandit() -> None:
    """Register ``bandit-toy`` (idempotent)."""
    envs.register(BANDIT, BanditTask)


def tiny_checkpoint(
    path: str | Path,
    task: str,
    pairs: Sequence[tuple[str, str]] = (),
    *,
    texts: Sequence[str] = (),
    bc_steps: int = 0,
    lr: float = 3e-3,
    n_layer: int = 1,
    n_embd: int = 32,
    n_head: int = 2,
    n_positions: int = 128,
    seed: int = 0,
) -> Path:
    """Write a tiny BC checkpoint for ``task``: byte tokenizer, ``bc_steps`` BC steps on ``pairs``."""
    from training.config import TrainConfig
    from training.datasets.windows import PackedDataset, Window
    from training.losses import bc_loss
    from training.model.checkpoint import save_checkpoint
    from training.model.policy_value import PolicyValueModel, tiny_lm
    from training.model.tokenization import build_tokenizer, encode

    torch.manual_seed(seed)
    corpus = [p for p, _ in pairs] + [a for _, a in pairs] + list(texts)
    tok = build_tokenizer(corpus or [" "], kind="byte")
    lm = tiny_lm(
        len(tok), n_positions, n_layer, n_embd, n_head, 0.0, tok.pad_token_id, tok.eos_token_id
    )
    model = PolicyValueModel(lm, "bc")
    if pairs and bc_steps:
        wins = [
            Window([(p, False, 0.0), (a, True, 0.0)], True, None, i)
            for i, (p, a) in enumerate(pairs)
        ]
        ds = PackedDataset(wins, lambda t: encode(tok, t), tok.pad_token_id, max_length=n_positions)
        opt = torch.optim.AdamW(model.parameters(), lr=lr)
        for _ in range(bc_steps):
            b = ds.collate(list(range(len(ds))))
            out = model.forward_lm(b["input_ids"], b["attention_mask"], hidden=False)
            loss = bc_loss(out.logits, b["input_ids"], b["action_mask"])
            opt.zero_grad()
            loss.backward()
            opt.step()
    cfg = TrainConfig(
        algo="bc",
        task=task,
        tokenizer="byte",
        n_layer=n_layer,
        n_embd=n_embd,
        n_head=n_head,
        decoding="sample",
        max_length=n_positions - 16,
    )
    return save_checkpoint(Path(path), model, tok, cfg, step=bc_steps, epoch=0, dataset={})


@torch.no_grad()
def action_probs(lm, tok, prompt: str, actions: Sequence[str]) -> list[float]:
    """P(action | prompt) of each whole utterance under ``lm`` (temperature 1)."""
    from training.model.tokenization import encode

    out = []
    p = encode(tok, prompt)
    for a in actions:
        ids = torch.tensor([p + encode(tok, a)])
        logits = lm(input_ids=ids, use_cache=False).logits[0, :-1].float()
        lp = torch.log_softmax(logits, -1).gather(-1, ids[0, 1:].unsqueeze(-1)).squeeze(-1)
        out.append(float(lp[len(p) - 1 :].sum().exp()))
    return out
