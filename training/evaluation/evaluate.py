"""Evaluation: mean return with a 95% confidence interval, success rate, normalised scores (LMRL's
constants; and the store's own: dataset average = 50, strong policy = 100), the task's exact
evaluation where its spec offers one (maze-fo: dynamic programming, the policy depends only on the
cell), and the store's ``evaluations`` table.

Sampled evaluation plays its episodes side by side (:func:`play_episodes`: ``batch_size`` task
instances, one batched forward per turn for all unfinished episodes, :mod:`training.evaluation.play_many`); a
checkpoint's episodes are the same as one at a time (``batch_size=1``, the reference) for the same
seeds, as each episode draws from a generator seeded from its own seed."""

from __future__ import annotations

import functools
import json
import math
import statistics
from collections.abc import Sequence
from typing import Any

import envs
from envs.core import NormConstants, episode_success, normalised_score


def mean_ci(values: Sequence[float]) -> tuple[float, float, float]:
    """(mean, low, high) of a normal-approximation 95% interval."""
    n = len(values)
    mean = math.fsum(values) / n
    if n < 2:
        return mean, mean, mean
    half = 1.96 * statistics.stdev(values) / math.sqrt(n)
    return mean, mean - half, mean + half


def is_success(task, ep: envs.Episode) -> bool:
    """The task's own success flag (see envs.core.episode_success); tasks that define none count
    an episode that terminated (not cut by the time limit) as a success."""
    return spec_success(task.spec, ep)


def spec_success(spec, ep) -> bool:
    """:func:`is_success` given the task's spec."""
    last = ep.transitions[-1] if ep.transitions else None
    s = episode_success(spec, last.info if last else None, ep.total_return)
    if s is not None:
        return s
    return bool(last and last.terminated and not last.truncated)


DEFAULT_BATCH = 64
"""Episodes ``lmrl eval`` plays side by side unless ``--batch-size`` says otherwise (64: a tiny
checkpoint's 100 Twenty Questions episodes in 1.87 s against 2.09 s at 32, the tail of 36 episodes
sharing a batch instead of 4 playing alone; ``bench/bench_eval.py``)."""


def play_episodes(
    task_id: str,
    agent,
    episodes: int,
    seed: int = 0,
    task_options: dict | None = None,
    *,
    batch_size: int = DEFAULT_BATCH,
    progress: bool | None = None,
    max_steps: int | None = None,
) -> list:
    """The episodes from seeds ``seed .. seed + episodes - 1``, in seed order.

    An agent with ``act_batch`` (a checkpoint) plays ``batch_size`` episodes side by side, one
    batched forward per turn for all of them (:func:`training.evaluation.play_many.play`); ``batch_size`` 1, or
    an agent without it, plays them one at a time (:func:`envs.run_episode`, the reference). Each
    episode samples from its own generator seeded from its seed, so the batch size does not change
    what it plays. ``progress``: a bar of finished episodes on stderr (None: when stderr is a
    terminal). ``max_steps`` caps an episode's turns (default: :func:`envs.run_episode`'s)."""
    seeds = [seed + i for i in range(episodes)]
    bar = _bar(episodes, task_id, progress)
    try:
        if batch_size > 1 and hasattr(agent, "act_batch") and episodes > 1:
            return _batched(task_id, agent, seeds, task_options, batch_size, bar, max_steps)
        task = envs.make(task_id, **(task_options or {}))
        out = []
        try:
            for s in seeds:
                out.append(envs.run_episode(task, agent, seed=s, max_steps=max_steps))
                if bar is not None:
                    bar.update(1)
        finally:
            task.close()
        return out
    finally:
        if bar is not None:
            bar.close()


def _batched(
    task_id: str,
    agent,
    seeds: list[int],
    task_options: dict | None,
    batch_size: int,
    bar,
    max_steps: int | None,
) -> list:
    from training.evaluation.play_many import TaskPool, play

    gens = [agent.generator_for(s) for s in seeds]
    memos: list[dict] = [{} for _ in seeds]  # what the agent keeps per episode (its prompt's cache)

    def act(idx: list[int], tasks: list) -> tuple[list[str], list[bool]]:
        return agent.act_batch(tasks, [gens[i] for i in idx], [memos[i] for i in idx])

    def done(i: int, _ep) -> None:
        memos[i] = {}
        if bar is not None:
            bar.update(1)

    with TaskPool(task_id, min(batch_size, len(seeds)), task_options) as pool:
        return play(pool.tasks, task_id, seeds, act, refill=True, max_steps=max_steps, on_done=done)


def _bar(total: int, task_id: str, progress: bool | None):
    import sys

    if progress is None:
        progress = sys.stderr.isatty()
    if not progress:
        return None
    from tqdm.auto import tqdm

    return tqdm(
        total=total,
        desc=f"eval {task_id}",
        unit="episode",
        leave=False,
        file=sys.stderr,
        mininterval=0,
        miniters=1,
    )  # an episode takes long enough to draw each one


def sampled(
    task_id: str,
    agent,
    episodes: int,
    seed: int = 0,
    task_options: dict | None = None,
    *,
    batch_size: int = DEFAULT_BATCH,
    progress: bool | None = False,
) -> dict[str, Any]:
    """Play ``episodes`` episodes from seeds ``seed ..`` (:func:`play_episodes`); returns
    mean/CI/success."""
    eps = play_episodes(
        task_id, agent, episodes, seed, task_options, batch_size=batch_size, progress=progress
    )
    spec = envs.spec(task_id, **(task_options or {}))
    rets = [ep.total_return for ep in eps]
    wins = sum(spec_success(spec, ep) for ep in eps)
    mean, lo, hi = mean_ci(rets)
    return {
        "episodes": episodes,
        "mean_return": mean,
        "ci_low": lo,
        "ci_high": hi,
        "success_rate": wins / max(episodes, 1),
        "method": "sampled",
    }


def exact_result(task_id: str, agent, task_options: dict | None = None) -> dict[str, Any]:
    """The task's exact evaluation of ``agent`` (its ``action_distribution``), e.g. maze-fo's DP."""
    task = envs.make(task_id, **(task_options or {}))
    try:
        return task.exact_evaluation(agent.action_distribution)
    finally:
        task.close()


def supports_exact(task_id: str, task_options: dict | None = None) -> bool:
    """Whether the task (with these options) can be evaluated exactly (its spec says so)."""
    return envs.spec(task_id, **(task_options or {})).exact_evaluation


def store_average(store, task_id: str, task_options: dict | None = None) -> float | None:
    """The mean return of the logged data (finished episodes, not agents' rollouts)."""
    from data.stats import logged_return

    return logged_return(store, task_id, "avg", task_options)


def store_minimum(store, task_id: str, task_options: dict | None = None) -> float | None:
    """The lowest return of the logged data."""
    from data.stats import logged_return

    return logged_return(store, task_id, "min", task_options)


def strong_mean(task_id: str, episodes: int = 32, task_options: dict | None = None) -> float | None:
    """Mean return of the task's "strong" scripted policy (exact where the task knows it)."""
    return _strong_mean(task_id, episodes, json.dumps(task_options or {}, sort_keys=True))


@functools.lru_cache(maxsize=32)
def _strong_mean(task_id: str, episodes: int, options_json: str) -> float | None:
    options = json.loads(options_json)
    try:
        pol = envs.make_policy(task_id, "strong")
    except (envs.UnknownPolicy, envs.UnknownTask):
        return None
    if supports_exact(task_id, options):
        task = envs.make(task_id, **options)
        try:
            best = task.optimal_mean_return()
        finally:
            task.close()
        if best is not None:
            return best
    return sampled(task_id, pol, episodes, task_options=options)["mean_return"]


def lmrl_score(mean_return: float, norm: NormConstants | None) -> float | None:
    """LMRL's normalised score of a mean return, as its Table 2 reports it: piecewise linear
    through (min, 0), (dataset average, 50), (max, 100), negatives clipped to 0 (the paper's
    GPT-4 endgames return of -22.8 is 0). The constants' min is the worst return of LMRL's own
    data, not of every policy: chess and endgames go on after an illegal move (-1 each, up to
    401 of them; LMRL's ``ChessEnv`` ends only on the game's end or the move cap) and the maze's
    invalid actions cost -4, so a poor agent's return lies below it. None without constants."""
    if norm is None:
        return None
    return max(0.0, norm.normalise(mean_return))


def normalise(
    result: dict[str, Any],
    task_id: str,
    store=None,
    strong: float | None = None,
    task_options: dict | None = None,
) -> dict[str, Any]:
    """Add ``normalised_lmrl`` and ``normalised_store`` (None where a constant is missing)."""
    spec = envs.spec(task_id, **(task_options or {}))
    mean = result["mean_return"]
    out = dict(result)
    out["normalised_lmrl"] = lmrl_score(mean, spec.norm)
    avg = store_average(store, task_id, task_options) if store is not None else None
    lo = spec.norm.min if spec.norm else None
    if lo is None and store is not None:
        lo = store_minimum(store, task_id, task_options)
    hi = strong if strong is not None else strong_mean(task_id, task_options=task_options)
    out["store_average"], out["strong_mean"] = avg, hi
    ok = None not in (avg, lo, hi) and lo <= avg <= hi
    out["normalised_store"] = normalised_score(mean, lo, avg, hi) if ok else None
    return out


def evaluate(
    agent,
    task_id: str,
    episodes: int = 32,
    *,
    seed: int = 0,
    exact: bool | None = None,
    store=None,
    strong: float | None = None,
    task_options: dict | None = None,
    batch_size: int = DEFAULT_BATCH,
    progress: bool | None = False,
) -> dict[str, Any]:
    """Evaluate an agent; exactly where the task offers it and the agent exposes action
    distributions, else by sampling ``episodes`` episodes, ``batch_size`` side by side
    (:func:`play_episodes`)."""
    use_exact = supports_exact(task_id, task_options) and hasattr(agent, "action_distribution")
    if exact is not None:
        use_exact = use_exact and exact
    if use_exact:
        res = exact_result(task_id, agent, task_options)
    else:
        res = sampled(
            task_id, agent, episodes, seed, task_options, batch_size=batch_size, progress=progress
        )
    return normalise(res, task_id, store, strong, task_options)


def record_evaluation(
    store, task_id: str, policy: str, result: dict[str, Any], checkpoint_id: int | None = None
) -> int:
    """Insert a row in the store's ``evaluations`` table (see :func:`data.runs.add_evaluation`)."""
    from data.runs import add_evaluation

    return add_evaluation(store, task_id, policy, result, checkpoint_id)
