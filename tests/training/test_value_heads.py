"""The Q/V heads' activation (``--head-act``) and the dead-head check every MC and ILQL run makes:
a ReLU head whose units are all negative gives one value to every input and gets no gradient
again (Guess My City's goal values, docs/notes/guided-values.md)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from training.model.policy_value import MLPHead


def test_a_relu_head_below_zero_is_constant_and_gets_no_gradient_and_a_gelu_head_does():
    torch.manual_seed(0)
    h = torch.randn(64, 16)
    for act, dead in (("relu", True), ("gelu", False)):
        head = MLPHead(16, 5, bias=0.5, act=act)
        with torch.no_grad():
            head.fc2.weight.normal_()
            head.fc1.weight.mul_(0.01)
            head.fc1.bias.fill_(-1.0)  # every unit below zero, as the Guess My City head ended
        q = head(h)
        assert (float(q.detach().std(0).max()) == 0.0) is dead
        q.sum().backward()
        assert (float(head.fc1.weight.grad.abs().sum()) == 0.0) is dead
        assert torch.allclose(
            head.gathered(h, torch.zeros(64, dtype=torch.long)), q[:, 0].detach(), atol=1e-5
        )


def _train(tmp_path: Path, **kw):
    from data.datasets import DatasetQuery
    from training.config import TrainConfig, resolve
    from training.offline.loop import train
    from training.offline.toy import maze_store

    store = maze_store(tmp_path / "m.db", episodes=6)
    base = dict(
        algo="mc",
        task="maze-fo",
        max_steps=3,
        batch_size=8,
        vocab_size=300,
        eval_episodes=0,
        progress=False,
        n_embd=32,
        n_head=2,
        n_layer=1,
        **kw,
    )
    cfg = resolve(TrainConfig(**base), set(base) - {"algo", "task"})
    return train(cfg, store, DatasetQuery(task="maze-fo"), tmp_path / "run")


def test_gelu_heads_train_save_and_load_as_gelu(tmp_path):
    from training.model.checkpoint import load_checkpoint

    out = _train(tmp_path, head_act="gelu")
    assert out["q_head_live_units"] > 0.5
    loaded = load_checkpoint(out["checkpoint"])
    model = loaded[0] if isinstance(loaded, tuple) else loaded.model
    assert model.q_heads[0].act is torch.nn.functional.gelu


def test_a_run_whose_q_head_died_says_so(tmp_path, capsys, monkeypatch):
    import training.offline.common as common

    real = common.end_measures

    def killed(
        model, *a, **k
    ):  # the head as Guess My City's goal values ended: every unit negative
        with torch.no_grad():
            model.q_heads[0].fc1.bias.fill_(-1e4)
        return real(model, *a, **k)

    monkeypatch.setattr(common, "end_measures", killed)
    out = _train(tmp_path)
    assert out["q_head_live_units"] == 0.0
    assert "--head-act gelu" in capsys.readouterr().err


def test_an_unknown_head_activation_is_refused():
    from training.config import TrainConfig, resolve

    with pytest.raises(ValueError, match="head_act"):
        resolve(TrainConfig(algo="mc", task="maze-fo", head_act="tanh"), {"head_act"})
