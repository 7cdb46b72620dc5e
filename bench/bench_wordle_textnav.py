"""Speed of the Wordle and Text-Nav engines and their behaviour policies.

Prints ``name value unit`` lines: env steps/s under uniform random actions (Wordle: uniform over
the allowed guesses; Text-Nav: uniform over the admissible commands), episodes/s with the
behaviour policy (through ``envs.run_episode``), and the strong policies' mean return.

    python bench/bench_wordle_textnav.py [--seconds 2] [--strong-games 1000] [--vocab-file F]

``--vocab-file`` plays Wordle on another list (e.g. LMRL-Gym's 431 words, answers = guesses).
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

import envs


def random_steps(task_id: str, seconds: float, fixed_actions: bool, **opts) -> float:
    task = envs.make(task_id, **opts)
    rng = random.Random(0)
    actions = task.legal_actions() if fixed_actions else None
    steps = 0
    seed = 0
    task.reset(seed)
    deadline = time.perf_counter() + seconds
    start = time.perf_counter()
    while True:
        for _ in range(1000):
            pool = actions if actions is not None else task.legal_actions()
            st = task.step(pool[rng.randrange(len(pool))])
            steps += 1
            if st.terminated or st.truncated:
                seed += 1
                task.reset(seed)
        if time.perf_counter() >= deadline:
            break
    return steps / (time.perf_counter() - start)


def policy_episodes(
    task_id: str, policy: str, seconds: float, **opts
) -> tuple[float, float, float]:
    task = envs.make(task_id, **opts)
    returns = []
    start = time.perf_counter()
    seed = 0
    while time.perf_counter() - start < seconds:
        ep = envs.run_episode(task, envs.make_policy(task_id, policy), seed)
        returns.append(ep.total_return)
        seed += 1
    elapsed = time.perf_counter() - start
    return len(returns) / elapsed, statistics.mean(returns), len(returns)


def strong_return(task_id: str, games: int, **opts) -> float:
    task = envs.make(task_id, **opts)
    total = 0.0
    for seed in range(games):
        total += envs.run_episode(task, envs.make_policy(task_id, "strong"), seed).total_return
    return total / games


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=2.0, help="time per measurement")
    ap.add_argument(
        "--strong-games", type=int, default=1000, help="games for the strong mean return"
    )
    ap.add_argument("--vocab-file", help="Wordle word list (answers and guesses)")
    args = ap.parse_args()
    wopts = {"vocab_file": args.vocab_file} if args.vocab_file else {}
    opts = {"wordle": wopts, "wordle-lmrl": wopts, "textnav-fo": {}, "textnav-po": {}}
    for task_id in ("wordle", "wordle-lmrl"):
        print(
            f"{task_id}_random_steps_per_s {random_steps(task_id, args.seconds, True, **wopts):.0f} steps/s"
        )
    for task_id in ("textnav-fo", "textnav-po"):
        print(
            f"{task_id}_random_steps_per_s {random_steps(task_id, args.seconds, False):.0f} steps/s"
        )
    for task_id in ("wordle", "wordle-lmrl", "textnav-fo", "textnav-po"):
        rate, mean, n = policy_episodes(task_id, "behaviour", args.seconds, **opts[task_id])
        print(f"{task_id}_behaviour_episodes_per_s {rate:.0f} episodes/s")
        print(f"{task_id}_behaviour_mean_return {mean:.3f} return")
    for task_id in ("wordle", "wordle-lmrl"):
        start = time.perf_counter()
        mean = strong_return(task_id, args.strong_games, **wopts)
        rate = args.strong_games / (time.perf_counter() - start)
        print(f"{task_id}_strong_mean_return_{args.strong_games}_games {mean:.3f} return")
        print(f"{task_id}_strong_episodes_per_s {rate:.0f} episodes/s")


if __name__ == "__main__":
    main()
