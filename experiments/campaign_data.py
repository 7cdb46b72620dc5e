"""The data stage of ``experiments/gpu_campaign.py``: each task's behaviour episodes generated in
shards by ``lmrl generate`` processes side by side (one per core), then merged into one store per
task by ``lmrl merge`` (the three merges side by side)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from campaign_worker import popen

TASKS = {"twenty-questions": 100_000, "guess-city": 100_000, "car-dealer": 19_000}
"""LMRL's dataset sizes (Table 1)."""


def _lmrl(*argv: str) -> list[str]:
    import sys

    return [sys.executable, "-m", "lmrl_tui", *argv]


def _wait(procs, clock, margin: float) -> bool:
    """Wait for ``procs``; kill them all when the deadline (less ``margin`` s) comes (False)."""
    import subprocess

    for p in procs:
        try:
            p.wait(timeout=max(clock.left() - margin, 0.01))
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            return False
    return True


def shards(episodes: int, n: int) -> list[tuple[int, int]]:
    """(first episode, count) of ``n`` near-equal shards of ``episodes``."""
    n = max(1, min(n, episodes))
    size, extra = divmod(episodes, n)
    out, first = [], 0
    for k in range(n):
        count = size + (k < extra)
        out.append((first, count))
        first += count
    return out


def make_data(args, clock, work: Path, log) -> dict[str, Any]:
    """Stage 1: every task's store (``work/data/TASK.db``), the shards generated side by side."""
    from training.reproduce.recipes import DATA_SEED, recipe

    data = work / "data"
    todo = [t for t in args.tasks if not (data / f"{t}.json").exists()]
    done = {t: json.loads((data / f"{t}.json").read_text()) for t in args.tasks if t not in todo}
    if not todo:
        return done
    sizes = {t: args.episodes.get(t, TASKS[t]) for t in todo}
    total = sum(sizes.values())
    jobs: list[tuple[str, Path, list[str]]] = []
    for t in todo:
        opts = {**recipe(t).options, **recipe(t).data_options}
        n = max(1, round(args.jobs * sizes[t] / total))
        for k, (first, count) in enumerate(shards(sizes[t], n)):
            db = data / f"{t}-{k}.db"
            db.unlink(missing_ok=True)
            argv = ["--db", str(db), "generate", t, "--episodes", str(count)]
            argv += ["--seed", str(DATA_SEED + first), "--policy", "behaviour", "--quiet"]
            argv += [x for k_, v in sorted(opts.items()) for x in ("--option", f"{k_}={v}")]
            jobs.append((t, db, argv))
    log(f"data: {total:,} episodes of {', '.join(todo)} in {len(jobs)} processes")
    t0 = time.monotonic()
    running: list = []
    queue, complete = list(jobs), True
    while queue or running:
        running = [p for p in running if p.poll() is None]
        while queue and len(running) < args.jobs:
            t, db, argv = queue.pop(0)
            running.append(popen(_lmrl(*argv), work / "logs" / f"generate-{db.stem}.log"))
        if clock.used() > args.data_share * clock.budget:  # the rest is for training
            for p in running:
                p.kill()
            log(
                f"data: stopped at the stage's share of the budget; {len(queue)} shards not started"
            )
            queue, running, complete = [], [], False
        time.sleep(0.2)
    gen_s = time.monotonic() - t0
    merges = []
    for t in todo:
        parts = [str(db) for t_, db, _ in jobs if t_ == t and db.exists()]
        (data / f"{t}.db").unlink(missing_ok=True)
        cmd = _lmrl("merge", "--into", str(data / f"{t}.db"), *parts)
        merges.append(popen(cmd, work / "logs" / f"merge-{t}.log"))
    if not _wait(merges, clock, args.reserve_s) or any(p.returncode for p in merges):
        raise SystemExit(f"error: merging the shards failed; see {work / 'logs'}")
    for t in todo:
        rec = {
            "task": t,
            "episodes": sizes[t],
            "shards": sum(1 for j in jobs if j[0] == t),
            "first_seed": DATA_SEED,
            "generate_s": round(gen_s, 1),
            "complete": complete,  # False: the shards killed at the stage's share hold fewer
            "wall_s": round(time.monotonic() - t0, 1),
            "command": "lmrl --db SHARD.db generate "
            + " ".join(next(j[2] for j in jobs if j[0] == t)[3:]),
        }
        (data / f"{t}.json").write_text(json.dumps(rec, indent=1) + "\n")
        done[t] = rec
        for t_, db, _ in jobs:
            if t_ == t:
                db.unlink(missing_ok=True)
    return done
