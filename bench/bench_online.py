"""Online training throughput with the ``tiny`` model on maze-fo (CPU or GPU).

Prints ``name value unit`` lines: rollout environment steps/s (batched generation over
``--envs`` maze instances) and PPO update tokens/s (scoring with the policy and the reference, GAE,
and the clipped policy/value update), from a tiny GPT-2 (2 layers x 64, as ``--model tiny``)
or a BC checkpoint given with ``--init``.

    .venv/bin/python bench/bench_online.py [--init runs/bc-maze] [--episodes 32] [--envs 32]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--init", default=None, help="a BC checkpoint (default: an untrained tiny model)"
    )
    ap.add_argument("--episodes", type=int, default=32)
    ap.add_argument("--envs", type=int, default=32)
    ap.add_argument("--max-steps", type=int, default=20, help="moves per episode (cap)")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()

    import torch

    from training.online.loop import OnlineConfig, OnlineTrainer, resolve_online
    from training.online.rollout import TaskPool

    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        init = args.init
        if init is None:
            import envs
            from training.online.toy import tiny_checkpoint

            t = envs.make("maze-fo")
            texts = [t.reset(s) for s in range(50)] + [
                "move up\n",
                "move down\n",
                "move left\n",
                "move right\n",
            ]
            init = str(
                tiny_checkpoint(
                    Path(tmp) / "init",
                    "maze-fo",
                    texts=texts,
                    n_layer=2,
                    n_embd=64,
                    n_head=4,
                    n_positions=192,
                )
            )
        cfg = resolve_online(
            OnlineConfig(
                algo="ppo",
                task="maze-fo",
                init=init,
                rounds=1,
                n_rollouts=args.episodes,
                rollout_batch=args.envs,
                episode_max_steps=args.max_steps,
                eval_every=0,
                save_every=0,
                progress=False,
                batch_size=32,
            )
        )
        tr = OnlineTrainer(cfg, None, Path(tmp) / "run")
        with TaskPool("maze-fo", args.envs) as pool:
            tr.collect(pool, 0)  # warm-up
            t0 = time.perf_counter()
            eps, _ = tr.collect(pool, 1)
            dt_roll = time.perf_counter() - t0
        steps = sum(len(e.transitions) for e in eps)
        t0 = time.perf_counter()
        stats = tr.ppo_update(eps, 1)
        dt_upd = time.perf_counter() - t0
    print(f"online_rollout_steps_per_s {steps / dt_roll:.1f} steps/s")
    print(f"online_rollout_episodes {len(eps)} episodes")
    print(f"ppo_update_tokens_per_s {stats['tokens'] / dt_upd:.0f} tokens/s")
    print(f"ppo_update_minibatches {stats['updates']} steps")


if __name__ == "__main__":
    main()
