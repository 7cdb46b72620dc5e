"""What the Gymnasium wrapper (``envs/gym.py``) costs: steps/s of the raw task against the same
task through ``gymnasium.make`` (its OrderEnforcing and PassiveEnvChecker wrappers included) and
through the bare env (``env.unwrapped``), for maze-fo and Wordle under uniform random legal
actions (the same action sequence on every side).

Prints ``name value unit`` lines:

    python bench/bench_gym.py [--seconds 2]
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

import gymnasium

import envs
import envs.gym


def _actions(task_id: str, n: int) -> list[str]:
    pool = envs.make(task_id).legal_actions()
    assert pool, f"{task_id} lists no actions"
    rng = random.Random(0)
    return [rng.choice(pool) for _ in range(n)]


def _rate(
    reset: Callable[[int], object], step: Callable[[str], tuple], actions: list[str], seconds: float
) -> float:
    """Steps per second of ``step`` over ``actions`` (cycled), resetting at each episode's end
    (episode seeds 0, 1, 2, ...; resets count in the time, as they do in training)."""
    steps, seed = 0, 0
    reset(seed)
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        for action in actions:
            result = step(action)
            steps += 1
            if result[2] or result[3]:
                seed += 1
                reset(seed)
    return steps / (time.perf_counter() - start)


def bench(task_id: str, seconds: float) -> dict[str, float]:
    actions = _actions(task_id, 1000)
    task = envs.make(task_id)
    made = gymnasium.make(envs.gym.gym_id(task_id))
    bare = made.unwrapped
    sides: dict[str, tuple[Callable[[int], object], Callable[[str], tuple]]] = {
        "raw": (task.reset, task.step),
        # A Gymnasium user seeds the first reset only; the later ones draw from the env's generator.
        "gym_make": (lambda s: made.reset(seed=s if s == 0 else None), made.step),
        "gym_unwrapped": (lambda s: bare.reset(seed=s if s == 0 else None), bare.step),
    }
    rates = dict.fromkeys(sides, 0.0)
    for _ in range(3):  # interleaved, best of three: the machine's load moves under a long run
        for side, (reset, step) in sides.items():
            rates[side] = max(rates[side], _rate(reset, step, actions, seconds / 3))
    made.close()
    task.close()
    return rates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="time per measurement")
    args = parser.parse_args()
    for task_id in ("maze-fo", "wordle"):
        rates = bench(task_id, args.seconds)
        for side, rate in rates.items():
            print(f"gym_{task_id}_{side}_steps_per_s {rate:.0f} steps/s")
        print(f"gym_{task_id}_make_over_raw {rates['gym_make'] / rates['raw']:.3f} ratio")


if __name__ == "__main__":
    main()
