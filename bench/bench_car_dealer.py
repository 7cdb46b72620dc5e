"""Car Dealer generation throughput: scripted sellers against the embedded persona buyer.

Prints one figure per line as ``name value unit``: episodes per second and seller turns per
second with the behaviour seller (what ``lmrl generate car-dealer`` does), plus the behaviour and
strong sellers' deal rate and mean return (LMRL's data: success 0.53, return 0.562).

Usage: ``python bench/bench_car_dealer.py [--episodes 1000]``
"""

from __future__ import annotations

import argparse
import statistics
import time

import envs


def run(policy: str, episodes: int) -> tuple[float, float, float, float]:
    """(episodes/s, turns/s, success rate, mean return) over seeds 0..episodes-1."""
    task = envs.make("car-dealer")
    turns, wins, returns = 0, 0, []
    t0 = time.perf_counter()
    for seed in range(episodes):
        ep = envs.run_episode(task, envs.make_policy("car-dealer", policy), seed)
        turns += len(ep.transitions)
        wins += bool(ep.transitions[-1].info.get("success"))
        returns.append(ep.total_return)
    dt = time.perf_counter() - t0
    return episodes / dt, turns / dt, wins / episodes, statistics.mean(returns)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=1000)
    args = ap.parse_args()
    eps, tps, rate, ret = run("behaviour", args.episodes)
    print(f"car_dealer_behaviour_episodes_per_s {eps:.1f} episodes/s")
    print(f"car_dealer_behaviour_turns_per_s {tps:.1f} turns/s")
    print(f"car_dealer_behaviour_success {rate:.3f} fraction")
    print(f"car_dealer_behaviour_mean_return {ret:.3f} reward")
    _, _, rate, ret = run("strong", args.episodes)
    print(f"car_dealer_strong_success {rate:.3f} fraction")
    print(f"car_dealer_strong_mean_return {ret:.3f} reward")


if __name__ == "__main__":
    main()
