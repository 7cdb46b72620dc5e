"""T13 (docs/algorithms.md §11): a PPO update under ``accelerate launch --multi_gpu --num_processes 2``
(on a CPU-only machine: torchrun + gloo)
gives the same per-step loss and parameters as one process with the same global batch, and the
advantages are whitened with global statistics.

Run as a script (``--worker OUT INIT``) it is the worker: fixed rollout episodes, split rank::world,
one round of PPO updates in window order (3 minibatches of the global batch)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _episodes():
    from envs.core import Transition
    from training.online.rollout import RolloutEpisode

    acts = ["A\n", "B\n", "C\n", "D\n", "A\n", "A\n"]
    out = []
    for i in range(96):
        a = acts[(i * 7) % len(acts)]
        out.append(
            RolloutEpisode(
                "bandit-toy", i, "s\n", [Transition(a, "", float(a == "A\n"), True, False, {})]
            )
        )
    return out


def worker(out: str, init: str) -> None:
    import torch

    from training.online.loop import OnlineConfig, OnlineTrainer, resolve_online
    from training.online.toy import register_bandit

    register_bandit()
    cfg = resolve_online(
        OnlineConfig(
            algo="ppo",
            task="bandit-toy",
            init=init,
            rounds=1,
            n_rollouts=96,
            batch_size=32,
            lr=1e-3,
            kl_coef=0.05,
            eval_every=0,
            save_every=0,
            progress=False,
            shuffle=False,
            grad_clip=0.0,
        )
    )
    tr = OnlineTrainer(cfg, None, Path(out) / "run")
    rank, world = tr.acc.process_index, tr.acc.num_processes
    mine = _episodes()[rank::world]
    losses = []
    orig = tr._minibatches

    def spy(ds, rnd, loss_fn, vflat):
        def wrapped(b, ix, d, vd, bcb):
            loss, st = loss_fn(b, ix, d, vd, bcb)
            losses.append(float(loss.detach()))
            return loss, st

        return orig(ds, rnd, wrapped, vflat)

    tr._minibatches = spy
    stats = tr.ppo_update(mine, 0)
    flat = torch.cat([p.detach().flatten() for p in tr.inner.parameters()])
    torch.save(
        {"params": flat, "losses": torch.tensor(losses), "kl_k3": stats["kl_k3"]},
        Path(out) / f"rank{rank}_of{world}.pt",
    )


@pytest.mark.slow
def test_t13_two_process_parity(tmp_path):
    torch = pytest.importorskip("torch")
    pytest.importorskip("accelerate")
    from training.online.toy import BANDIT_ACTIONS, register_bandit, tiny_checkpoint

    register_bandit()
    init = tiny_checkpoint(
        tmp_path / "init", "bandit-toy", [("s\n", a) for a in BANDIT_ACTIONS], bc_steps=20
    )
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    me = str(Path(__file__).resolve())
    subprocess.run(
        [sys.executable, me, "--worker", str(tmp_path / "one"), str(init)],
        check=True,
        env=env,
        cwd=ROOT,
        timeout=300,
    )
    port = str(29500 + os.getpid() % 1000)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "accelerate.commands.launch",
            "--multi_gpu",
            "--num_processes",
            "2",
            "--num_machines",
            "1",
            "--mixed_precision",
            "no",
            "--dynamo_backend",
            "no",
            "--main_process_port",
            port,
            me,
            "--worker",
            str(tmp_path / "two"),
            str(init),
        ],
        check=True,
        env=env,
        cwd=ROOT,
        timeout=300,
    )
    one = torch.load(tmp_path / "one" / "rank0_of1.pt")
    r0 = torch.load(tmp_path / "two" / "rank0_of2.pt")
    r1 = torch.load(tmp_path / "two" / "rank1_of2.pt")
    assert len(one["losses"]) == 3 and len(r0["losses"]) == 3
    # each rank's loss is its masked sum over the global count / world: DDP's mean is the global loss
    assert torch.allclose((r0["losses"] + r1["losses"]) / 2, one["losses"], atol=1e-5)
    assert torch.allclose(r0["params"], r1["params"], atol=0)
    assert torch.allclose(r0["params"], one["params"], atol=2e-5)
    assert (r0["params"] - one["params"]).abs().max() < (one["params"].abs().max()) * 1e-4
    assert r0["kl_k3"] == pytest.approx(one["kl_k3"], rel=1e-5)


if __name__ == "__main__" and len(sys.argv) == 4 and sys.argv[1] == "--worker":
    sys.path.insert(0, str(ROOT))
    Path(sys.argv[2]).mkdir(parents=True, exist_ok=True)
    worker(sys.argv[2], sys.argv[3])


def test_ready_accelerate_configs_parse():
    pytest.importorskip("accelerate")
    from accelerate.commands.config.config_args import load_config_from_file

    kinds = {}
    for f in sorted((ROOT / "configs" / "accelerate").glob("*.yaml")):
        kinds[f.stem] = str(load_config_from_file(str(f)).distributed_type).split(".")[-1]
    assert kinds == {
        "deepspeed_zero2": "DEEPSPEED",
        "fsdp": "FSDP",
        "multi_gpu": "MULTI_GPU",
        "multi_node": "MULTI_GPU",
    }
