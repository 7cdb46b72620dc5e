"""The datasets of ``lmrl reproduce``: the task's behaviour policy from the data seeds, into the
reproduction's store. One dataset for every training seed (``OUT/dataset.json``), or with
``--fresh-data`` one per training seed, each in its own store (``OUT/store-sN.db``, recorded in
``OUT/dataset-sN.json``) from its own data seeds ``DATA_SEED + N·FRESH_STRIDE ..``: a CI over
training seeds then also covers the draw of the data."""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from data.store import store_in
from training.args import task_option
from training.errors import TrainingError
from training.reproduce.recipes import DATA_SEED, TaskRecipe
from training.reproduce.runners import shown_command

FRESH_STRIDE = 100_000
"""Data seeds of training seed N's fresh dataset start at ``DATA_SEED + N * FRESH_STRIDE``."""
ROLLOUT_SEED = 1_000_000
"""Online rollouts start here (training.online); data seeds stay below it."""


def data_seed(seed: int | None) -> int:
    """The first data seed of training seed ``seed``'s fresh dataset (None: the shared one)."""
    return DATA_SEED if seed is None else DATA_SEED + seed * FRESH_STRIDE


def check_fresh(seeds: int, episodes: int) -> None:
    """A TrainingError unless ``seeds`` fresh datasets of ``episodes`` fit between the data seeds
    and the online rollouts' (each seed's below the next seed's)."""
    if episodes > FRESH_STRIDE or data_seed(seeds - 1) + episodes > ROLLOUT_SEED:
        raise TrainingError(
            f"--fresh-data: {seeds} datasets of {episodes} episodes would reach the online "
            f"rollouts' seeds ({ROLLOUT_SEED}) or overlap (at most {FRESH_STRIDE} episodes each)"
        )


def typed_options(options: dict[str, str]) -> dict[str, Any]:
    """The recipe's ``key=value`` options as the task takes them (ints, floats, booleans)."""
    return dict(task_option(f"{k}={v}") for k, v in options.items())


def store_for(out: Path, seed: int | None) -> Path:
    """The store a run of training seed ``seed`` reads (None, or no fresh data: the shared one)."""
    return store_in(out) if seed is None else out / f"store-s{seed}.db"


def make_dataset(
    out: Path,
    task: str,
    recipe: TaskRecipe,
    episodes: int,
    seed: int | None,
    log: Callable[[str], None],
) -> dict[str, Any]:
    """Generate the dataset of training seed ``seed`` (None: the one every seed shares) unless its
    marker says it is done; its record."""
    marker = out / ("dataset.json" if seed is None else f"dataset-s{seed}.json")
    first = data_seed(seed)
    if seed is not None:
        check_fresh(seed + 1, episodes)
    if marker.exists():
        done = json.loads(marker.read_text())
        if done.get("episodes") == episodes and done.get("seed") == first:
            return done
        raise TrainingError(
            f"{out} holds a dataset of another size ({done.get('episodes')} episodes); "
            "use another --out for this budget"
        )
    options = {**recipe.options, **recipe.data_options}
    db = store_for(out, seed)
    argv = [
        "--db",
        str(db),
        "generate",
        task,
        "--episodes",
        str(episodes),
        "--seed",
        str(first),
        "--policy",
        "behaviour",
        "--quiet",
    ]
    for k, v in sorted(options.items()):
        argv += ["--option", f"{k}={v}"]
    which = "" if seed is None else f" for training seed {seed}"
    log(f"[{task}] dataset{which}: {episodes} episodes from seeds {first}..")
    import envs
    from data.generate import generate
    from data.store import Store
    from envs.players.agents import make_agent

    t0 = time.time()
    store = Store(str(db))
    try:
        agent = make_agent(task, "behaviour", role=envs.spec(task).roles[0])
        res = generate(store, task, agent, episodes, seed=first, options=typed_options(options))
    finally:
        store.close()
    done = {
        "episodes": episodes,
        "seed": first,
        "options": options,
        "command": shown_command(argv, out),
        "wall_s": round(time.time() - t0, 1),
        "mean_return": res.mean_return,
        "success_rate": res.success_rate,
    }
    marker.write_text(json.dumps(done, indent=1) + "\n")
    return done


def pooled(per_seed: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The report's dataset line for fresh datasets: their mean return and success (with the spread
    over the draws), the total wall time, and each one's record."""
    rets = [d["mean_return"] for d in per_seed]
    wins = [d["success_rate"] for d in per_seed]
    n = per_seed[0]["episodes"]
    return {
        "episodes": n,
        "fresh_per_seed": True,
        "per_seed": list(per_seed),
        "mean_return": statistics.fmean(rets),
        "success_rate": statistics.fmean(wins),
        "return_range": [min(rets), max(rets)],
        "success_range": [min(wins), max(wins)],
        "wall_s": round(sum(d["wall_s"] for d in per_seed), 1),
        "seeds": "; ".join(f"{d['seed']}..{d['seed'] + n - 1}" for d in per_seed),
        "command": per_seed[0]["command"],
    }
