"""experiments/guess_rank.py: where a checkpoint's reranking score puts the true secret's guess
after the behaviour asker's questions, against chance and an ideal reader of the answers."""

from __future__ import annotations

import json

import pytest
from support.experiment_support import experiment_script

import envs
from envs.questions.text import clean_text

pytest.importorskip("torch")


def test_ranks_share_ties():
    script = experiment_script("guess_rank")
    assert script._rank({1: 3.0, 2: 1.0, 3: 0.5}, 2) == 2
    assert script._rank({1: 1.0, 2: 1.0, 3: 0.5}, 1) == 1.5
    assert script._rank({1: 0.0, 2: 0.0, 3: 0.0}, 3) == 2


def test_the_dialogues_hold_questions_only_and_the_truth_stays_consistent():
    script = experiment_script("guess_rank")
    task = envs.make("guess-city")
    rows = list(script.dialogues("guess-city", 6, 1000, 8))
    assert len(rows) == 6
    narrowed = 0
    for secret, history, mask in rows:
        asked = [t.text for t in history if t.is_action]
        assert 1 <= len(asked) <= 8
        assert all(task.guess_target(clean_text(a)) is None for a in asked)
        assert (mask >> secret) & 1  # the answers never rule the true city out
        narrowed += mask.bit_count() < task.n_secrets
    assert narrowed == 6


def test_a_checkpoints_figures(tmp_path, capsys):
    from data.datasets import DatasetQuery
    from data.generate import generate
    from data.store import Store
    from training.config import TrainConfig, resolve
    from training.offline.loop import train

    store = Store(tmp_path / "gc.db")
    generate(store, "guess-city", envs.make_policy("guess-city", "behaviour"), 30, seed=100)
    base = dict(
        algo="mc",
        task="guess-city",
        max_steps=2,
        batch_size=4,
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
    run = str(tmp_path / "mc")
    train(cfg, store, DatasetQuery(task="guess-city"), run)
    store.close()
    script = experiment_script("guess_rank")
    assert script.main([run, "--episodes", "4", "--seed", "1000", "--turns", "5"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    m = out["secrets_guessable"]
    assert 0 < m <= 126 and out["chance_rank"] == (m + 1) / 2
    assert out["episodes"] - out["episodes_unrankable"] > 0
    assert 1 <= out["mean_rank"] <= m and 0 <= out["top1"] <= out["top10"] <= 1
    assert 1 <= out["ideal_rank"] <= out["chance_rank"] and 1 <= out["consistent"] <= m
