"""Evaluation wall time, one episode at a time vs side by side (issue #12), on CPU or GPU.

For each task (twenty-questions and textnav-fo by default) it logs behaviour episodes in a
temporary store, trains a ``tiny`` BC checkpoint on them for a few steps (as ``lmrl train bc``
does: BPE tokenizer, 2 layers x 64), then evaluates it on the same seeds twice in this run: with
``batch_size=1`` (the sequential reference) and with ``--batch-size`` episodes side by side. It
prints ``name value unit`` lines: both wall times (the median of ``--repeats`` runs each), their
ratio (target >= 10), and whether the two evaluations played the same episodes.

``--baseline REV`` also times whole ``lmrl eval`` processes on the same checkpoint: the code of git
revision ``REV`` (extracted with ``git archive`` into a temporary folder; e.g. ``6236c7a``, the last
commit before batched evaluation, whose evaluation played one episode at a time without keeping
caches between turns) against this checkout's ``lmrl eval --batch-size``, each with its start-up,
one thread. It prints both times, their ratio and both mean returns (equal under greedy decoding).

    .venv/bin/python bench/bench_eval.py [--episodes 50] [--batch-size 64] [--repeats 3] [--tasks twenty-questions textnav-fo]
    .venv/bin/python bench/bench_eval.py --tasks twenty-questions --decoding greedy --baseline 6236c7a
    .venv/bin/python bench/bench_eval.py --tasks twenty-questions --repeats 1 --generate

``--generate`` also times ``lmrl generate --policy CHECKPOINT`` (:func:`data.generate.generate`) on
the same checkpoint and seeds, one episode at a time against :data:`data.generate.SIDE_BY_SIDE` at
once, and says whether both stored the same episodes.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

SHORT = {"twenty-questions": "20q", "textnav-fo": "textnav"}


def checkpoint(task_id: str, root: Path, episodes: int, steps: int) -> str:
    """A tiny BC checkpoint trained ``steps`` steps on ``episodes`` behaviour episodes."""
    from data.datasets import DatasetQuery
    from training.config import TrainConfig, resolve
    from training.offline.loop import train
    from training.offline.toy import maze_store

    store = maze_store(root / f"{task_id}.db", episodes=episodes, task_id=task_id)
    given = dict(max_steps=steps, batch_size=16, eval_episodes=0, progress=False, log_every=10)
    cfg = resolve(TrainConfig(algo="bc", task=task_id, **given), set(given))
    try:
        return str(train(cfg, store, DatasetQuery(task=task_id), root / task_id)["checkpoint"])
    finally:
        store.close()


def timed(task_id: str, agent, episodes: int, batch_size: int) -> tuple[float, list]:
    from training.evaluation.evaluate import play_episodes

    t0 = time.perf_counter()
    eps = play_episodes(task_id, agent, episodes, 0, batch_size=batch_size, progress=False)
    return time.perf_counter() - t0, eps


def median_of(
    repeats: int, task_id: str, agent, episodes: int, batch_size: int
) -> tuple[float, list]:
    """The median wall time of ``repeats`` :func:`timed` runs (each starting with the decoder's
    score cache empty, so no run reuses another's work) and the episodes of the last."""
    times, eps = [], []
    for _ in range(max(1, repeats)):
        agent.decoder._cache.clear()
        t, eps = timed(task_id, agent, episodes, batch_size)
        times.append(t)
    return statistics.median(times), eps


def generated(
    task_id: str, agent, episodes: int, side_by_side: int, db: Path
) -> tuple[float, list]:
    """``lmrl generate``'s wall time for ``episodes`` episodes of ``agent`` (``side_by_side`` at a
    time; 1: one at a time, as before) and the stored (seed, actions) per episode."""
    import data.generate as gen
    from data.store import Store

    gen.SIDE_BY_SIDE = side_by_side
    store = Store(db)
    try:
        t0 = time.perf_counter()
        gen.generate(store, task_id, agent, episodes, seed=0)
        wall = time.perf_counter() - t0
        eps = sorted(store.recent_episodes(episodes), key=lambda e: e["id"])
        rows = [(e["seed"], [s["action"] for s in store.steps(e["id"])]) for e in eps]
    finally:
        store.close()
    return wall, rows


def source_at(rev: str, root: Path) -> Path:
    """The tracked files of git revision ``rev`` in ``root/rev`` (``git archive``)."""
    folder = root / f"src-{rev}"
    tar = root / f"{rev}.tar"
    subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", "-o", str(tar), rev], check=True
    )
    with tarfile.open(tar) as t:
        t.extractall(folder, filter="data")
    return folder


def eval_process(
    source: Path, ckpt: str, db: Path, episodes: int, threads: int, extra: list[str]
) -> tuple[float, dict]:
    """A whole ``lmrl eval`` process of the code in ``source``: (wall seconds, its JSON result)."""
    env = {**os.environ, "PYTHONPATH": str(source), "OMP_NUM_THREADS": str(threads)}
    cmd = [
        sys.executable,
        "-m",
        "lmrl_tui",
        "--db",
        str(db),
        "eval",
        ckpt,
        "--episodes",
        str(episodes),
        "--seed",
        "0",
        *extra,
    ]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return time.perf_counter() - t0, json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", nargs="+", default=["twenty-questions", "textnav-fo"])
    ap.add_argument("--episodes", type=int, default=50, help="episodes evaluated each way")
    ap.add_argument("--batch-size", type=int, default=None, help="default: lmrl eval's (64)")
    ap.add_argument(
        "--train-episodes", type=int, default=200, help="behaviour episodes to train on"
    )
    ap.add_argument("--steps", type=int, default=300, help="BC steps")
    ap.add_argument(
        "--decoding", default=None, help="e.g. rerank (default: the checkpoint's, sample for BC)"
    )
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=3, help="runs each way; their median is printed")
    ap.add_argument(
        "--generate",
        action="store_true",
        help="also time lmrl generate --policy CHECKPOINT: one episode at a time vs side by side",
    )
    ap.add_argument(
        "--baseline",
        metavar="REV",
        default=None,
        help="also time whole lmrl eval processes: git revision REV's against this checkout's",
    )
    args = ap.parse_args()

    import torch

    from training.agents.checkpoint_agent import load_agent
    from training.evaluation.evaluate import DEFAULT_BATCH

    args.batch_size = args.batch_size or DEFAULT_BATCH
    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        for task_id in args.tasks:
            name = SHORT.get(task_id, task_id) + (f"_{args.decoding}" if args.decoding else "")
            agent = load_agent(
                checkpoint(task_id, Path(tmp), args.train_episodes, args.steps),
                decoding=args.decoding,
            )
            seq, eps1 = median_of(args.repeats, task_id, agent, args.episodes, 1)
            bat, epsb = median_of(args.repeats, task_id, agent, args.episodes, args.batch_size)
            same = [e.total_return for e in eps1] == [e.total_return for e in epsb] and [
                [t.action for t in e.transitions] for e in eps1
            ] == [[t.action for t in e.transitions] for e in epsb]
            turns = sum(len(e.transitions) for e in epsb)
            print(
                f"# {task_id}: {args.episodes} episodes, decoding {agent.decoder.decoding}, "
                f"median of {args.repeats} runs each way"
            )
            print(f"eval_{name}_turns {turns} turns")
            print(f"eval_{name}_sequential_s {seq:.2f} s")
            print(f"eval_{name}_batched_s {bat:.2f} s")
            print(f"eval_{name}_batched_speedup {seq / bat:.1f} x")
            print(f"eval_{name}_same_episodes {int(same)} bool")
            if args.generate:
                from data.generate import SIDE_BY_SIDE

                one, rows1 = generated(
                    task_id, agent, args.episodes, 1, Path(tmp) / f"{name}-gen1.db"
                )
                many, rowsb = generated(
                    task_id, agent, args.episodes, SIDE_BY_SIDE, Path(tmp) / f"{name}-genb.db"
                )
                print(f"generate_{name}_sequential_s {one:.2f} s")
                print(f"generate_{name}_side_by_side_s {many:.2f} s")
                print(f"generate_{name}_speedup {one / many:.1f} x")
                print(f"generate_{name}_same_episodes {int(rows1 == rowsb)} bool")
            if args.baseline:
                base = source_at(args.baseline, Path(tmp))
                dec = ["--decoding", args.decoding] if args.decoding else []
                ckpt = agent.meta["path"]
                old_s, old = eval_process(
                    base, ckpt, Path(tmp) / f"{name}-old.db", args.episodes, args.threads, dec
                )
                new_s, new = eval_process(
                    ROOT,
                    ckpt,
                    Path(tmp) / f"{name}-new.db",
                    args.episodes,
                    args.threads,
                    [*dec, "--batch-size", str(args.batch_size)],
                )
                print(f"eval_{name}_process_at_{args.baseline}_s {old_s:.2f} s")
                print(f"eval_{name}_process_batched_s {new_s:.2f} s")
                print(f"eval_{name}_process_speedup_over_{args.baseline} {old_s / new_s:.1f} x")
                print(f"eval_{name}_mean_return_at_{args.baseline} {old['mean_return']:.4f} return")
                print(f"eval_{name}_mean_return_batched {new['mean_return']:.4f} return")


if __name__ == "__main__":
    main()
