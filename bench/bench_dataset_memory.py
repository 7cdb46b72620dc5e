"""Memory and time of building a run's training data (``lmrl train``'s setup, before step 1).

Logs ``--episodes`` behaviour episodes of a task in a temporary store (data seeds 100000..), then
runs the offline loop's ``prepare`` (:mod:`training.offline.prepare`: episodes -> windows ->
tokenizer -> packed tensors, as ``lmrl train`` does) for ``--windows`` and prints ``name value
unit`` lines: windows, tokens, the build's wall time and the process's peak resident memory. One
process per call, so the peak is this build's own. The default is the case that ran out of memory: maze-po's history windows
(141k windows of up to 512 tokens from 1,500 episodes).

    .venv/bin/python bench/bench_dataset_memory.py [--task maze-po] [--episodes 1500] [--windows history]
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", default="maze-po")
    ap.add_argument("--episodes", type=int, default=1500)
    ap.add_argument("--windows", default="history", choices=["episode", "step", "history"])
    ap.add_argument("--algo", default="ilql")
    args = ap.parse_args()

    import envs
    from data.datasets import DatasetQuery
    from data.generate import generate
    from data.store import Store
    from training.config import TrainConfig, resolve
    from training.offline.prepare import prepare

    with tempfile.TemporaryDirectory() as tmp:
        store = Store(str(Path(tmp) / "data.db"))
        try:
            generate(
                store,
                args.task,
                envs.make_policy(args.task, "behaviour"),
                args.episodes,
                seed=100000,
            )
            given = dict(windows=args.windows, max_steps=1, eval_episodes=0, progress=False)
            cfg = resolve(TrainConfig(algo=args.algo, task=args.task, **given), set(given))
            t0 = time.perf_counter()
            ds = prepare(cfg, store, DatasetQuery(task=args.task)).dataset
            wall = time.perf_counter() - t0
        finally:
            store.close()
    name = f"data_{args.task}_{args.windows}"
    print(f"# {args.task}: {args.episodes} behaviour episodes, {args.windows} windows, {args.algo}")
    print(f"{name}_windows {len(ds)} windows")
    print(f"{name}_tokens {ds.n_tokens} tokens")
    print(f"{name}_build_s {wall:.1f} s")
    print(f"{name}_peak_rss {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} MiB")


if __name__ == "__main__":
    main()
