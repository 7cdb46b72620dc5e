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
    base = dict(
        algo=algo,
        task="maze-fo",
        max_steps=2,
        batch_size=8,
        n_embd=32,
        n_head=2,
        n_layer=1,
        vocab_size=300,
        eval_episodes=0,
        progress=False,
        log_every=1,
        lr=1e-2,
    )
    base.update(kw)
    cfg = resolve(TrainConfig(**base), set(base) - {"algo", "task"})
    return Path(train(cfg, store, DatasetQuery(task="maze-fo"), folder / algo)["checkpoint"])


def tiny_hf_model(path: Path, n_positions: int = 256) -> str:
    """A 2-layer GPT-2 with random weights and a character-level tokenizer, saved in ``path``
    (a local Hugging Face model folder, as ``hf:PATH`` loads it)."""
    import string

    import torch
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    vocab = {c: i for i, c in enumerate(["<unk>", "<eos>", *string.printable])}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    tok.decoder = decoders.Fuse()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        unk_token="<unk>",
        eos_token="<eos>",
        pad_token="<eos>",
        clean_up_tokenization_spaces=False,
    )
    fast.save_pretrained(path)
    torch.manual_seed(0)
    cfg = GPT2Config(vocab_size=len(vocab), n_positions=n_positions, n_embd=32, n_layer=2, n_head=2)
    GPT2LMHeadModel(cfg).save_pretrained(path)
    return str(path)


def tiny_goal_checkpoint(folder: Path, task: str = "twenty-questions", episodes: int = 10) -> Path:
    """``lmrl train mc --goals`` for three steps on ``episodes`` behaviour episodes of ``task``."""
    import envs
    from data.datasets import DatasetQuery
    from data.generate import generate
    from data.store import Store
    from training.config import TrainConfig, resolve
    from training.offline.loop import train

    store = Store(folder / f"{task}.db")
    generate(store, task, envs.make_policy(task, "behaviour"), episodes, seed=100)
    base = dict(
        algo="mc",
        task=task,
        goals=True,
        max_steps=3,
        batch_size=8,
        n_embd=32,
        n_head=2,
        n_layer=1,
        vocab_size=300,
        eval_episodes=0,
        progress=False,
        log_every=1,
        lr=1e-2,
    )
    cfg = resolve(TrainConfig(**base), set(base) - {"algo", "task"})
    out = train(cfg, store, DatasetQuery(task=task), folder / "goals")
    store.close()
    return Path(out["checkpoint"])
