"""Tiny trained checkpoints for tests (a support module: test files import it, never each other).

A few optimiser steps of a one-layer GPT-2 on a dozen scripted maze-fo episodes: under a second.
"""

from __future__ import annotations

from pathlib import Path


def tiny_checkpoint(folder: Path, algo: str = "ilql", store=None, **kw) -> Path:
    """Train ``algo`` for two steps on maze-fo into ``folder``; returns the checkpoint folder."""
    from data.datasets import DatasetQuery
    from training.config import TrainConfig, resolve
    from training.offline.loop import train
    from training.offline.toy import maze_store

    if store is None:
        store = maze_store(folder / "maze.db", episodes=12)
    base = dict(algo=algo, task="maze-fo", max_steps=2, batch_size=8, n_embd=32, n_head=2, n_layer=1,
                vocab_size=300, eval_episodes=0, progress=False, log_every=1, lr=1e-2)  # fmt: skip
    base.update(kw)
    cfg = resolve(TrainConfig(**base), set(base) - {"algo", "task"})
    return Path(train(cfg, store, DatasetQuery(task="maze-fo"), folder / algo)["checkpoint"])
